//! `schedule!`: each optimization level of the MRA transform written as a short schedule.
//!
//! ```text
//! mra_dsl::schedule! {
//!     /// Each thread owns a whole output row: acc[K] in registers, B in shared memory.
//!     level L3 "L3-regblk" {
//!         threads(128);
//!         bind(threads, rows);
//!         cache_read(B, shared);
//!         register_tile(cols);
//!         unroll(k);
//!         workspace(global);
//!     }
//! }
//! ```
//!
//! expands to `pub fn l3() -> ::mra_codegen::ir::Schedule`, which builds the IR value (see
//! `mra-codegen/src/ir.rs`). The grammar is in [`parse`], the rules a schedule must follow in
//! [`check`], the generated code in [`expand`]. Every mistake is a compile error at the token
//! that caused it.
//!
//! This file is only the `proc_macro` ↔ `proc_macro2` bridge: everything else works on
//! `proc_macro2` types so that it can be unit-tested outside the compiler.

mod ast;
mod check;
mod expand;
mod parse;
mod words;

use proc_macro::TokenStream;

/// Defines one or more optimization levels; each `level` item becomes a
/// `pub fn <name>() -> ::mra_codegen::ir::Schedule`. See the crate docs for the grammar.
#[proc_macro]
pub fn schedule(input: TokenStream) -> TokenStream {
    schedule2(input.into()).into()
}

/// The whole macro on `proc_macro2` tokens: parse, check, expand; errors become
/// `compile_error!` invocations spanned at the offending tokens.
fn schedule2(input: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    let levels = match syn::parse2::<ast::Levels>(input) {
        Ok(levels) => levels,
        Err(e) => return e.to_compile_error(),
    };
    if let Err(e) = check::check(&levels) {
        return e.to_compile_error();
    }
    expand::expand(&levels)
}

#[cfg(test)]
mod tests;
