//! The generated code: one `pub fn` per level that builds its `::mra_codegen::ir::Schedule`.
//!
//! Every path is absolute (`::mra_codegen`, `::core`, `::std`) so the output works in any module,
//! including mra-codegen itself (it has `extern crate self as mra_codegen;`).

use crate::ast::{Level, Levels, LibraryCall, Loop, MatrixCore, Memory, Operand, PrimKind, ThreadMap, Threads};
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
    let steps = level.prims.iter().map(|p| {
        let item = step(&p.kind);
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

fn step(kind: &PrimKind) -> TokenStream {
    let ir = quote!(::mra_codegen::ir);
    match kind {
        PrimKind::Threads(Threads::Fixed(n)) => {
            let n = n.value;
            quote!(#ir::Step::Threads(#ir::Value::Fixed(#n)))
        }
        PrimKind::Threads(Threads::Tune {
            choices, default, ..
        }) => {
            let choices = choices.iter().map(|c| c.value);
            let default = default.value;
            quote!(#ir::Step::Threads(#ir::Value::Tunable {
                name: ::std::string::String::from("threads"),
                choices: ::std::vec![#(#choices),*],
                default: #default,
            }))
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
            let pad = pad.map_or(0, |(_, p)| p.value);
            quote!(#ir::Step::CacheRead {
                operand: #ir::Operand::#operand,
                into: #ir::Memory::#into,
                pad: #pad,
            })
        }
        PrimKind::CacheWrite { operand, into, pad } => {
            let operand = operand_variant(operand.value);
            let into = memory(into.value);
            let pad = pad.map_or(0, |(_, p)| p.value);
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
        PrimKind::Unroll(l) => {
            let l = loop_variant(l.value);
            quote!(#ir::Step::Unroll(#ir::Loop::#l))
        }
        PrimKind::Workspace(m) => {
            let m = memory(m.value);
            quote!(#ir::Step::Workspace(#ir::Memory::#m))
        }
        PrimKind::Copy { vector } => {
            let v = vector.value;
            quote!(#ir::Step::Copy { vector: #v })
        }
        PrimKind::Pipeline(Threads::Fixed(n)) => {
            let n = n.value;
            quote!(#ir::Step::Pipeline(#ir::Value::Fixed(#n)))
        }
        PrimKind::Pipeline(Threads::Tune { choices, default, .. }) => {
            let choices = choices.iter().map(|c| c.value);
            let default = default.value;
            quote!(#ir::Step::Pipeline(#ir::Value::Tunable {
                name: ::std::string::String::from("pipeline"),
                choices: ::std::vec![#(#choices),*],
                default: #default,
            }))
        }
        PrimKind::Tensors(Threads::Fixed(n)) => {
            let n = n.value;
            quote!(#ir::Step::Tensors(#ir::Value::Fixed(#n)))
        }
        PrimKind::Tensors(Threads::Tune { choices, default, .. }) => {
            let choices = choices.iter().map(|c| c.value);
            let default = default.value;
            quote!(#ir::Step::Tensors(#ir::Value::Tunable {
                name: ::std::string::String::from("tensors"),
                choices: ::std::vec![#(#choices),*],
                default: #default,
            }))
        }
        PrimKind::Buffers(Threads::Fixed(n)) => {
            let n = n.value;
            quote!(#ir::Step::Buffers(#ir::Value::Fixed(#n)))
        }
        PrimKind::Buffers(Threads::Tune { choices, default, .. }) => {
            let choices = choices.iter().map(|c| c.value);
            let default = default.value;
            quote!(#ir::Step::Buffers(#ir::Value::Tunable {
                name: ::std::string::String::from("buffers"),
                choices: ::std::vec![#(#choices),*],
                default: #default,
            }))
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
    }
}
