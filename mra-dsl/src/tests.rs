//! Unit tests of parse/check/expand on `proc_macro2` tokens (outside the compiler, where
//! span-locations gives lines and columns of the test source strings).

use crate::ast::{Levels, Loop, Memory, Operand, PrimKind, ThreadMap, Val};
use proc_macro2::TokenStream;

fn tokens(src: &str) -> TokenStream {
    src.parse().expect("test source must tokenize")
}

fn parse(src: &str) -> Levels {
    let levels: Levels = syn::parse2(tokens(src)).unwrap_or_else(|e| panic!("parse error: {e}"));
    crate::check::check(&levels).unwrap_or_else(|e| panic!("check error: {e}"));
    levels
}

/// The first error of parse+check: message, and the 1-based line and 0-based column of its
/// span's start; plus all messages.
fn error(src: &str) -> (String, usize, usize, Vec<String>) {
    let e = match syn::parse2::<Levels>(tokens(src)) {
        Err(e) => e,
        Ok(levels) => match crate::check::check(&levels) {
            Err(e) => e,
            Ok(()) => panic!("expected an error for:\n{src}"),
        },
    };
    let start = e.span().start();
    let all = e.into_iter().map(|e| e.to_string()).collect::<Vec<_>>();
    (all[0].clone(), start.line, start.column, all)
}

/// Asserts the first error's message contains `needle` and its span starts at the first
/// occurrence of `at` on line `line` of `src` (1-based).
#[track_caller]
fn assert_error(src: &str, needle: &str, line: usize, at: &str) {
    let (msg, l, c, all) = error(src);
    assert!(
        msg.contains(needle),
        "message {msg:?} lacks {needle:?} (all: {all:?})"
    );
    let text = src.lines().nth(line - 1).expect("line exists");
    let col = text
        .find(at)
        .unwrap_or_else(|| panic!("{at:?} not on line {line}: {text:?}"));
    assert_eq!(
        (l, c),
        (line, col),
        "error {msg:?} at {l}:{c}, expected {line}:{col} ({at:?})"
    );
}

const L3: &str = r#"
/// Each thread owns a whole output row:
///   acc[K] in registers.
///
/// Second paragraph.
level L3 "L3-regblk" {
    threads(128);
    bind(threads, rows);
    cache_read(B, shared, pad = 1);
    register_tile(cols);
    unroll(k);
    unroll(cols);
    workspace(global);
}
level copy "copy" { threads(tune = [64, 128, 256,], default = 128); copy(vector = 2,); }
"#;

#[test]
fn parses_levels() {
    let levels = parse(L3);
    assert_eq!(levels.0.len(), 2);
    let l3 = &levels.0[0];
    assert_eq!(l3.number, Some(3));
    assert_eq!(l3.fn_name(), "l3");
    assert_eq!(l3.name.value(), "L3-regblk");
    assert_eq!(
        l3.summary,
        "Each thread owns a whole output row: acc[K] in registers. Second paragraph."
    );
    let names: Vec<_> = l3.prims.iter().map(|p| p.name()).collect();
    assert_eq!(
        names,
        [
            "threads",
            "bind",
            "cache_read",
            "register_tile",
            "unroll",
            "unroll",
            "workspace"
        ]
    );
    let lines: Vec<_> = l3
        .prims
        .iter()
        .map(|p| p.ident.span().start().line)
        .collect();
    assert_eq!(lines, [7, 8, 9, 10, 11, 12, 13]);
    assert!(matches!(l3.prims[1].kind, PrimKind::Bind { map, .. } if map.value == ThreadMap::Rows));
    match &l3.prims[2].kind {
        PrimKind::CacheRead {
            operand,
            into,
            pad: Some((_, pad)),
        } => {
            assert_eq!(
                (operand.value, into.value, pad.default_value()),
                (Operand::B, Memory::Shared, 1)
            );
        }
        _ => panic!("cache_read"),
    }
    assert!(matches!(l3.prims[5].kind, PrimKind::Unroll { loop_: l, by: None } if l.value == Loop::Cols));

    let copy = &levels.0[1];
    assert_eq!(
        (copy.number, copy.fn_name().as_str(), copy.summary.as_str()),
        (None, "copy", "")
    );
    match &copy.prims[0].kind {
        PrimKind::Threads(Val::Tune {
            choices, default, ..
        }) => {
            let c: Vec<u32> = choices.iter().map(|c| c.value).collect();
            assert_eq!((c, default.value), (vec![64, 128, 256], 128));
        }
        _ => panic!("threads"),
    }
    assert!(matches!(copy.prims[1].kind, PrimKind::Copy { vector } if vector.value == 2));
}

