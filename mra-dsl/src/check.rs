//! The rules a well-formed schedule follows beyond its grammar: value ranges, each primitive at
//! most once, the primitives every level needs, and the combinations that make no sense.
//!
//! All violations are collected (not just the first) and each one points at the token to fix.

use crate::ast::{BinOp, CmpOp, Cond, Level, Levels, Memory, Prim, PrimKind, Sp, Term, ThreadMap, Val};
use crate::words;
use proc_macro2::Span;
use std::collections::HashMap;
use syn::Error;

/// Checks every level and the levels against each other.
pub fn check(levels: &Levels) -> Result<(), Error> {
    let mut errors = Errors::default();
    for level in &levels.0 {
        check_level(level, &mut errors);
    }
    check_unique(levels, &mut errors);
    errors.into_result()
}

/// The errors found so far, reported together.
#[derive(Default)]
struct Errors(Option<Error>);

impl Errors {
    fn push(&mut self, span: Span, message: impl std::fmt::Display) {
        let e = Error::new(span, message);
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }

    fn into_result(self) -> Result<(), Error> {
        self.0.map_or(Ok(()), Err)
    }
}

fn check_level(level: &Level, errors: &mut Errors) {
    if level.name.value().is_empty() {
        errors.push(
            level.name.span(),
            "the level name must not be empty, e.g. \"L3-regblk\"",
        );
    } else if level
        .name
        .value()
        .chars()
        .any(|c| c == '"' || c == '\\' || c.is_control())
    {
        // The name is printed unescaped, in `level L3 "name" {` and in result lines.
        errors.push(
            level.name.span(),
            "the level name must not contain quotes, backslashes or control characters",
        );
    }
    check_duplicates(level, errors);
    for prim in &level.prims {
        check_values(prim, errors);
    }
    check_combination(level, errors);
    check_params(level, errors);
}

/// Each primitive at most once; `unroll` once per loop. The second one is the error.
fn check_duplicates(level: &Level, errors: &mut Errors) {
    let mut seen: HashMap<String, &Prim> = HashMap::new();
    for prim in &level.prims {
        let key = match &prim.kind {
            PrimKind::Unroll { loop_, .. } => format!("unroll({})", loop_word(loop_.value)),
            // Each constraint is its own condition.
            PrimKind::Constraint(_) => continue,
            // A and B are staged independently: one cache_read each.
            PrimKind::CacheRead { operand, .. } => format!("cache_read({})", operand_word(operand.value)),
            _ => prim.name().to_string(),
        };
        if let Some(first) = seen.get(&key) {
            let what = match prim.kind {
                PrimKind::Unroll { .. } | PrimKind::CacheRead { .. } => format!("`{key}` appears twice"),
                _ => format!("`{key}` appears twice; a level sets each primitive once"),
            };
            errors.push(
                prim.ident.span(),
                format!("{what} (first on line {})", first.ident.span().start().line),
            );
        } else {
            seen.insert(key, prim);
        }
    }
}

