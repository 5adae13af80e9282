//! The rules a well-formed schedule follows beyond its grammar: value ranges, each primitive at
//! most once, the primitives every level needs, and the combinations that make no sense.
//!
//! All violations are collected (not just the first) and each one points at the token to fix.

use crate::ast::{Level, Levels, Memory, Prim, PrimKind, Sp, ThreadMap, Threads};
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
}

/// Each primitive at most once; `unroll` once per loop. The second one is the error.
fn check_duplicates(level: &Level, errors: &mut Errors) {
    let mut seen: HashMap<String, &Prim> = HashMap::new();
    for prim in &level.prims {
        let key = match &prim.kind {
            PrimKind::Unroll(l) => format!("unroll({})", loop_word(l.value)),
            // A and B are staged independently: one cache_read each.
            PrimKind::CacheRead { operand, .. } => format!("cache_read({})", operand_word(operand.value)),
            _ => prim.name().to_string(),
        };
        if let Some(first) = seen.get(&key) {
            let what = match prim.kind {
                PrimKind::Unroll(_) | PrimKind::CacheRead { .. } => format!("`{key}` appears twice"),
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
    match &prim.kind {
        PrimKind::Buffers(v) | PrimKind::Pipeline(v) | PrimKind::Tensors(v) => {
            let what = prim.name();
            let (values, default) = match v {
                Threads::Fixed(n) => (vec![*n], None),
                Threads::Tune { choices, default, .. } => (choices.clone(), Some(*default)),
            };
            let max = match what {
                "buffers" => 9,
                // Named barriers 1..=GROUPS (0 is the block barrier; the hardware has 16).
                "tensors" => 4,
                _ => 8,
            };
            for n in &values {
                if !(1..=max).contains(&n.value) {
                    errors.push(n.span, format!("{what}({}): takes 1 to {max}", n.value));
                }
            }
            if let Some(d) = default {
                if !values.iter().any(|c| c.value == d.value) {
                    errors.push(d.span, format!("the default of {what} ({}) is not among the choices", d.value));
                }
            }
        }
        PrimKind::Threads(Threads::Fixed(n)) => thread_count(*n, errors),
        PrimKind::Threads(Threads::Tune {
            list,
            choices,
            default,
        }) => {
            if choices.is_empty() {
                errors.push(
                    *list,
                    "the list of thread counts to tune over is empty; e.g. `[64, 128, 256]`",
                );
            }
            for (i, c) in choices.iter().enumerate() {
                thread_count(*c, errors);
                if choices[..i].iter().any(|p| p.value == c.value) {
                    errors.push(c.span, format!("thread count {} is listed twice", c.value));
                }
            }
            if !choices.is_empty() && !choices.iter().any(|c| c.value == default.value) {
                let list: Vec<String> = choices.iter().map(|c| c.value.to_string()).collect();
                errors.push(
                    default.span,
                    format!(
                        "the default thread count {} is not among the choices [{}]",
                        default.value,
                        list.join(", ")
                    ),
                );
            }
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
        } if into.value != Memory::Shared && pad.value != 0 => {
            errors.push(
                *word,
                "`pad` only applies to cache_read into shared memory (it avoids bank conflicts)",
            );
        }
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
        for prim in &level.prims {
            if prim.name() != "threads" && prim.name() != whole.name() {
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
    for b in ["buffers", "pipeline", "tensors"].into_iter().filter_map(|name| find(name)) {
        let shared_workspace = level.prims.iter().any(|p| matches!(&p.kind, PrimKind::Workspace(m) if m.value == Memory::Shared));
        let staged_a = level.prims.iter().any(|p| matches!(&p.kind, PrimKind::CacheRead { operand, into, .. } if operand.value == crate::ast::Operand::A && into.value == Memory::Shared));
        if tensorize.is_none() || !shared_workspace || !staged_a {
            errors.push(
                b.ident.span(),
                format!("`{}` shapes the fused passes: it needs tensorize(mma), cache_read(A, shared) and workspace(shared)", b.name()),
            );
        }
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
    }
}