#[test]
fn level_idents() {
    let src = |id: &str| format!("level {id} \"x\" {{ threads(1); copy(vector = 1); }}");
    for (id, number, f) in [
        ("L0", Some(0), "l0"),
        ("L12", Some(12), "l12"),
        ("L", None, "L"),
        ("Lx", None, "Lx"),
        ("L3a", None, "L3a"),
        ("fused", None, "fused"),
    ] {
        let l = &parse(&src(id)).0[0];
        assert_eq!((l.number, l.fn_name().as_str()), (number, f), "{id}");
    }
    assert_error(
        &src("L99999999999"),
        "does not fit in u32",
        1,
        "L99999999999",
    );
}

#[test]
fn expands_to_ir() {
    let out = crate::schedule2(tokens(L3)).to_string();
    for needle in [
        "pub fn l3 () -> :: mra_codegen :: ir :: Schedule",
        "number : :: core :: option :: Option :: Some (3u32)",
        "Located { item : :: mra_codegen :: ir :: Step :: Threads (:: mra_codegen :: ir :: Value :: Fixed (128u32)) , line : 7u32 }",
        "Step :: CacheRead { operand : :: mra_codegen :: ir :: Operand :: B , into : :: mra_codegen :: ir :: Memory :: Shared , pad : :: mra_codegen :: ir :: Value :: Fixed (1u32) , }",
        "Step :: Unroll (:: mra_codegen :: ir :: Loop :: K , :: mra_codegen :: ir :: Value :: Fixed (0u32)) , line : 11u32",
        "file : :: std :: string :: String :: from (:: core :: file ! ())",
        "pub fn copy ()",
        "number : :: core :: option :: Option :: None",
        "Value :: Tunable { name : :: std :: string :: String :: from (\"threads\") , choices : :: std :: vec ! [64u32 , 128u32 , 256u32] , default : 128u32 , default_when : :: std :: vec ! [] , chosen : false , }",
        "Step :: Copy { vector : 2u32 }",
        "# [doc = \" Each thread owns a whole output row:\"]",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
}

const BASE: &str = "level L1 \"L1\" {\n    threads(128);\n    bind(threads, elements);\n";

/// A level with the primitives of BASE plus `extra` (on line 4 onward).
fn with(extra: &str) -> String {
    format!("{BASE}{extra}\n}}")
}

#[test]
fn unknown_words() {
    let expected = format!("unknown schedule primitive `tile`; expected one of: {}", crate::words::PRIMITIVES.join(", "));
    assert_error(&with("    tile(cols);"), &expected, 4, "tile");
    assert_error(
        &with("    unroll(planes);"),
        "unknown loop `planes` in `unroll`; expected one of: k, cols, rows",
        4,
        "planes",
    );
    assert_error(
        &with("    register_tile(k);"),
        "unknown loop `k` in `register_tile`; expected one of: cols",
        4,
        "k",
    );
    assert_error(
        &with("    workspace(registers);"),
        "unknown workspace memory `registers` in `workspace`; expected one of: global, shared",
        4,
        "registers",
    );
    assert_error(
        &with("    cache_read(C, shared);"),
        "unknown operand `C` in `cache_read`; expected one of: A, B",
        4,
        "C",
    );
    assert_error(
        &with("    cache_read(B, shared, padding = 1);"),
        "unknown argument `padding` of `cache_read`; expected one of: pad",
        4,
        "padding",
    );
    assert_error(
        &with("    cache_read(B, global);"),
        "cache_read into global memory stages nothing",
        4,
        "global",
    );
    assert_error(
        "level L1 \"L1\" { threads(1); bind(blocks, rows); }",
        "unknown bound unit `blocks` in `bind`; expected one of: threads, warps",
        1,
        "blocks",
    );
    assert_error(
        "level L1 \"L1\" { threads(1); bind(threads, cols); }",
        "unknown thread map `cols` in `bind`; expected one of: elements, rows",
        1,
        "cols",
    );
    assert_error(
        "level L1 \"L1\" { threads(1); copy(width = 2); }",
        "unknown argument `width` of `copy`; expected one of: vector",
        1,
        "width",
    );
    assert_error(
        "level L1 \"L1\" { threads(size = 1); copy(vector = 2); }",
        "unknown argument `size` of `threads`; expected one of: tune",
        1,
        "size",
    );
}

#[test]
fn argument_shapes() {
    // Missing arguments point at the whole parenthesized list.
    assert_error(
        &with("    unroll();"),
        "`unroll` is missing its loop; write unroll(k|cols)",
        4,
        "()",
    );
    assert_error(
        "level L1 \"L1\" { threads(1); bind(threads); }",
        "`bind` is missing its thread map",
        1,
        "(threads)",
    );
    assert_error(
        "level L1 \"L1\" { threads(); bind(threads, rows); }",
        "`threads` is missing its thread count",
        1,
        "()",
    );
    assert_error(
        "level L1 \"L1\" { threads(1); copy(); }",
        "`copy` is missing its `vector = ..` argument",
        1,
        "()",
    );
    assert_error(
        "level L1 \"L1\" { threads(1); copy(vector =); }",
        "`copy` is missing its vector width",
        1,
        "(vector =)",
    );
    assert_error(
        "level L1 \"L1\" { threads(tune = [64]); copy(vector = 1); }",
        "missing its `default = ..` argument",
        1,
        "(tune",
    );
    // Extra arguments point at the first extra token.
    assert_error(
        &with("    unroll(k, cols);"),
        "unknown argument `cols` of `unroll`; expected one of: by",
        4,
        "cols",
    );
    assert_error(
        "level L1 \"L1\" { threads(1, 2); bind(threads, rows); }",
        "unexpected extra argument to `threads`",
        1,
        "2",
    );
    // Wrong token kinds.
    assert_error(
        "level L1 \"L1\" { threads(1.5); bind(threads, rows); }",
        "expected an integer literal for the thread count of `threads`, found `1.5`",
        1,
        "1.5",
    );
    assert_error(
        "level L1 \"L1\" { threads(\"128\"); bind(threads, rows); }",
        "expected an integer literal",
        1,
        "\"128\"",
    );
    assert_error(
        "level L1 \"L1\" { threads(128u64); bind(threads, rows); }",
        "without the `u64` suffix",
        1,
        "128u64",
    );
    assert_error(
        "level L1 \"L1\" { threads(1); bind(threads, \"rows\"); }",
        "expected the thread map of `bind`, one of: elements, rows; found `\"rows\"`",
        1,
        "\"rows\"",
    );
    assert_error(
        "level L1 \"L1\" { threads(1); copy(2); }",
        "expected `vector = ..` in `copy`, found `2`",
        1,
        "2)",
    );
    assert_error(
        "level L1 \"L1\" { threads(99999999999); copy(vector = 2); }",
        "number too large",
        1,
        "999",
    );
    // Punctuation.
    assert_error(
        "level L1 \"L1\" { threads(1); bind(threads rows); }",
        "expected `,` between the arguments of `bind`",
        1,
        "rows",
    );
    assert_error(
        "level L1 \"L1\" { threads(1) bind(threads, rows); }",
        "expected `;` after `threads(..)`",
        1,
        ") bind",
    );
    assert_error(
        "level L1 \"L1\" { threads; }",
        "expected `(` after `threads`",
        1,
        "; }",
    );
    assert_error(
        "level L1 \"L1\" { 5; }",
        "expected a schedule primitive",
        1,
        "5",
    );
}

#[test]
fn level_shape() {
    assert_error(
        "level L1 { threads(1); }",
        "expected the level's name as a string literal",
        1,
        "{",
    );
    assert_error(
        "level L1 \"\" { threads(1); copy(vector = 1); }",
        "the level name must not be empty",
        1,
        "\"\"",
    );
    assert_error(
        "level \"L1\" { }",
        "expected the level's identifier",
        1,
        "\"L1\"",
    );
    assert_error("lvl L1 \"L1\" { }", "expected `level`", 1, "lvl");
    assert_error("level L1 \"L1\" threads(1);", "expected `{`", 1, "threads");
    assert!(error("").0.contains("at least one"));
}

#[test]
fn value_ranges() {
    assert_error(
        "level L1 \"L1\" { threads(0); bind(threads, rows); }",
        "a block has 1..=1024 threads; found 0",
        1,
        "0",
    );
    assert_error(
        "level L1 \"L1\" { threads(2048); bind(threads, rows); }",
        "a block has 1..=1024 threads; found 2048",
        1,
        "2048",
    );
    assert_error(
        "level L1 \"L1\" { threads(tune = [], default = 1); copy(vector = 1); }",
        "is empty",
        1,
        "[]",
    );
    assert_error(
        "level L1 \"L1\" { threads(tune = [64, 128], default = 96); copy(vector = 1); }",
        "the default 96 is not among the choices [64, 128]",
        1,
        "96",
    );
    assert_error(
        "level L1 \"L1\" { threads(tune = [64, 4096], default = 64); copy(vector = 1); }",
        "found 4096",
        1,
        "4096",
    );
    assert_error(
        "level L1 \"L1\" { threads(tune = [64, 64], default = 64); copy(vector = 1); }",
        "listed twice",
        1,
        "64]",
    );
    assert_error(
        "level L1 \"L1\" { threads(1); copy(vector = 3); }",
        "copy vector width must be one of 1, 2, 4; found 3",
        1,
        "3",
    );
    assert_error(
        &with("    cache_read(A, registers, pad = 2);"),
        "`pad` only applies to cache_read into shared memory",
        4,
        "pad",
    );
}

#[test]
fn duplicates() {
    assert_error(
        &with("    threads(64);"),
        "`threads` appears twice; a level sets each primitive once (first on line 2)",
        4,
        "threads",
    );
    assert_error(
        &with("    cache_read(B, shared);\n    cache_read(B, registers);"),
        "`cache_read(B)` appears twice (first on line 4)",
        5,
        "cache_read",
    );
    assert_error(
        &with("    unroll(k);\n    unroll(cols);\n    unroll(k);"),
        "`unroll(k)` appears twice (first on line 4)",
        6,
        "unroll",
    );
    assert_error("level L1 \"a\" { threads(1); copy(vector = 1); }\nlevel L1 \"b\" { threads(1); copy(vector = 1); }", "level `L1` would define `fn l1` a second time (level `L1`, line 1)", 2, "L1");
    assert_error("level L1 \"a\" { threads(1); copy(vector = 1); }\nlevel L2 \"a\" { threads(1); copy(vector = 1); }", "level name \"a\" is already used by level `L1`", 2, "\"a\"");
}

#[test]
fn combinations() {
    assert_error(
        "level L4 \"L4\" {\n bind(threads, rows);\n}",
        "level `L4` has no threads(..)",
        1,
        "L4",
    );
    assert_error(
        "level L4 \"L4\" {\n threads(64);\n workspace(shared);\n}",
        "a transform level needs bind(threads, elements|rows)",
        1,
        "L4",
    );
    assert_error(
        "level copy \"copy\" {\n threads(64);\n copy(vector = 2);\n unroll(k);\n}",
        "`unroll` cannot be combined with copy(..) (line 3)",
        4,
        "unroll",
    );
    assert_error(
        "level copy \"copy\" {\n threads(64);\n bind(threads, rows);\n copy(vector = 2);\n}",
        "`bind` cannot be combined with copy(..)",
        3,
        "bind",
    );
    assert_error(
        &with("    register_tile(cols);"),
        "a register tile of whole rows needs bind(threads, rows)",
        4,
        "register_tile",
    );
    // Independent mistakes are all reported.
    let (_, _, _, all) = error("level L4 \"\" {\n workspace(shared);\n}");
    assert_eq!(all.len(), 3, "{all:?}");
}

#[test]
fn tunable_values_anywhere() {
    let src = "level L1 \"L1\" {
    threads(tune([64, 128], default = 128));
    launch_bounds(min_blocks = tune([1, 2], default = 1, name = occupancy));
    bind(threads, rows);
    cache_read(B, shared, pad = tune([0, 1], default = 1));
    register_tile(cols);
    unroll(k, by = tune([0, 2], default = 0));
    constraint(threads * occupancy <= 2 * max_threads);
    constraint(pad_b + unroll_k ^ 2 < K * 100);
}";
    let levels = parse(src);
    let names: Vec<String> = levels.0[0].prims.iter().flat_map(|p| p.values()).map(|(n, _)| n).collect();
    assert_eq!(names, ["threads", "occupancy", "pad_b", "unroll_k"]);
    let out = crate::expand::expand(&levels).to_string();
    assert!(out.contains("Step :: LaunchBounds { min_blocks : :: mra_codegen :: ir :: Value :: Tunable { name : :: std :: string :: String :: from (\"occupancy\")"), "{out}");
    // `^` binds tighter than `+`: pad_b + (unroll_k ^ 2).
    assert!(out.contains("Expr :: Bin (:: std :: boxed :: Box :: new (:: mra_codegen :: tune :: Expr :: Name (:: std :: string :: String :: from (\"pad_b\"))) , :: mra_codegen :: tune :: BinOp :: Add , :: std :: boxed :: Box :: new (:: mra_codegen :: tune :: Expr :: Bin (:: std :: boxed :: Box :: new (:: mra_codegen :: tune :: Expr :: Name (:: std :: string :: String :: from (\"unroll_k\"))) , :: mra_codegen :: tune :: BinOp :: Pow"), "{out}");
}