/// Numeric ranges and arguments that are known words but wrong in this position.
fn check_values(prim: &Prim, errors: &mut Errors) {
    for (_, v) in prim.values() {
        check_tune(v, errors);
    }
    match &prim.kind {
        PrimKind::Threads(v) => for_each_value(v, |n| thread_count(n, errors)),
        PrimKind::Buffers(v) | PrimKind::Pipeline(v) | PrimKind::Tensors(v) | PrimKind::Cluster(v) | PrimKind::SplitCols(v) | PrimKind::Stack(v) | PrimKind::SplitOutput(v) => {
            let what = prim.name();
            let max = match what {
                "buffers" => 9,
                // Named barriers 1..=GROUPS (0 is the block barrier; the hardware has 16).
                "tensors" => 4,
                // The portable cluster size limit (CUDA: 8 blocks without opting in).
                "cluster" => 8,
                // A tile has at most 4 column fragments (K = 32, 8-wide fragments).
                "split_cols" => 4,
                // At K = 10 four tensors are 400 rows, whole 16-row tiles; more only widens
                // the buffers (shared memory per block) with no padding left to remove.
                "stack" => 4,
                // Halves of z: a 16-row tile of the m16n8 instructions each at K = 32.
                "split_output" => 2,
                _ => 8,
            };
            for_each_value(v, |n| {
                if !(1..=max).contains(&n.value) {
                    errors.push(n.span, format!("{what}({}): takes 1 to {max}", n.value));
                }
            });
        }
        PrimKind::PrefetchL2(v) => for_each_value(v, |n| {
            if n.value > 4 {
                errors.push(n.span, format!("prefetch_l2({}): takes 0 to 4 (slices ahead; 0: none)", n.value));
            }
        }),
        PrimKind::StageTerms(v) => for_each_value(v, |n| {
            if n.value == 1 || n.value > 4 {
                errors.push(n.span, format!("stage_terms({}): takes 0 (matrices loaded from device memory) or 2 to 4 (terms staged in shared memory)", n.value));
            }
        }),
        PrimKind::FuseK(v) => for_each_value(v, |n| {
            if ![1, 2, 4].contains(&n.value) {
                errors.push(n.span, format!("fuse_k({}): takes 1, 2 or 4 (k-steps per instruction)", n.value));
            }
        }),
        PrimKind::AsyncExchange(v) | PrimKind::AlignRuns(v) | PrimKind::LateWait(v) | PrimKind::PairRows(v) | PrimKind::SwapOperands(v) | PrimKind::BulkCopy(v) | PrimKind::FmaTail(v) | PrimKind::Persistent(v) | PrimKind::CoalesceC(v) | PrimKind::ShadowMma(v) | PrimKind::Chain(v) | PrimKind::CoSchedule(v) | PrimKind::RestageA(v) => {
            let what = prim.name();
            for_each_value(v, |n| {
                if n.value > 1 {
                    errors.push(n.span, format!("{what}({}): takes {}", n.value, crate::words::switch_meaning(what)));
                }
            });
        }
        PrimKind::CacheRead {
            into,
            pad: Some((word, pad)),
            ..
        }
        | PrimKind::CacheWrite {
            into,
            pad: Some((word, pad)),
            ..
        } if into.value != Memory::Shared && (pad.default_value() != 0 || matches!(pad, Val::Tune { .. })) => {
            errors.push(
                *word,
                "`pad` only applies to cache_read into shared memory (it avoids bank conflicts)",
            );
        }
        PrimKind::LaunchBounds { min_blocks } => for_each_value(min_blocks, |n| {
            if !(1..=32).contains(&n.value) {
                errors.push(n.span, format!("min_blocks is the number of blocks that must fit on one multiprocessor at once, 1..=32; found {}", n.value));
            }
        }),
        PrimKind::Unroll { loop_, by: None } if loop_.value == crate::ast::Loop::Rows => {
            errors.push(loop_.span, "unroll(rows) needs `by = N` (1..=4): the row tiles a wave computes at once");
        }
        PrimKind::Unroll { loop_, by: Some((_, by)) } if loop_.value == crate::ast::Loop::Rows => for_each_value(by, |n| {
            if !(1..=4).contains(&n.value) {
                errors.push(n.span, format!("unroll(rows, by = {}): a wave computes 1 to 4 row tiles at once", n.value));
            }
        }),
        PrimKind::Unroll { by: Some((_, by)), .. } => for_each_value(by, |n| {
            if n.value > 64 {
                errors.push(n.span, format!("unroll factor {} is above 64 (the loops run at most K <= 32 times; 0 unrolls fully)", n.value));
            }
        }),
        PrimKind::Copy { vector } if !words::COPY_VECTORS.contains(&vector.value) => {
            errors.push(
                vector.span,
                format!(
                    "copy vector width must be one of 1, 2, 4; found {}",
                    vector.value
                ),
            );
        }
        _ => {}
    }
}

