//! The generated code: one `pub fn` per level that builds its `::mra_codegen::ir::Schedule`.
//!
//! Every path is absolute (`::mra_codegen`, `::core`, `::std`) so the output works in any module,
//! including mra-codegen itself (it has `extern crate self as mra_codegen;`).

use crate::ast::{BinOp, CmpOp, Cond, Level, Levels, LibraryCall, Loop, MatrixCore, Memory, Operand, Prim, PrimKind, Term, ThreadMap, Val};
use std::collections::HashMap;
use proc_macro2::{Ident, TokenStream};
use quote::quote;

pub fn expand(levels: &Levels) -> TokenStream {
    levels.0.iter().map(level).collect()
}

fn level(level: &Level) -> TokenStream {
    let attrs = &level.attrs;
    // Spanned at the level identifier, so that e.g. a clash with another fn points there.
    let fn_name = Ident::new(&level.fn_name(), level.ident.span());
    let number = match level.number {
        Some(n) => quote!(::core::option::Option::Some(#n)),
        None => quote!(::core::option::Option::None),
    };
    let name = level.name.value();
    let summary = &level.summary;
    // Fixed values by parameter name: a constraint that names one gets its number.
    let fixed: HashMap<String, u32> = level
        .prims
        .iter()
        .flat_map(Prim::values)
        .filter_map(|(n, v)| match v {
            Val::Fixed(x) => Some((n, x.value)),
            Val::Tune { .. } => None,
        })
        .collect();
    let steps = level.prims.iter().map(|p| {
        let item = step(p, &fixed);
        // The identifier's line: the IR points generated code back at the schedule line.
        let line = p.ident.span().start().line as u32;
        quote!(::mra_codegen::ir::Located { item: #item, line: #line })
    });
    quote! {
        #(#attrs)*
        pub fn #fn_name() -> ::mra_codegen::ir::Schedule {
            ::mra_codegen::ir::Schedule {
                number: #number,
                name: ::std::string::String::from(#name),
                summary: ::std::string::String::from(#summary),
                steps: ::std::vec![#(#steps),*],
                // file!() expands where schedule! was invoked: the schedule's own file.
                file: ::std::string::String::from(::core::file!()),
            }
        }
    }
}

/// The `::mra_codegen::ir::Value` of argument `v`, a parameter named `name` if tuned.
fn value(name: &str, v: &Val) -> TokenStream {
    let ir = quote!(::mra_codegen::ir);
    match v {
        Val::Fixed(n) => {
            let n = n.value;
            quote!(#ir::Value::Fixed(#n))
        }
        Val::Tune { choices, default, default_when, .. } => {
            let choices = choices.iter().map(|c| c.value);
            let default = default.value;
            // Conditions name built-ins only (check.rs), so no fixed values to substitute.
            let branches = default_when.iter().map(|(c, v)| {
                let when = constraint(c, &HashMap::new());
                let v = v.value;
                quote!(#ir::DefaultWhen { when: #when, value: #v })
            });
            quote!(#ir::Value::Tunable {
                name: ::std::string::String::from(#name),
                choices: ::std::vec![#(#choices),*],
                default: #default,
                default_when: ::std::vec![#(#branches),*],
                chosen: false,
            })
        }
    }
}

/// The `::mra_codegen::tune::Constraint` of a condition (`fixed` values substituted).
fn constraint(c: &Cond, fixed: &HashMap<String, u32>) -> TokenStream {
    let tune = quote!(::mra_codegen::tune);
    let (lhs, rhs) = (term(&c.lhs, fixed), term(&c.rhs, fixed));
    let op = match c.op.value {
        CmpOp::Le => quote!(Le),
        CmpOp::Lt => quote!(Lt),
        CmpOp::Ge => quote!(Ge),
        CmpOp::Gt => quote!(Gt),
        CmpOp::Eq => quote!(Eq),
        CmpOp::Ne => quote!(Ne),
    };
    let text = &c.text;
    quote!(#tune::Constraint {
        lhs: #lhs,
        op: #tune::CmpOp::#op,
        rhs: #rhs,
        text: ::std::string::String::from(#text),
    })
}

/// The value of the `i`-th numeric argument of `prim` (see [`Prim::values`]).
fn nth_value(prim: &Prim, i: usize) -> TokenStream {
    let values = prim.values();
    let (name, v) = &values[i];
    value(name, v)
}

fn term(t: &Term, fixed: &HashMap<String, u32>) -> TokenStream {
    let tune = quote!(::mra_codegen::tune);
    match t {
        Term::Int(n) => {
            let n = n.value as i64;
            quote!(#tune::Expr::Int(#n))
        }
        Term::Name(id) => match fixed.get(&id.to_string()) {
            Some(&n) => {
                let n = n as i64;
                quote!(#tune::Expr::Int(#n))
            }
            None => {
                let n = id.to_string();
                quote!(#tune::Expr::Name(::std::string::String::from(#n)))
            }
        },
        Term::Bin(a, op, b) => {
            let (a, b) = (term(a, fixed), term(b, fixed));
            let op = match op.value {
                BinOp::Add => quote!(Add),
                BinOp::Sub => quote!(Sub),
                BinOp::Mul => quote!(Mul),
                BinOp::Div => quote!(Div),
                BinOp::Rem => quote!(Rem),
                BinOp::Pow => quote!(Pow),
            };
            quote!(#tune::Expr::Bin(::std::boxed::Box::new(#a), #tune::BinOp::#op, ::std::boxed::Box::new(#b)))
        }
    }
}

fn step(prim: &Prim, fixed: &HashMap<String, u32>) -> TokenStream {
    let ir = quote!(::mra_codegen::ir);
    let fixed0 = quote!(#ir::Value::Fixed(0u32));
    match &prim.kind {
        PrimKind::Threads(_) => {
            let v = nth_value(prim, 0);
            quote!(#ir::Step::Threads(#v))
        }
        PrimKind::LaunchBounds { .. } => {
            let v = nth_value(prim, 0);
            quote!(#ir::Step::LaunchBounds { min_blocks: #v })
        }
        PrimKind::Constraint(c) => {
            let c = constraint(c, fixed);
            quote!(#ir::Step::Constraint(#c))
        }
        PrimKind::Bind { map, .. } => {
            // The map implies the unit (tiles are bound to warps, the others to threads), so
            // the IR keeps only the map.
            let map = thread_map(map.value);
            quote!(#ir::Step::Bind(#ir::ThreadMap::#map))
        }
        PrimKind::Library(call) => {
            let call = match call.value {
                LibraryCall::Kronecker => quote!(Kronecker),
                LibraryCall::ThreeGemm => quote!(ThreeGemm),
            };
            quote!(#ir::Step::Library(#ir::LibraryCall::#call))
        }
        PrimKind::Tensorize(core) => {
            let core = match core.value {
                MatrixCore::Mma => quote!(Mma),
                MatrixCore::Wmma => quote!(Wmma),
            };
            quote!(#ir::Step::Tensorize(#ir::MatrixCore::#core))
        }
        PrimKind::CacheRead { operand, into, pad } => {
            let operand = operand_variant(operand.value);
            let into = memory(into.value);
            let pad = if pad.is_some() { nth_value(prim, 0) } else { fixed0 };
            quote!(#ir::Step::CacheRead {
                operand: #ir::Operand::#operand,
                into: #ir::Memory::#into,
                pad: #pad,
            })
        }
        PrimKind::CacheWrite { operand, into, pad } => {
            let operand = operand_variant(operand.value);
            let into = memory(into.value);
            let pad = if pad.is_some() { nth_value(prim, 0) } else { fixed0 };
            quote!(#ir::Step::CacheWrite {
                operand: #ir::Operand::#operand,
                into: #ir::Memory::#into,
                pad: #pad,
            })
        }
        PrimKind::RegisterTile(l) => {
            let l = loop_variant(l.value);
            quote!(#ir::Step::RegisterTile(#ir::Loop::#l))
        }
        PrimKind::Unroll { loop_, by } => {
            let l = loop_variant(loop_.value);
            let by = if by.is_some() { nth_value(prim, 0) } else { fixed0 };
            quote!(#ir::Step::Unroll(#ir::Loop::#l, #by))
        }
        PrimKind::Workspace(m) => {
            let m = memory(m.value);
            quote!(#ir::Step::Workspace(#ir::Memory::#m))
        }
        PrimKind::Copy { vector } => {
            let v = vector.value;
            quote!(#ir::Step::Copy { vector: #v })
        }
        PrimKind::Pipeline(_) => {
            let v = nth_value(prim, 0);
            quote!(#ir::Step::Pipeline(#v))
        }
        PrimKind::Tensors(_) => {
            let v = nth_value(prim, 0);
            quote!(#ir::Step::Tensors(#v))
        }
        PrimKind::SplitCols(_) => {
            let v = nth_value(prim, 0);
            quote!(#ir::Step::SplitCols(#v))
        }
        PrimKind::Cluster(_) => {
            let v = nth_value(prim, 0);
            quote!(#ir::Step::Cluster(#v))
        }
        PrimKind::AsyncExchange(_) => {
            let v = nth_value(prim, 0);
            quote!(#ir::Step::AsyncExchange(#v))
        }
        PrimKind::AlignRuns(_) => {
            let v = nth_value(prim, 0);
            quote!(#ir::Step::AlignRuns(#v))
        }
        PrimKind::LateWait(_) => {
            let v = nth_value(prim, 0);
            quote!(#ir::Step::LateWait(#v))
        }
        PrimKind::PairRows(_) => {
            let v = nth_value(prim, 0);
            quote!(#ir::Step::PairRows(#v))
        }
        PrimKind::SwapOperands(_) => {
            let v = nth_value(prim, 0);
            quote!(#ir::Step::SwapOperands(#v))
        }
        PrimKind::FmaTail(_) => {
            let v = nth_value(prim, 0);
            quote!(#ir::Step::FmaTail(#v))
        }
        PrimKind::Persistent(_) => {
            let v = nth_value(prim, 0);
            quote!(#ir::Step::Persistent(#v))
        }
        PrimKind::CoalesceC(_) => {
            let v = nth_value(prim, 0);
            quote!(#ir::Step::CoalesceC(#v))
        }
        PrimKind::ShadowMma(_) => {
            let v = nth_value(prim, 0);
            quote!(#ir::Step::ShadowMma(#v))
        }
        PrimKind::SplitOutput(_) => {
            let v = nth_value(prim, 0);
            quote!(#ir::Step::SplitOutput(#v))
        }
        PrimKind::Chain(_) => {
            let v = nth_value(prim, 0);
            quote!(#ir::Step::Chain(#v))
        }
        PrimKind::CoSchedule(_) => {
            let v = nth_value(prim, 0);
            quote!(#ir::Step::CoSchedule(#v))
        }
        PrimKind::PrefetchL2(_) => {
            let v = nth_value(prim, 0);
            quote!(#ir::Step::PrefetchL2(#v))
        }
        PrimKind::StageTerms(_) => {
            let v = nth_value(prim, 0);
            quote!(#ir::Step::StageTerms(#v))
        }
        PrimKind::RestageA(_) => {
            let v = nth_value(prim, 0);
            quote!(#ir::Step::RestageA(#v))
        }
        PrimKind::Stack(_) => {
            let v = nth_value(prim, 0);
            quote!(#ir::Step::Stack(#v))
        }
        PrimKind::BulkCopy(_) => {
            let v = nth_value(prim, 0);
            quote!(#ir::Step::BulkCopy(#v))
        }
        PrimKind::FuseK(_) => {
            let v = nth_value(prim, 0);
            quote!(#ir::Step::FuseK(#v))
        }
        PrimKind::Buffers(_) => {
            let v = nth_value(prim, 0);
            quote!(#ir::Step::Buffers(#v))
        }
    }
}

fn thread_map(m: ThreadMap) -> TokenStream {
    match m {
        ThreadMap::Elements => quote!(Elements),
        ThreadMap::Rows => quote!(Rows),
        ThreadMap::Tiles => quote!(Tiles),
    }
}

fn operand_variant(o: Operand) -> TokenStream {
    match o {
        Operand::A => quote!(A),
        Operand::B => quote!(B),
        Operand::C => quote!(C),
    }
}

fn memory(m: Memory) -> TokenStream {
    match m {
        Memory::Global => quote!(Global),
        Memory::Shared => quote!(Shared),
        Memory::Registers => quote!(Registers),
    }
}

fn loop_variant(l: Loop) -> TokenStream {
    match l {
        Loop::Cols => quote!(Cols),
        Loop::K => quote!(K),
        Loop::Rows => quote!(Rows),
    }
}