#[test]
fn malformed_tuning_declarations() {
    let lvl = |body: &str| format!("level L1 \"L1\" {{\n    threads(128);\n    bind(threads, rows);\n{body}\n}}");
    assert_error(&lvl("    cache_read(B, shared, pad = tune([], default = 0));"), "is empty", 4, "[]");
    assert_error(&lvl("    cache_read(B, shared, pad = tune([0, 1], default = 2));"), "the default 2 is not among the choices [0, 1]", 4, "2)");
    assert_error(&lvl("    cache_read(B, shared, pad = tune([1, 1], default = 1));"), "listed twice", 4, "1]");
    assert_error(&lvl("    cache_read(B, shared, pad = tune([0, 1], default = 1, name = threads));"), "parameter `threads` is declared twice", 4, "threads)");
    assert_error(&lvl("    constraint(threads * warps <= 256);"), "unknown name `warps` in constraint", 4, "warps");
    assert_error(&lvl("    launch_bounds(min_blocks = tune([2, 4], default = 4));\n    constraint(threads * min_blocks <= 256);"), "is false for the schedule's defaults", 5, "<=");
    assert_error(&lvl("    constraint(threads 256);"), "expected a comparison", 4, "256");
    assert_error(&lvl("    launch_bounds(min_blocks = 0);"), "min_blocks is the number of blocks", 4, "0");
    assert_error(&lvl("    unroll(k, by = tune([1, 2], default = 2, name = K));"), "taken by a built-in", 4, "K)");
}