/// Calls `f` on every number of a value: the fixed one, or each choice and the default.
fn for_each_value(v: &Val, mut f: impl FnMut(Sp<u32>)) {
    match v {
        Val::Fixed(n) => f(*n),
        Val::Tune { choices, default, default_when, .. } => {
            for c in choices {
                f(*c);
            }
            for d in default_when.iter().map(|(_, d)| d).chain([default]) {
                if !choices.iter().any(|c| c.value == d.value) {
                    f(*d);
                }
            }
        }
    }
}

/// A tuning declaration: a non-empty list without repeats that contains the default (every
/// value of a conditional default), whose conditions name only built-ins.
fn check_tune(v: &Val, errors: &mut Errors) {
    let Val::Tune { list, choices, default, default_when, .. } = v else { return };
    for (cond, value) in default_when {
        let mut names = Vec::new();
        visit_names(&cond.lhs, &mut |id| names.push(id.clone()));
        visit_names(&cond.rhs, &mut |id| names.push(id.clone()));
        for id in names {
            let n = id.to_string();
            if n != "K" && !BUILTINS.iter().any(|(b, _)| *b == n) {
                errors.push(id.span(), format!("a default's condition may name K, bytes, wave, shared, max_threads, registers, fuse_k_max, bulk_copies and row_pairs only, not `{n}`: defaults cannot depend on other parameters"));
            }
        }
        if !choices.is_empty() && !choices.iter().any(|c| c.value == value.value) {
            let list: Vec<String> = choices.iter().map(|c| c.value.to_string()).collect();
            errors.push(value.span, format!("the default {} is not among the choices [{}]", value.value, list.join(", ")));
        }
    }
    if choices.is_empty() {
        errors.push(*list, "the list of values to tune over is empty; e.g. `[64, 128, 256]`");
    }
    for (i, c) in choices.iter().enumerate() {
        if choices[..i].iter().any(|p| p.value == c.value) {
            errors.push(c.span, format!("value {} is listed twice", c.value));
        }
    }
    if !choices.is_empty() && !choices.iter().any(|c| c.value == default.value) {
        let list: Vec<String> = choices.iter().map(|c| c.value.to_string()).collect();
        errors.push(default.span, format!("the default {} is not among the choices [{}]", default.value, list.join(", ")));
    }
}

/// The values a constraint's names take when the macro checks it: the arch limits and K range
/// of every supported target (mra-codegen/src/arch.rs), so that a constraint is refused only
/// if the schedule's defaults meet it for no K, dtype and arch at all.
const BUILTINS: &[(&str, &[i64])] = &[
    ("bytes", &[2, 4, 8]),
    ("wave", &[32, 64]),
    ("shared", &[227 * 1024]),
    ("max_threads", &[1024]),
    ("registers", &[256]),
    // sm_90 f64: 4 (m16n8k16); every other target 1.
    ("fuse_k_max", &[1, 4]),
    // NVIDIA sm_90 (cp.async.bulk): 1; every other target 0.
    ("bulk_copies", &[1, 0]),
    // NVIDIA m16n8k* (sm_90 f64): 1; every other target 0.
    ("row_pairs", &[1, 0]),
];

