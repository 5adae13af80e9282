//! The parsed schedule: a small mirror of `mra_codegen::ir` that keeps the span of every token.
//!
//! The macro cannot use the IR types themselves (mra-codegen depends on this crate), and the
//! checks need spans to point at the offending token, so the AST keeps its own enums and
//! [`expand`](crate::expand) maps them onto `::mra_codegen::ir` paths.

use proc_macro2::{Ident, Span};
use syn::{Attribute, LitStr};

/// Everything inside one `schedule! { ... }`.
pub struct Levels(pub Vec<Level>);

/// `/// doc` `level L3 "L3-regblk" { steps }`.
pub struct Level {
    /// Outer attributes, doc comments included; they are put on the generated fn as written.
    pub attrs: Vec<Attribute>,
    /// The doc comment lines, trimmed, blank ones dropped, joined with spaces.
    pub summary: String,
    /// `L3` or a plain name such as `copy`.
    pub ident: Ident,
    /// `Some(3)` for `L3`, `None` for a named level.
    pub number: Option<u32>,
    /// The printed name, e.g. `"L3-regblk"`.
    pub name: LitStr,
    /// The primitives in the order written.
    pub prims: Vec<Prim>,
}

impl Level {
    /// The name of the generated function: `l3` for `L3`, the identifier itself otherwise.
    pub fn fn_name(&self) -> String {
        match self.number {
            Some(n) => format!("l{n}"),
            None => self.ident.to_string(),
        }
    }
}

/// A value together with the span of the token it was read from.
#[derive(Clone, Copy, Debug)]
pub struct Sp<T> {
    pub value: T,
    pub span: Span,
}

/// One `primitive(args);` statement.
pub struct Prim {
    /// The primitive's identifier: errors about the whole primitive point here and the IR
    /// records its line.
    pub ident: Ident,
    pub kind: PrimKind,
}

impl Prim {
    /// The primitive's name as written (`threads`, `cache_read`, ...).
    pub fn name(&self) -> &'static str {
        match self.kind {
            PrimKind::Threads(_) => "threads",
            PrimKind::Bind { .. } => "bind",
            PrimKind::CacheRead { .. } => "cache_read",
            PrimKind::CacheWrite { .. } => "cache_write",
            PrimKind::Tensorize(_) => "tensorize",
            PrimKind::RegisterTile(_) => "register_tile",
            PrimKind::Unroll(_) => "unroll",
            PrimKind::Workspace(_) => "workspace",
            PrimKind::Copy { .. } => "copy",
            PrimKind::Library(_) => "library",
            PrimKind::Buffers(_) => "buffers",
            PrimKind::Pipeline(_) => "pipeline",
            PrimKind::Tensors(_) => "tensors",
        }
    }
}

/// The arguments of each primitive, already mapped from words to enums.
pub enum PrimKind {
    Threads(Threads),
    Bind {
        /// The map implies the unit: `tiles` go to warps, `elements`/`rows` to threads.
        map: Sp<ThreadMap>,
    },
    CacheRead {
        operand: Sp<Operand>,
        into: Sp<Memory>,
        /// `pad = N` if written: the span of the word `pad` and the value.
        pad: Option<(Span, Sp<u32>)>,
    },
    Tensorize(Sp<MatrixCore>),
    CacheWrite {
        operand: Sp<Operand>,
        into: Sp<Memory>,
        pad: Option<(Span, Sp<u32>)>,
    },
    RegisterTile(Sp<Loop>),
    Unroll(Sp<Loop>),
    Workspace(Sp<Memory>),
    Copy {
        vector: Sp<u32>,
    },
    Library(Sp<LibraryCall>),
    /// `buffers(N)`: shared intermediate buffers of the fused passes (1: a pass writes over
    /// its input). Same value forms as `threads`.
    Buffers(Threads),
    /// `pipeline(N)`: tensors in flight per block (2: the next one loads while this one computes).
    Pipeline(Threads),
    /// `tensors(N)`: tensors a block works on at once, one per warp group with its own named
    /// barrier, so one group's barrier waits overlap another group's work.
    Tensors(Threads),
}

/// `threads(N)` or `threads(tune = [..], default = N)`.
pub enum Threads {
    Fixed(Sp<u32>),
    Tune {
        /// The whole `[..]` list, for errors about the list as a whole (e.g. empty).
        list: Span,
        choices: Vec<Sp<u32>>,
        default: Sp<u32>,
    },
}

/// What a `bind` distributes over (the first argument of `bind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindUnit {
    Threads,
    Warps,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LibraryCall {
    Kronecker,
    ThreeGemm,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatrixCore {
    Mma,
    Wmma,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadMap {
    Elements,
    Rows,
    Tiles,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    A,
    B,
    C,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Memory {
    Global,
    Shared,
    Registers,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loop {
    Cols,
    K,
}