#[test]
fn buffers_and_pipeline() {
    let fused = "level f \"f\" {\n threads(256);\n bind(warps, tiles);\n tensorize(mma);\n cache_read(A, shared);\n workspace(shared);\n";
    // Accepted, with the value forms of `threads`.
    parse(&format!("{fused} buffers(1);\n}}"));
    parse(&format!("{fused} buffers(tune = [2, 3], default = 2);\n pipeline(2);\n}}"));
    assert_error(&format!("{fused} buffers(0);\n}}"), "buffers(0): takes 1 to 9", 7, "0");
    assert_error(&format!("{fused} pipeline(tune = [1, 2], default = 3);\n}}"), "the default 3 is not among the choices [1, 2]", 7, "3)");
    parse(&format!("{fused} pipeline(2);\n tensors(tune = [2, 4], default = 2);\n}}"));
    parse(&format!("{fused} pipeline(2);\n tensors(tune([1, 2, 4], default = 2));\n}}"));
    // Named barriers 1..=N: at most 4 groups.
    assert_error(&format!("{fused} pipeline(2);\n tensors(5);\n}}"), "tensors(5): takes 1 to 4", 8, "5");
    assert_error(&format!("{fused} pipeline(2);\n tensors(tune([2, 8], default = 2));\n}}"), "tensors(8): takes 1 to 4", 8, "8");
    assert_error(
        "level f \"f\" {\n threads(256);\n bind(warps, tiles);\n tensorize(mma);\n buffers(1);\n}",
        "`buffers` shapes the fused passes: it needs tensorize(mma), cache_read(A, shared) and workspace(shared)",
        5,
        "buffers",
    );
}