/// Parameter names are unique; constraints name known things and hold for the defaults.
fn check_params(level: &Level, errors: &mut Errors) {
    let mut names: HashMap<String, (Span, &Val)> = HashMap::new();
    let mut tunable: Vec<String> = Vec::new();
    for prim in &level.prims {
        for (name, v) in prim.values() {
            let span = match v {
                Val::Tune { name: Some(n), .. } => n.span(),
                _ => v.span(),
            };
            if name == "K" || BUILTINS.iter().any(|(b, _)| *b == name) {
                errors.push(span, format!("parameter name `{name}` is taken by a built-in constraint name (K, bytes, wave, shared, max_threads, registers, fuse_k_max, bulk_copies, row_pairs)"));
            } else if let Some((first, _)) = names.get(&name) {
                // Two fixed values of one name are a repeated primitive, reported already.
                if matches!(v, Val::Tune { .. }) || tunable.contains(&name) {
                    errors.push(span, format!("parameter `{name}` is declared twice (first on line {}); give one `name = ..`", first.start().line));
                }
            } else {
                if matches!(v, Val::Tune { .. }) {
                    tunable.push(name.clone());
                }
                names.insert(name, (span, v));
            }
        }
    }
    for prim in &level.prims {
        let PrimKind::Constraint(cond) = &prim.kind else { continue };
        let mut unknown = false;
        visit_names(&cond.lhs, &mut |id| unknown |= !known_name(id, &names, errors));
        visit_names(&cond.rhs, &mut |id| unknown |= !known_name(id, &names, errors));
        if unknown {
            continue;
        }
        let holds_somewhere = (1..=32i64).any(|k| {
            BUILTINS[0].1.iter().any(|&bytes| {
                BUILTINS[1].1.iter().any(|&wave| {
                    let builtin = |n: &str| -> Option<i64> {
                        match n {
                            "K" => Some(k),
                            "bytes" => Some(bytes),
                            "wave" => Some(wave),
                            _ => BUILTINS.iter().find(|(b, _)| *b == n).map(|(_, v)| v[0]),
                        }
                    };
                    let env = |n: &str| -> Option<i64> { builtin(n).or_else(|| names.get(n).map(|(_, v)| default_at(v, &builtin) as i64)) };
                    holds(cond, &env) == Some(true)
                })
            })
        });
        if !holds_somewhere {
            errors.push(cond.op.span, format!("constraint `{}` is false for the schedule's defaults at every K in 1..=32 on every arch: change a default or the constraint", cond.text));
        }
    }
}

/// A value's default where the built-in names have the values `builtin` gives (the first
/// branch whose condition holds, else the plain default).
fn default_at(v: &Val, builtin: &dyn Fn(&str) -> Option<i64>) -> u32 {
    match v {
        Val::Tune { default_when, .. } => default_when.iter().find(|(c, _)| holds(c, builtin) == Some(true)).map_or(v.default_value(), |(_, d)| d.value),
        Val::Fixed(_) => v.default_value(),
    }
}

fn known_name(id: &proc_macro2::Ident, names: &HashMap<String, (Span, &Val)>, errors: &mut Errors) -> bool {
    let n = id.to_string();
    if n == "K" || BUILTINS.iter().any(|(b, _)| *b == n) || names.contains_key(&n) {
        return true;
    }
    let mut params: Vec<&String> = names.keys().collect();
    params.sort();
    let params: Vec<&str> = params.iter().map(|s| s.as_str()).collect();
    errors.push(
        id.span(),
        format!("unknown name `{n}` in constraint; known: parameters [{}], K, bytes, wave, shared, max_threads, registers, fuse_k_max, bulk_copies, row_pairs", params.join(", ")),
    );
    false
}

fn visit_names(t: &Term, f: &mut dyn FnMut(&proc_macro2::Ident)) {
    match t {
        Term::Int(_) => {}
        Term::Name(id) => f(id),
        Term::Bin(a, _, b) => {
            visit_names(a, f);
            visit_names(b, f);
        }
    }
}

/// The condition's truth under `env`, or `None` where it cannot be evaluated (overflow,
/// division by zero). The same rules as `mra_codegen::tune::Expr::eval`.
fn holds(c: &Cond, env: &dyn Fn(&str) -> Option<i64>) -> Option<bool> {
    let (a, b) = (eval(&c.lhs, env)?, eval(&c.rhs, env)?);
    Some(match c.op.value {
        CmpOp::Le => a <= b,
        CmpOp::Lt => a < b,
        CmpOp::Ge => a >= b,
        CmpOp::Gt => a > b,
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
    })
}