#[test]
fn cluster_and_unroll_rows() {
    let fused = "level f \"f\" {\n threads(256);\n bind(warps, tiles);\n tensorize(mma);\n cache_read(A, shared);\n workspace(shared);\n";
    parse(&format!("{fused} pipeline(2);\n cluster(tune([2, 4, 8], default = 4));\n unroll(rows, by = 2);\n}}"));
    // The portable cluster size: at most 8 blocks.
    assert_error(&format!("{fused} pipeline(2);\n cluster(16);\n}}"), "cluster(16): takes 1 to 8", 8, "16");
    assert_error(
        "level f \"f\" {\n threads(256);\n bind(warps, tiles);\n tensorize(mma);\n cluster(2);\n}",
        "`cluster` shapes the fused passes: it needs tensorize(mma), cache_read(A, shared) and workspace(shared)",
        5,
        "cluster",
    );
    parse(&format!("{fused} split_cols(tune([1, 2, 4], default = 2));\n}}"));
    assert_error(&format!("{fused} split_cols(8);\n}}"), "split_cols(8): takes 1 to 4", 7, "8");
    // async_exchange(0|1) chooses cluster(N)'s exchange: a boolean, and only with cluster(N).
    parse(&format!("{fused} pipeline(2);\n cluster(4);\n async_exchange(tune([0, 1], default = 0));\n}}"));
    assert_error(&format!("{fused} pipeline(2);\n cluster(4);\n async_exchange(2);\n}}"), "async_exchange(2): takes 0", 9, "2");
    assert_error(&format!("{fused} async_exchange(1);\n}}"), "async_exchange(..) chooses how the blocks of cluster(N) exchange", 7, "async_exchange");
    // align_runs(0|1) lays out the fused intermediates: a boolean, with the fused steps, without cluster(N).
    parse(&format!("{fused} align_runs(tune([0, 1], default = if K % 2 == 1 {{ 1 }} else {{ 0 }}));\n constraint(align_runs <= K % 2);\n}}"));
    assert_error(&format!("{fused} align_runs(2);\n}}"), "align_runs(2): takes 0 (runs at stride K) or 1", 7, "2");
    assert_error(
        "level f \"f\" {\n threads(256);\n bind(warps, tiles);\n tensorize(mma);\n align_runs(1);\n}",
        "`align_runs` shapes the fused passes: it needs tensorize(mma), cache_read(A, shared) and workspace(shared)",
        5,
        "align_runs",
    );
    assert_error(&format!("{fused} pipeline(2);\n cluster(4);\n align_runs(1);\n}}"), "align_runs(..) pads the runs of whole-tensor intermediates; cluster(N) (line 8) keeps", 9, "align_runs");
    // fma_tail(0|1): a boolean; the tail column of B lives in registers, so it needs them.
    parse(&format!("{fused} cache_read(B, registers);\n fma_tail(tune([0, 1], default = 0));\n}}"));
    assert_error(&format!("{fused} cache_read(B, registers);\n fma_tail(2);\n}}"), "fma_tail(2): takes 0 (a zero-padded last column fragment) or 1 (the last K mod FN columns by FMA)", 8, "2");
    assert_error(
        "level f \"f\" {\n threads(256);\n bind(warps, tiles);\n tensorize(mma);\n fma_tail(1);\n}",
        "fma_tail(1) computes the last columns with B's tail column in registers: it needs tensorize(mma) and cache_read(B, registers)",
        5,
        "fma_tail",
    );
    // shadow_mma(0|1): the bound level's instructions beside copy(..), shaped by tensorize(mma);
    // copy still refuses every other step.
    parse("level b \"b\" {\n threads(128);\n copy(vector = 2);\n tensorize(mma);\n shadow_mma(tune([0, 1], default = 1));\n}");
    assert_error("level b \"b\" {\n threads(128);\n copy(vector = 2);\n tensorize(mma);\n shadow_mma(2);\n}", "shadow_mma(2): takes 0 (every warp copies and multiplies) or 1 (half the warps copy, half multiply)", 5, "2");
    assert_error("level b \"b\" {\n threads(128);\n copy(vector = 2);\n shadow_mma(1);\n}", "shadow_mma(..) issues matrix instructions beside a copy: it needs copy(..) and tensorize(mma)", 4, "shadow_mma");
    assert_error(&format!("{fused} shadow_mma(1);\n}}"), "shadow_mma(..) issues matrix instructions beside a copy: it needs copy(..) and tensorize(mma)", 7, "shadow_mma");
    assert_error("level b \"b\" {\n threads(128);\n copy(vector = 2);\n tensorize(mma);\n}", "`tensorize` cannot be combined with copy(..) (line 3)", 4, "tensorize");
    assert_error("level b \"b\" {\n threads(128);\n copy(vector = 2);\n tensorize(mma);\n shadow_mma(1);\n unroll(k);\n}", "`unroll` cannot be combined with copy(..) (line 3)", 6, "unroll");
    // persistent(0|1): a boolean launch decision for any kernel level, not with clusters.
    parse(&format!("{fused} pipeline(2);\n persistent(tune([0, 1], default = 1));\n}}"));
    parse("level f \"f\" {\n threads(128);\n bind(threads, elements);\n persistent(1);\n}");
    assert_error(&format!("{fused} persistent(2);\n}}"), "persistent(2): takes 0 (min(N, M) blocks) or 1 (at most the blocks the GPU holds at once)", 7, "2");
    assert_error(
        &format!("{fused} pipeline(2);\n cluster(4);\n persistent(1);\n}}"),
        "persistent(..) counts resident blocks per SM; cluster(N) (line 8) places its blocks by cluster: use one or the other",
        9,
        "persistent",
    );
    // coalesce_c(0|1): how the fused passes' last pass stores C; a boolean, with the fused steps.
    parse(&format!("{fused} coalesce_c(tune([0, 1], default = 0));\n}}"));
    assert_error(&format!("{fused} coalesce_c(2);\n}}"), "coalesce_c(2): takes 0 (C stored from the fragments) or 1 (C staged in shared memory, stored in whole lines)", 7, "2");
    assert_error(
        "level f \"f\" {\n threads(256);\n bind(warps, tiles);\n tensorize(mma);\n coalesce_c(1);\n}",
        "`coalesce_c` shapes the fused passes: it needs tensorize(mma), cache_read(A, shared) and workspace(shared)",
        5,
        "coalesce_c",
    );
    // stage_terms(N): a rank sum's ring of terms in shared memory, with the fused steps; 1 is no ring.
    parse(&format!("{fused} stage_terms(tune([0, 2, 3], default = 0));\n}}"));
    assert_error(&format!("{fused} stage_terms(1);\n}}"), "stage_terms(1): takes 0 (matrices loaded from device memory) or 2 to 4 (terms staged in shared memory)", 7, "1");
    assert_error(
        "level f \"f\" {\n threads(256);\n bind(warps, tiles);\n tensorize(mma);\n stage_terms(2);\n}",
        "`stage_terms` shapes the fused passes: it needs tensorize(mma), cache_read(A, shared) and workspace(shared)",
        5,
        "stage_terms",
    );
    // restage_a(0|1): a boolean, with the fused steps.
    parse(&format!("{fused} restage_a(tune([0, 1], default = 0));\n}}"));
    assert_error(&format!("{fused} restage_a(2);\n}}"), "restage_a(2): takes 0 (a rank sum's A staged once) or 1 (copied again for every term)", 7, "2");
    // pair_rows(0|1) permutes the fused passes' tile rows: a boolean, with the fused steps (cluster(N) too).
    parse(&format!("{fused} pair_rows(tune([0, 1], default = 0));\n}}"));
    parse(&format!("{fused} pipeline(2);\n cluster(4);\n pair_rows(1);\n}}"));
    assert_error(&format!("{fused} pair_rows(2);\n}}"), "pair_rows(2): takes 0 (rows as the instruction lays them) or 1 (row pairs per lane)", 7, "2");
    assert_error(
        "level f \"f\" {\n threads(256);\n bind(warps, tiles);\n tensorize(mma);\n pair_rows(1);\n}",
        "`pair_rows` shapes the fused passes: it needs tensorize(mma), cache_read(A, shared) and workspace(shared)",
        5,
        "pair_rows",
    );
    // swap_operands(0|1) computes the fused passes transposed: a boolean, with the fused steps.
    parse(&format!("{fused} swap_operands(tune([0, 1], default = if row_pairs == 0 {{ 0 }} else {{ 1 }}));\n}}"));
    assert_error(&format!("{fused} swap_operands(2);\n}}"), "swap_operands(2): takes 0 (the tensor as the instruction's A operand) or 1 (as its B operand, K² as N)", 7, "2");
    assert_error(
        "level f \"f\" {\n threads(256);\n bind(warps, tiles);\n tensorize(mma);\n swap_operands(1);\n}",
        "`swap_operands` shapes the fused passes: it needs tensorize(mma), cache_read(A, shared) and workspace(shared)",
        5,
        "swap_operands",
    );
    // fuse_k(1|2|4): k-steps per matrix instruction, on any tensorize(mma) level; a default may
    // name the arch's fuse_k_max.
    parse(&format!("{fused} fuse_k(tune([1, 2, 4], default = if fuse_k_max == 1 {{ 1 }} else {{ 2 }}));\n constraint(fuse_k <= fuse_k_max);\n}}"));
    parse("level f \"f\" {\n threads(128);\n bind(warps, tiles);\n tensorize(mma);\n fuse_k(2);\n}");
    assert_error(&format!("{fused} fuse_k(3);\n}}"), "fuse_k(3): takes 1, 2 or 4 (k-steps per instruction)", 7, "3");
    assert_error(&format!("{fused} fuse_k(tune([1, 8], default = 1));\n}}"), "fuse_k(8): takes 1, 2 or 4", 7, "8");
    assert_error(
        "level f \"f\" {\n threads(128);\n bind(warps, tiles);\n tensorize(wmma);\n fuse_k(2);\n}",
        "fuse_k(N) issues N k-steps of the matrix instruction as one: it needs tensorize(mma)",
        5,
        "fuse_k",
    );
    assert_error("level f \"f\" {\n threads(128);\n bind(threads, rows);\n fuse_k(2);\n}", "it needs tensorize(mma)", 4, "fuse_k");
    // late_wait(0|1) places cluster(N)'s pass-0 wait: a boolean, only with cluster(N).
    parse(&format!("{fused} pipeline(2);\n cluster(4);\n late_wait(tune([0, 1], default = 1));\n}}"));
    assert_error(&format!("{fused} pipeline(2);\n cluster(4);\n late_wait(2);\n}}"), "late_wait(2): takes 0 (the block waits before pass 0) or 1", 9, "2");
    assert_error(&format!("{fused} late_wait(1);\n}}"), "late_wait(..) places the cluster barrier wait of cluster(N)'s pass 0: add cluster(N)", 7, "late_wait");
    // unroll(rows) names how many tiles a wave jams: `by` is required, 1..=4.
    assert_error(&format!("{fused} unroll(rows);\n}}"), "unroll(rows) needs `by = N`", 7, "rows");
    assert_error(&format!("{fused} unroll(rows, by = 8);\n}}"), "unroll(rows, by = 8): a wave computes 1 to 4 row tiles at once", 7, "8");
    assert_error("level f \"f\" {\n threads(256);\n bind(threads, rows);\n unroll(rows, by = 2);\n}", "it needs bind(warps, tiles) and tensorize(mma)", 4, "rows");
    // stack(N): 1..=4 tensors per pass, in pipeline(N)'s batch loop, not with cluster(N) or tensors(N).
    parse(&format!("{fused} pipeline(2);\n stack(tune([1, 2, 3, 4], default = 1));\n}}"));
    parse(&format!("{fused} pipeline(2);\n stack(2);\n}}"));
    assert_error(&format!("{fused} pipeline(2);\n stack(5);\n}}"), "stack(5): takes 1 to 4", 8, "5");
    assert_error(&format!("{fused} pipeline(2);\n stack(tune([1, 8], default = 1));\n}}"), "stack(8): takes 1 to 4", 8, "8");
    assert_error(&format!("{fused} stack(2);\n}}"), "stack(..) widens the passes of pipeline(N)'s batch loop to groups of tensors: add pipeline(2)", 7, "stack");
    assert_error(
        &format!("{fused} pipeline(2);\n cluster(4);\n stack(2);\n}}"),
        "stack(..) puts several tensors in one block's passes; cluster(N) (line 8) splits the block's work another way: use one or the other",
        9,
        "stack",
    );
    assert_error(&format!("{fused} pipeline(2);\n tensors(2);\n stack(2);\n}}"), "tensors(N) (line 8) splits the block's work another way", 9, "stack");
    // split_output(N): 1..=2 blocks per tensor; chain and prefetch_l2 shape its passes only.
    parse(&format!("{fused} split_output(2);\n chain(1);\n bulk_copy(1);\n prefetch_l2(tune([2, 3], default = 2));\n}}"));
    assert_error(&format!("{fused} split_output(3);\n}}"), "split_output(3): takes 1 to 2", 7, "3");
    assert_error(&format!("{fused} split_output(2);\n prefetch_l2(5);\n}}"), "prefetch_l2(5): takes 0 to 4 (slices ahead; 0: none)", 8, "5");
    assert_error(&format!("{fused} split_output(2);\n chain(2);\n}}"), "chain(2): takes 0 (pass 0's output stored) or 1", 8, "2");
    assert_error(&format!("{fused} chain(1);\n}}"), "chain(..) shapes the passes of split_output(N): add split_output(2)", 7, "chain");
    assert_error(&format!("{fused} prefetch_l2(2);\n}}"), "prefetch_l2(..) shapes the passes of split_output(N): add split_output(2)", 7, "prefetch_l2");
    // co_schedule(0|1): launches split_output(N)'s blocks together; nothing without it.
    parse(&format!("{fused} split_output(2);\n co_schedule(tune([0, 1], default = 1));\n}}"));
    assert_error(&format!("{fused} split_output(2);\n co_schedule(2);\n}}"), "co_schedule(2): takes 0 (a tensor's blocks launch independently) or 1", 8, "2");
    assert_error(&format!("{fused} co_schedule(1);\n}}"), "co_schedule(..) launches the blocks of split_output(N) together: add split_output(2)", 7, "co_schedule");
    assert_error("level f \"f\" {\n threads(256);\n bind(threads, rows);\n split_output(2);\n}", "`split_output` shapes the fused passes: it needs tensorize(mma)", 4, "split_output");
    assert_error(
        "level f \"f\" {\n threads(256);\n bind(warps, tiles);\n tensorize(mma);\n stack(2);\n}",
        "`stack` shapes the fused passes: it needs tensorize(mma), cache_read(A, shared) and workspace(shared)",
        5,
        "stack",
    );
}

#[test]
fn defaults_that_depend_on_k() {
    let src = "level L1 \"L1\" {
    threads(tune([64, 128, 256], default = if K <= 8 { 64 } else if K * bytes > 100 { 256 } else { 128 }));
    bind(threads, rows);
    cache_read(B, shared, pad = tune([0, 1], default = if wave == 64 { 0 } else { 1 }));
    constraint(threads <= max_threads);
}";
    let levels = parse(src);
    let Val::Tune { default, default_when, .. } = &levels.0[0].prims[0].values()[0].1 else { panic!("threads is tuned") };
    let branches: Vec<(String, u32)> = default_when.iter().map(|(c, v)| (c.text.clone(), v.value)).collect();
    assert_eq!(branches, [("K <= 8".to_string(), 64), ("K * bytes > 100".to_string(), 256)]);
    assert_eq!(default.value, 128);
    let out = crate::expand::expand(&levels).to_string();
    assert!(out.contains("default_when : :: std :: vec ! [:: mra_codegen :: ir :: DefaultWhen { when : :: mra_codegen :: tune :: Constraint"), "{out}");

    let lvl = |d: &str| format!("level L1 \"L1\" {{\n    threads(tune([64, 128], default = {d}));\n    bind(threads, rows);\n}}");
    assert_error(&lvl("if K <= 8 { 64 }"), "expected `else`", 2, "))");
    assert_error(&lvl("if K <= 8 { 96 } else { 64 }"), "the default 96 is not among the choices [64, 128]", 2, "96");
    assert_error(&lvl("if K <= 8 { 64 } else { 96 }"), "the default 96 is not among the choices [64, 128]", 2, "96");
    assert_error(&lvl("if threads <= 8 { 64 } else { 128 }"), "may name K, bytes, wave, shared, max_threads, registers, fuse_k_max, bulk_copies and row_pairs only, not `threads`", 2, "threads <=");
    assert_error(&lvl("if K <= 8 64 else { 128 }"), "expected `{ N }` after the condition", 2, "64 else");
    assert_error(&lvl("if { 64 } else { 128 }"), "expected a condition after `if`", 2, "if {");
    assert_error(&lvl("if K <= 8 { 64 } else 128"), "expected `{ N }`", 2, "128))");
    // A constraint sees the default at each K: 256 threads above K = 8 breaks it, 64 at K <= 8 meets it.
    parse("level L1 \"L1\" {\n    threads(tune([64, 256], default = if K <= 8 { 64 } else { 256 }));\n    bind(threads, rows);\n    constraint(threads * K <= 512);\n}");
    assert_error(
        "level L1 \"L1\" {\n    threads(tune([64, 256], default = if K <= 1 { 256 } else { 256 }));\n    bind(threads, rows);\n    constraint(threads * K <= 128);\n}",
        "is false for the schedule's defaults",
        4,
        "<=",
    );
}