fn eval(t: &Term, env: &dyn Fn(&str) -> Option<i64>) -> Option<i64> {
    match t {
        Term::Int(n) => Some(n.value as i64),
        Term::Name(id) => env(&id.to_string()),
        Term::Bin(a, op, b) => {
            let (a, b) = (eval(a, env)?, eval(b, env)?);
            match op.value {
                BinOp::Add => a.checked_add(b),
                BinOp::Sub => a.checked_sub(b),
                BinOp::Mul => a.checked_mul(b),
                BinOp::Div => a.checked_div(b),
                BinOp::Rem => a.checked_rem(b),
                BinOp::Pow => u32::try_from(b).ok().and_then(|e| a.checked_pow(e)),
            }
        }
    }
}

fn thread_count(n: Sp<u32>, errors: &mut Errors) {
    if !(1..=words::MAX_THREADS).contains(&n.value) {
        errors.push(
            n.span,
            format!(
                "a block has 1..={} threads; found {}",
                words::MAX_THREADS,
                n.value
            ),
        );
    }
}

/// What every level needs and which primitives exclude each other.
fn check_combination(level: &Level, errors: &mut Errors) {
    let find = |name: &str| level.prims.iter().find(|p| p.name() == name);
    let id = &level.ident;
    if find("threads").is_none() {
        errors.push(id.span(), format!("level `{id}` has no threads(..); every level sets the block size, e.g. threads(128)"));
    }
    let bind = find("bind");
    // copy (the bandwidth floor: one read and one write per element) and library (vendor
    // BLAS calls) say how the whole level runs: nothing but threads(..) goes with them.
    if let Some(whole) = find("copy").or_else(|| find("library")) {
        let why = if whole.name() == "copy" {
            "the copy level only reads and writes each tensor once"
        } else {
            "a library level is vendor BLAS calls; threads(..) sizes its setup kernel"
        };
        // `bound`: the copy beside the fewest matrix instructions (shadow_mma), whose shape
        // tensorize(mma) takes from the arch table as the transform levels' does.
        let shadow = whole.name() == "copy" && find("shadow_mma").is_some();
        for prim in &level.prims {
            let with_shadow = shadow && matches!(prim.name(), "shadow_mma" | "tensorize");
            if prim.name() != "threads" && prim.name() != whole.name() && !with_shadow {
                errors.push(
                    prim.ident.span(),
                    format!(
                        "`{}` cannot be combined with {}(..) (line {}): {why}",
                        prim.name(),
                        whole.name(),
                        whole.ident.span().start().line
                    ),
                );
            }
        }
    } else if bind.is_none() {
        errors.push(
            id.span(),
            format!(
                "level `{id}` computes nothing: a transform level needs bind(threads, elements|rows) or \
                 bind(warps, tiles), the copy level needs copy(vector = N)"
            ),
        );
    }
    if let (
        Some(tile),
        Some(Prim {
            kind: PrimKind::Bind { map, .. },
            ..
        }),
    ) = (find("register_tile"), bind)
    {
        if map.value == ThreadMap::Elements {
            errors.push(
                tile.ident.span(),
                "a register tile of whole rows needs bind(threads, rows), but this level has bind(threads, elements)",
            );
        }
    }
    let tensorize = find("tensorize");
    for p in level.prims.iter() {
        if let PrimKind::Unroll { loop_, .. } = &p.kind {
            if loop_.value == crate::ast::Loop::Rows && tensorize.is_none() {
                errors.push(loop_.span, "unroll(rows, by = N) jams the row tiles of a wave: it needs bind(warps, tiles) and tensorize(mma)");
            }
        }
    }
    match (tensorize, bind) {
        (Some(t), Some(Prim { kind: PrimKind::Bind { map, .. }, .. })) if map.value != ThreadMap::Tiles => errors.push(
            t.ident.span(),
            "tensorize(..) computes tiles with matrix instructions, one warp each: it needs bind(warps, tiles)",
        ),
        (None, Some(Prim { kind: PrimKind::Bind { map, .. }, .. })) if map.value == ThreadMap::Tiles => errors.push(
            map.span,
            "bind(warps, tiles) hands warps the tiles of a matrix instruction: add tensorize(mma) or tensorize(wmma)",
        ),
        _ => {}
    }
    if let Some(t) = tensorize {
        for name in ["register_tile", "cache_write"] {
            if let Some(p) = find(name) {
                errors.push(
                    p.ident.span(),
                    format!(
                        "`{name}` is for thread-mapped levels; with tensorize(..) (line {}) the accumulators are the instruction's fragments",
                        t.ident.span().start().line
                    ),
                );
            }
        }
    }
    for p in level.prims.iter() {
        if let PrimKind::CacheRead { operand, into, .. } = &p.kind {
            if into.value == Memory::Registers {
                if operand.value != crate::ast::Operand::B {
                    errors.push(operand.span, "only B can be held in registers (its fragments are reused by every tile)");
                } else if tensorize.is_none() {
                    errors.push(into.span, "cache_read(B, registers) keeps B's matrix fragments in registers: it needs tensorize(mma)");
                }
            }
        }
    }
    if let Some(x) = find("fuse_k") {
        let mma = matches!(tensorize, Some(Prim { kind: PrimKind::Tensorize(core), .. }) if core.value == crate::ast::MatrixCore::Mma);
        if !mma {
            errors.push(x.ident.span(), "fuse_k(N) issues N k-steps of the matrix instruction as one: it needs tensorize(mma)");
        }
    }
    if let Some(x) = find("fma_tail") {
        let mma = matches!(tensorize, Some(Prim { kind: PrimKind::Tensorize(core), .. }) if core.value == crate::ast::MatrixCore::Mma);
        let b_registers = level.prims.iter().any(|p| matches!(&p.kind, PrimKind::CacheRead { operand, into, .. } if operand.value == crate::ast::Operand::B && into.value == Memory::Registers));
        if !mma || !b_registers {
            errors.push(x.ident.span(), "fma_tail(1) computes the last columns with B's tail column in registers: it needs tensorize(mma) and cache_read(B, registers)");
        }
    }
    if let Some(x) = find("shadow_mma") {
        let mma = matches!(tensorize, Some(Prim { kind: PrimKind::Tensorize(core), .. }) if core.value == crate::ast::MatrixCore::Mma);
        if find("copy").is_none() || !mma {
            errors.push(x.ident.span(), "shadow_mma(..) issues matrix instructions beside a copy: it needs copy(..) and tensorize(mma)");
        }
    }
    if let (Some(x), None, None) = (find("bulk_copy"), find("pipeline"), find("split_output")) {
        errors.push(x.ident.span(), "bulk_copy(..) chooses how pipeline(N) copies the next tensors (or split_output(N) its slices): add pipeline(N)");
    }
    for x in ["chain", "prefetch_l2"].into_iter().filter_map(&find) {
        if find("split_output").is_none() {
            errors.push(x.ident.span(), format!("{}(..) shapes the passes of split_output(N): add split_output(2)", x.name()));
        }
    }
    if let (Some(x), None) = (find("co_schedule"), find("split_output")) {
        errors.push(x.ident.span(), "co_schedule(..) launches the blocks of split_output(N) together: add split_output(2)");
    }
    for b in ["buffers", "pipeline", "tensors", "cluster", "split_cols", "align_runs", "pair_rows", "swap_operands", "bulk_copy", "stack", "split_output", "coalesce_c", "stage_terms", "restage_a"].into_iter().filter_map(&find) {
        let shared_workspace = level.prims.iter().any(|p| matches!(&p.kind, PrimKind::Workspace(m) if m.value == Memory::Shared));
        let staged_a = level.prims.iter().any(|p| matches!(&p.kind, PrimKind::CacheRead { operand, into, .. } if operand.value == crate::ast::Operand::A && into.value == Memory::Shared));
        if tensorize.is_none() || !shared_workspace || !staged_a {
            errors.push(
                b.ident.span(),
                format!("`{}` shapes the fused passes: it needs tensorize(mma), cache_read(A, shared) and workspace(shared)", b.name()),
            );
        }
    }
    if let (Some(x), None) = (find("late_wait"), find("cluster")) {
        errors.push(x.ident.span(), "late_wait(..) places the cluster barrier wait of cluster(N)'s pass 0: add cluster(N)");
    }
    if let (Some(x), None) = (find("async_exchange"), find("cluster")) {
        errors.push(x.ident.span(), "async_exchange(..) chooses how the blocks of cluster(N) exchange pass 0's output: add cluster(N)");
    }
    if let (Some(x), Some(c)) = (find("persistent"), find("cluster")) {
        errors.push(
            x.ident.span(),
            format!("persistent(..) counts resident blocks per SM; cluster(N) (line {}) places its blocks by cluster: use one or the other", c.ident.span().start().line),
        );
    }
    if let (Some(x), None) = (find("stack"), find("pipeline")) {
        errors.push(x.ident.span(), "stack(..) widens the passes of pipeline(N)'s batch loop to groups of tensors: add pipeline(2)");
    }
    for other in ["cluster", "tensors"] {
        if let (Some(x), Some(c)) = (find("stack"), find(other)) {
            errors.push(
                x.ident.span(),
                format!("stack(..) puts several tensors in one block's passes; {other}(N) (line {}) splits the block's work another way: use one or the other", c.ident.span().start().line),
            );
        }
    }
    if let (Some(x), Some(c)) = (find("align_runs"), find("cluster")) {
        errors.push(
            x.ident.span(),
            format!("align_runs(..) pads the runs of whole-tensor intermediates; cluster(N) (line {}) keeps its slices' layout", c.ident.span().start().line),
        );
    }
    if let (Some(write), None) = (find("cache_write"), find("register_tile")) {
        errors.push(
            write.ident.span(),
            "cache_write(C, ..) stages the rows of a register tile; add register_tile(cols) (with bind(threads, rows))",
        );
    }
}

/// Two levels of one invocation must not share a function name, a number or a printed name.
fn check_unique(levels: &Levels, errors: &mut Errors) {
    let mut fns: HashMap<String, &Level> = HashMap::new();
    let mut names: HashMap<String, &Level> = HashMap::new();
    for level in &levels.0 {
        let f = level.fn_name();
        if let Some(first) = fns.get(&f) {
            errors.push(
                level.ident.span(),
                format!(
                    "level `{}` would define `fn {f}` a second time (level `{}`, line {})",
                    level.ident,
                    first.ident,
                    first.ident.span().start().line
                ),
            );
        } else {
            fns.insert(f, level);
        }
        let name = level.name.value();
        if let Some(first) = names.get(&name) {
            errors.push(
                level.name.span(),
                format!(
                    "level name \"{name}\" is already used by level `{}`",
                    first.ident
                ),
            );
        } else {
            names.insert(name, level);
        }
    }
}

fn operand_word(o: crate::ast::Operand) -> &'static str {
    match o {
        crate::ast::Operand::A => "A",
        crate::ast::Operand::B => "B",
        crate::ast::Operand::C => "C",
    }
}

fn loop_word(l: crate::ast::Loop) -> &'static str {
    match l {
        crate::ast::Loop::Cols => "cols",
        crate::ast::Loop::K => "k",
        crate::ast::Loop::Rows => "rows",
    }
}
