//! The grammar, from tokens to [`ast`](crate::ast):
//!
//! ```text
//! schedule  := level+
//! level     := outer-attribute* "level" IDENT STRING "{" (primitive ";")* "}"
//! primitive := "threads"       "(" (VALUE | "tune" "=" "[" ints "]" "," "default" "=" INT) ")"
//!            | "bind"          "(" "threads" "," ("elements" | "rows") ")"
//!            | "cache_read"    "(" ("A" | "B") "," ("shared" | "registers") ("," "pad" "=" VALUE)? ")"
//!            | "register_tile" "(" "cols" ")"
//!            | "unroll"        "(" ("k" | "cols") ("," "by" "=" VALUE)? ")"
//!            | "workspace"     "(" ("global" | "shared") ")"
//!            | "copy"          "(" "vector" "=" INT ")"
//!            | "launch_bounds" "(" "min_blocks" "=" VALUE ")"
//!            | "constraint"    "(" expr ("<=" | "<" | ">=" | ">" | "==" | "!=") expr ")"
//! VALUE     := INT | "tune" "(" "[" ints "]" "," "default" "=" DEFAULT ("," "name" "=" IDENT)? ","? ")"
//! DEFAULT   := INT | ("if" cond "{" INT "}" "else")+ "{" INT "}"      (cond as in `constraint`,
//!              naming K, bytes and the arch's limits only)
//! ints      := (INT ("," INT)* ","?)?
//! expr      := term (("+" | "-") term)*      term := power (("*" | "/" | "%") power)*
//! power     := atom ("^" power)?             atom := INT | IDENT | "(" expr ")"
//!            | "buffers"       "(" VALUE ")"
//!            | "pipeline"      "(" VALUE ")"
//!            | "tensors"       "(" VALUE ")"
//!            | "cluster"       "(" VALUE ")"
//!            | "split_cols"    "(" VALUE ")"
//!            | "async_exchange" "(" VALUE ")"
//!            | "align_runs"    "(" VALUE ")"
//!            | "pair_rows"     "(" VALUE ")"
//!            | "swap_operands" "(" VALUE ")"
//!            | "late_wait"     "(" VALUE ")"
//!            | "fuse_k"        "(" VALUE ")"
//!            | "bulk_copy"     "(" VALUE ")"
//!            | "fma_tail"      "(" VALUE ")"
//!            | "persistent"    "(" VALUE ")"
//!            | "coalesce_c"    "(" VALUE ")"
//!            | "stack"         "(" VALUE ")"
//!            | "shadow_mma"    "(" VALUE ")"
//!            | "split_output"  "(" VALUE ")"
//!            | "chain"         "(" VALUE ")"
//!            | "co_schedule"   "(" VALUE ")"
//!            | "prefetch_l2"   "(" VALUE ")"
//!            | "stage_terms"   "(" VALUE ")"
//!            | "restage_a"     "(" VALUE ")"
//! ```
//!
//! A VALUE may be tuned: `tune([0, 1, 4], default = 4)` declares a parameter the auto-tuner
//! searches (named after its position, e.g. `pad_a`, or `name = ..`); a constraint's
//! identifiers are such parameters, the fixed values of the level by the same names, `K`,
//! `bytes` (of the dtype), the arch's `shared`, `wave`, `max_threads`, `registers`, and
//! `fuse_k_max` (the most k-steps one matrix instruction of the arch takes: 4 for sm_90 f64),
//! `bulk_copies` (1 where the arch has bulk asynchronous copies, sm_90; else 0), `row_pairs` (1
//! where the arch's matrix instruction has rows for `pair_rows(1)` to pair, NVIDIA m16n8k*; else 0).
//!
//! Every argument list may end with a trailing comma. INT is an unsuffixed integer literal that
//! fits in u32. IDENT `L<digits>` is a numbered level, any other identifier a named one. Outer
//! attributes are copied onto the generated fn; the doc comments also become the summary.
//!
//! Only the shape is checked here, and which words each position accepts (`cache_read(_,
//! global)` is recognised, to say why it is wrong); value ranges and the rules between
//! primitives are in [`check`](crate::check).

use crate::ast::{BinOp, BindUnit, CmpOp, Cond, Level, Levels, Prim, PrimKind, Sp, Term, Val};
use crate::words::{self, Table};
use proc_macro2::{Ident, Span, TokenTree};
use syn::parse::{Parse, ParseStream, Parser};
use syn::{
    braced, bracketed, parenthesized, token, Attribute, Error, Expr, Lit, LitInt, LitStr, Meta, Result,
    Token,
};

mod kw {
    syn::custom_keyword!(level);
}

impl Parse for Levels {
    fn parse(input: ParseStream) -> Result<Self> {
        if input.is_empty() {
            return Err(Error::new(
                Span::call_site(),
                "schedule! needs at least one `level L<n> \"name\" { ... }`",
            ));
        }
        let mut levels = Vec::new();
        while !input.is_empty() {
            levels.push(input.parse()?);
        }
        Ok(Levels(levels))
    }
}

impl Parse for Level {
    fn parse(input: ParseStream) -> Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let summary = summary(&attrs);
        if !input.peek(kw::level) {
            return Err(input.error(
                "expected `level`: a schedule is a list of `level L<n> \"name\" { ... }` items",
            ));
        }
        input.parse::<kw::level>()?;

        if !input.peek(syn::Ident) {
            return Err(input.error("expected the level's identifier, e.g. `L3` or `copy`"));
        }
        let ident: Ident = input.parse()?;
        let number = level_number(&ident)?;

        if !input.peek(LitStr) {
            return Err(
                input.error("expected the level's name as a string literal, e.g. \"L3-regblk\"")
            );
        }
        let name: LitStr = input.parse()?;

        if !input.peek(token::Brace) {
            return Err(input.error("expected `{` and the level's schedule steps"));
        }
        let body;
        syn::braced!(body in input);
        let mut prims = Vec::new();
        while !body.is_empty() {
            prims.push(parse_prim(&body)?);
        }
        Ok(Level {
            attrs,
            summary,
            ident,
            number,
            name,
            prims,
        })
    }
}

/// The doc comment lines (`/// text` is `#[doc = " text"]`), trimmed and joined with spaces;
/// blank lines (paragraph breaks) are dropped so that no double spaces appear.
fn summary(attrs: &[Attribute]) -> String {
    let mut lines = Vec::new();
    for attr in attrs {
        if let Meta::NameValue(nv) = &attr.meta {
            if nv.path.is_ident("doc") {
                if let Expr::Lit(syn::ExprLit {
                    lit: Lit::Str(s), ..
                }) = &nv.value
                {
                    // A `/** */` block comment carries several lines in one attribute.
                    for line in s.value().lines() {
                        let line = line.trim();
                        if !line.is_empty() {
                            lines.push(line.to_string());
                        }
                    }
                }
            }
        }
    }
    lines.join(" ")
}

/// `L<digits>` is level number `<digits>`; anything else is a level selected by name only.
fn level_number(ident: &Ident) -> Result<Option<u32>> {
    let s = ident.to_string();
    let Some(digits) = s.strip_prefix('L') else {
        return Ok(None);
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(None);
    }
    digits.parse::<u32>().map(Some).map_err(|_| {
        Error::new(
            ident.span(),
            format!("level number {digits} does not fit in u32"),
        )
    })
}

/// One `primitive(args);`.
fn parse_prim(input: ParseStream) -> Result<Prim> {
    if !input.peek(syn::Ident) {
        return Err(input.error(format!(
            "expected a schedule primitive, one of: {}",
            words::PRIMITIVES.join(", ")
        )));
    }
    let ident: Ident = input.parse()?;
    let Some(&prim) = words::PRIMITIVES.iter().find(|p| ident == **p) else {
        return Err(Error::new(
            ident.span(),
            format!(
                "unknown schedule primitive `{ident}`; expected one of: {}",
                words::PRIMITIVES.join(", ")
            ),
        ));
    };
    if !input.peek(token::Paren) {
        return Err(input.error(format!(
            "expected `(` after `{prim}`: write {}",
            words::signature(prim)
        )));
    }
    let content;
    let parens = parenthesized!(content in input);
    let mut args = Args {
        input: &content,
        prim,
        parens: parens.span.join(),
        count: 0,
        after_key: false,
    };
    let kind = match prim {
        "threads" => PrimKind::Threads(numeric(&mut args, "thread count")?),
        "buffers" => PrimKind::Buffers(numeric(&mut args, "buffer count")?),
        "pipeline" => PrimKind::Pipeline(numeric(&mut args, "pipeline depth")?),
        "tensors" => PrimKind::Tensors(numeric(&mut args, "tensors per block")?),
        "cluster" => PrimKind::Cluster(numeric(&mut args, "blocks per cluster")?),
        "split_cols" => PrimKind::SplitCols(numeric(&mut args, "warps per row tile")?),
        "stack" => PrimKind::Stack(numeric(&mut args, "tensors per pass")?),
        "split_output" => PrimKind::SplitOutput(numeric(&mut args, "blocks per tensor")?),
        "prefetch_l2" => PrimKind::PrefetchL2(numeric(&mut args, "slices ahead")?),
        "stage_terms" => PrimKind::StageTerms(numeric(&mut args, "terms in flight")?),
        "restage_a" => PrimKind::RestageA(numeric(&mut args, words::switch_meaning(prim))?),
        "chain" => PrimKind::Chain(numeric(&mut args, words::switch_meaning(prim))?),
        "co_schedule" => PrimKind::CoSchedule(numeric(&mut args, words::switch_meaning(prim))?),
        "async_exchange" => PrimKind::AsyncExchange(numeric(&mut args, words::switch_meaning(prim))?),
        "align_runs" => PrimKind::AlignRuns(numeric(&mut args, words::switch_meaning(prim))?),
        "late_wait" => PrimKind::LateWait(numeric(&mut args, words::switch_meaning(prim))?),
        "pair_rows" => PrimKind::PairRows(numeric(&mut args, words::switch_meaning(prim))?),
        "swap_operands" => PrimKind::SwapOperands(numeric(&mut args, words::switch_meaning(prim))?),
        "bulk_copy" => PrimKind::BulkCopy(numeric(&mut args, words::switch_meaning(prim))?),
        "fma_tail" => PrimKind::FmaTail(numeric(&mut args, words::switch_meaning(prim))?),
        "persistent" => PrimKind::Persistent(numeric(&mut args, words::switch_meaning(prim))?),
        "coalesce_c" => PrimKind::CoalesceC(numeric(&mut args, words::switch_meaning(prim))?),
        "shadow_mma" => PrimKind::ShadowMma(numeric(&mut args, words::switch_meaning(prim))?),
        "fuse_k" => PrimKind::FuseK(numeric(&mut args, "k-steps per instruction (1, 2 or 4)")?),
        "bind" => {
            let unit = args.word("bound unit", words::BIND_UNITS)?;
            let map = match unit.value {
                BindUnit::Threads => args.word("thread map", words::THREAD_MAPS)?,
                BindUnit::Warps => args.word("warp map", words::WARP_MAPS)?,
            };
            PrimKind::Bind { map }
        }
        "tensorize" => PrimKind::Tensorize(args.word("matrix core", words::MATRIX_CORES)?),
        "library" => PrimKind::Library(args.word("library call", words::LIBRARY_CALLS)?),
        "cache_read" => {
            let operand = args.word("operand", words::OPERANDS)?;
            let into_ident = args.ident("memory to cache into", words::CACHE_INTO)?;
            if into_ident == "global" {
                return Err(Error::new(
                    into_ident.span(),
                    format!(
                        "cache_read into global memory stages nothing: the operands already live \
                         there; expected one of: {}",
                        words::list(words::CACHE_INTO)
                    ),
                ));
            }
            let into = lookup(&into_ident, "memory to cache into", prim, words::CACHE_INTO)?;
            let pad = if args.at_end() {
                None
            } else {
                let word = args.key("pad")?;
                Some((word, args.value("padding")?))
            };
            PrimKind::CacheRead { operand, into, pad }
        }
        "cache_write" => {
            let operand = args.word("operand", words::WRITE_OPERANDS)?;
            let into = args.word("memory to stage into", words::WRITE_INTO)?;
            let pad = if args.at_end() {
                None
            } else {
                let word = args.key("pad")?;
                Some((word, args.value("padding")?))
            };
            PrimKind::CacheWrite { operand, into, pad }
        }
        "register_tile" => PrimKind::RegisterTile(args.word("loop", words::REGISTER_TILE_LOOPS)?),
        "unroll" => {
            let loop_ = args.word("loop", words::UNROLL_LOOPS)?;
            let by = if args.at_end() {
                None
            } else {
                let word = args.key("by")?;
                Some((word, args.value("unroll factor")?))
            };
            PrimKind::Unroll { loop_, by }
        }
        "launch_bounds" => {
            args.key("min_blocks")?;
            PrimKind::LaunchBounds { min_blocks: args.value("minimum blocks per multiprocessor")? }
        }
        "constraint" => {
            args.separator()?;
            if args.input.is_empty() {
                return Err(args.missing("condition"));
            }
            PrimKind::Constraint(condition(args.input)?)
        }
        "workspace" => PrimKind::Workspace(args.word("workspace memory", words::WORKSPACES)?),
        "copy" => {
            args.key("vector")?;
            PrimKind::Copy {
                vector: args.int("vector width")?,
            }
        }
        _ => unreachable!("every name in PRIMITIVES is handled"),
    };
    args.finish()?;
    if !input.peek(Token![;]) {
        // Point just after the primitive rather than at whatever comes next (often the next
        // primitive, which would look like the culprit).
        return Err(Error::new(
            parens.span.close(),
            format!("expected `;` after `{prim}(..)`"),
        ));
    }
    input.parse::<Token![;]>()?;
    Ok(Prim { ident, kind })
}

/// The sole argument of `threads`, `buffers`, `pipeline`: `N`, `tune([..], default = N)` or
/// the older `tune = [..], default = N`.
fn numeric(args: &mut Args, what: &str) -> Result<Val> {
    // Nothing has been read yet, so the first tokens tell the forms apart.
    if !(args.input.peek(syn::Ident) && args.input.peek2(Token![=])) {
        return args.value(what);
    }
    let word = args.key("tune")?;
    let (list, choices) = args.int_list(what)?;
    args.key("default")?;
    let (default_when, default) = args.default(&format!("default {what}"))?;
    Ok(Val::Tune {
        word,
        list,
        choices,
        default,
        default_when,
        name: None,
    })
}

/// `lhs op rhs` of a `constraint(..)`.
fn condition(input: ParseStream) -> Result<Cond> {
    // One line whatever its length: the compiler's token printer breaks long streams, and the
    // text is printed in one-line comments of the generated C++.
    let text = input.fork().parse::<proc_macro2::TokenStream>()?.to_string().split_whitespace().collect::<Vec<_>>().join(" ");
    let lhs = sum(input)?;
    let ops: [(&str, CmpOp); 6] = [("<=", CmpOp::Le), (">=", CmpOp::Ge), ("==", CmpOp::Eq), ("!=", CmpOp::Ne), ("<", CmpOp::Lt), (">", CmpOp::Gt)];
    let span = input.span();
    let op = if input.peek(Token![<=]) {
        input.parse::<Token![<=]>()?;
        CmpOp::Le
    } else if input.peek(Token![>=]) {
        input.parse::<Token![>=]>()?;
        CmpOp::Ge
    } else if input.peek(Token![==]) {
        input.parse::<Token![==]>()?;
        CmpOp::Eq
    } else if input.peek(Token![!=]) {
        input.parse::<Token![!=]>()?;
        CmpOp::Ne
    } else if input.peek(Token![<]) {
        input.parse::<Token![<]>()?;
        CmpOp::Lt
    } else if input.peek(Token![>]) {
        input.parse::<Token![>]>()?;
        CmpOp::Gt
    } else {
        let list: Vec<&str> = ops.iter().map(|(w, _)| *w).collect();
        return Err(input.error(format!("expected a comparison ({}) in the condition", list.join(" "))));
    };
    let rhs = sum(input)?;
    Ok(Cond { lhs, op: Sp { value: op, span }, rhs, text })
}

/// `term (("+" | "-") term)*`.
fn sum(input: ParseStream) -> Result<Term> {
    let mut lhs = product(input)?;
    loop {
        let span = input.span();
        let op = if input.peek(Token![+]) {
            input.parse::<Token![+]>()?;
            BinOp::Add
        } else if input.peek(Token![-]) && !input.peek(Token![->]) {
            input.parse::<Token![-]>()?;
            BinOp::Sub
        } else {
            return Ok(lhs);
        };
        lhs = Term::Bin(Box::new(lhs), Sp { value: op, span }, Box::new(product(input)?));
    }
}

/// `power (("*" | "/" | "%") power)*`.
fn product(input: ParseStream) -> Result<Term> {
    let mut lhs = power(input)?;
    loop {
        let span = input.span();
        let op = if input.peek(Token![*]) {
            input.parse::<Token![*]>()?;
            BinOp::Mul
        } else if input.peek(Token![/]) {
            input.parse::<Token![/]>()?;
            BinOp::Div
        } else if input.peek(Token![%]) {
            input.parse::<Token![%]>()?;
            BinOp::Rem
        } else {
            return Ok(lhs);
        };
        lhs = Term::Bin(Box::new(lhs), Sp { value: op, span }, Box::new(power(input)?));
    }
}

/// `atom ("^" power)?`: `^` is a power here (right-associative, binding tighter than `*`).
fn power(input: ParseStream) -> Result<Term> {
    let base = atom(input)?;
    if input.peek(Token![^]) {
        let span = input.span();
        input.parse::<Token![^]>()?;
        return Ok(Term::Bin(Box::new(base), Sp { value: BinOp::Pow, span }, Box::new(power(input)?)));
    }
    Ok(base)
}

fn atom(input: ParseStream) -> Result<Term> {
    if input.peek(token::Paren) {
        let inner;
        parenthesized!(inner in input);
        let t = sum(&inner)?;
        if !inner.is_empty() {
            return Err(inner.error("expected `)` after the parenthesized expression"));
        }
        return Ok(t);
    }
    if input.peek(syn::Ident) {
        return Ok(Term::Name(input.parse()?));
    }
    if input.peek(LitInt) {
        return Ok(Term::Int(int_literal(input, "operand", "constraint")?));
    }
    if input.is_empty() {
        return Err(input.error("the condition ends too early: expected a number, a name or `(`"));
    }
    let tt: TokenTree = input.parse()?;
    Err(Error::new(tt.span(), format!("expected a number, a parameter name or `(` in the condition, found `{tt}`")))
}

/// Reads the comma-separated arguments of one primitive, with messages that name it.
struct Args<'a> {
    input: ParseStream<'a>,
    prim: &'static str,
    /// The whole `( .. )`: where a missing argument is reported, since it has no token.
    parens: Span,
    /// Arguments read so far, to know whether a `,` must come first.
    count: usize,
    /// Just read `name =`: the value follows without a `,`.
    after_key: bool,
}

impl Args<'_> {
    /// The `,` before every argument but the first.
    fn separator(&mut self) -> Result<()> {
        if std::mem::take(&mut self.after_key) {
            return Ok(());
        }
        if self.count > 0 && !self.input.is_empty() {
            if !self.input.peek(Token![,]) {
                return Err(self.input.error(format!(
                    "expected `,` between the arguments of `{}`",
                    self.prim
                )));
            }
            self.input.parse::<Token![,]>()?;
        }
        self.count += 1;
        Ok(())
    }

    /// Error for an argument that is not there at all.
    fn missing(&self, what: &str) -> Error {
        Error::new(
            self.parens,
            format!(
                "`{}` is missing its {what}; write {}",
                self.prim,
                words::signature(self.prim)
            ),
        )
    }

    /// The next argument as an identifier, not yet looked up (`table` is for the message).
    fn ident<T>(&mut self, what: &str, table: Table<T>) -> Result<Ident> {
        self.separator()?;
        if self.input.is_empty() {
            return Err(self.missing(what));
        }
        if !self.input.peek(syn::Ident) {
            let tt: TokenTree = self.input.parse()?;
            return Err(Error::new(
                tt.span(),
                format!(
                    "expected the {what} of `{}`, one of: {}; found `{tt}`",
                    self.prim,
                    words::list(table)
                ),
            ));
        }
        self.input.parse()
    }

    /// The next argument as one of the words of `table`.
    fn word<T: Copy>(&mut self, what: &str, table: Table<T>) -> Result<Sp<T>> {
        let ident = self.ident(what, table)?;
        lookup(&ident, what, self.prim, table)
    }

    /// `name =` of a `name = value` argument; the value is read next.
    fn key(&mut self, name: &'static str) -> Result<Span> {
        self.separator()?;
        if self.input.is_empty() {
            return Err(self.missing(&format!("`{name} = ..` argument")));
        }
        if !self.input.peek(syn::Ident) {
            let tt: TokenTree = self.input.parse()?;
            return Err(Error::new(
                tt.span(),
                format!(
                    "expected `{name} = ..` in `{}`, found `{tt}`; write {}",
                    self.prim,
                    words::signature(self.prim)
                ),
            ));
        }
        let ident: Ident = self.input.parse()?;
        if ident != name {
            return Err(Error::new(
                ident.span(),
                format!(
                    "unknown argument `{ident}` of `{}`; expected one of: {name} (write {})",
                    self.prim,
                    words::signature(self.prim)
                ),
            ));
        }
        if !self.input.peek(Token![=]) {
            return Err(self.input.error(format!("expected `=` after `{name}`")));
        }
        self.input.parse::<Token![=]>()?;
        self.after_key = true;
        Ok(ident.span())
    }

    /// The next argument as a `[INT, ...]` list: its span and its elements.
    fn int_list(&mut self, what: &str) -> Result<(Span, Vec<Sp<u32>>)> {
        self.separator()?;
        if self.input.is_empty() {
            return Err(self.missing(&format!("list of {what}s")));
        }
        if !self.input.peek(token::Bracket) {
            return Err(self
                .input
                .error(format!("expected a list of {what}s, e.g. `[64, 128, 256]`")));
        }
        let list;
        let brackets = bracketed!(list in self.input);
        let mut items = Vec::new();
        while !list.is_empty() {
            items.push(int_literal(&list, what, self.prim)?);
            if list.is_empty() {
                break;
            }
            if !list.peek(Token![,]) {
                return Err(list.error(format!("expected `,` between the {what}s")));
            }
            list.parse::<Token![,]>()?;
        }
        Ok((brackets.span.join(), items))
    }

    /// The next argument as a value: an integer literal or `tune([..], default = N)`.
    fn value(&mut self, what: &str) -> Result<Val> {
        self.separator()?;
        if self.input.is_empty() {
            return Err(self.missing(what));
        }
        if !self.input.peek(syn::Ident) {
            return Ok(Val::Fixed(int_literal(self.input, what, self.prim)?));
        }
        let word: Ident = self.input.parse()?;
        if word != "tune" {
            return Err(Error::new(
                word.span(),
                format!("expected the {what} of `{}` as an integer or `tune([N, ...], default = N)`, found `{word}`", self.prim),
            ));
        }
        if !self.input.peek(token::Paren) {
            return Err(self.input.error("expected `(` after `tune`: write tune([N, ...], default = N)"));
        }
        let content;
        let parens = parenthesized!(content in self.input);
        let mut inner = Args { input: &content, prim: "tune", parens: parens.span.join(), count: 0, after_key: false };
        let (list, choices) = inner.int_list(what)?;
        inner.key("default")?;
        let (default_when, default) = inner.default(&format!("default {what}"))?;
        let name = if inner.at_end() {
            None
        } else {
            inner.key("name")?;
            inner.separator()?;
            if !inner.input.peek(syn::Ident) {
                return Err(inner.input.error("expected the parameter's name, an identifier"));
            }
            Some(inner.input.parse::<Ident>()?)
        };
        inner.finish()?;
        Ok(Val::Tune { word: word.span(), list, choices, default, default_when, name })
    }

    /// The next argument as a default: `N`, or `if COND { N } else ... { N }` (the branches,
    /// then the final `else` value).
    fn default(&mut self, what: &str) -> Result<(Vec<(Cond, Sp<u32>)>, Sp<u32>)> {
        self.separator()?;
        if self.input.is_empty() {
            return Err(self.missing(what));
        }
        let mut branches = Vec::new();
        if !self.input.peek(Token![if]) {
            return Ok((branches, int_literal(self.input, what, self.prim)?));
        }
        loop {
            let word = self.input.parse::<Token![if]>()?;
            // The condition is every token up to the `{ N }` block.
            let mut tokens = proc_macro2::TokenStream::new();
            while !self.input.is_empty() && !self.input.peek(token::Brace) && !self.input.peek(Token![,]) {
                tokens.extend([self.input.parse::<TokenTree>()?]);
            }
            if tokens.is_empty() {
                return Err(Error::new(word.span, "expected a condition after `if`, e.g. `if K <= 16 { 128 } else { 256 }`"));
            }
            let cond = (|input: ParseStream| {
                let cond = condition(input)?;
                if !input.is_empty() {
                    return Err(input.error("expected `{ N }` after the condition of `if`"));
                }
                Ok(cond)
            })
            .parse2(tokens)?;
            branches.push((cond, braced_int(self.input, what, self.prim)?));
            if !self.input.peek(Token![else]) {
                return Err(self.input.error("expected `else` after `if COND { N }`: the default needs a value where no condition holds, e.g. `else { 256 }`"));
            }
            self.input.parse::<Token![else]>()?;
            if !self.input.peek(Token![if]) {
                return Ok((branches, braced_int(self.input, what, self.prim)?));
            }
        }
    }

    /// The next argument as an integer literal.
    fn int(&mut self, what: &str) -> Result<Sp<u32>> {
        self.separator()?;
        if self.input.is_empty() {
            return Err(self.missing(what));
        }
        int_literal(self.input, what, self.prim)
    }

    /// No more arguments (a trailing comma may remain).
    fn at_end(&self) -> bool {
        let fork = self.input.fork();
        let _ = fork.parse::<Option<Token![,]>>();
        fork.is_empty()
    }

    /// Rejects anything after the last argument.
    fn finish(self) -> Result<()> {
        let _ = self.input.parse::<Option<Token![,]>>()?;
        if self.input.is_empty() {
            return Ok(());
        }
        Err(self.input.error(format!(
            "unexpected extra argument to `{}`; write {}",
            self.prim,
            words::signature(self.prim)
        )))
    }
}

/// `ident` as one of the words of `table`, or an error at it listing them.
fn lookup<T: Copy>(ident: &Ident, what: &str, prim: &str, table: Table<T>) -> Result<Sp<T>> {
    match words::lookup(table, &ident.to_string()) {
        Some(value) => Ok(Sp {
            value,
            span: ident.span(),
        }),
        None => Err(Error::new(
            ident.span(),
            format!(
                "unknown {what} `{ident}` in `{prim}`; expected one of: {}",
                words::list(table)
            ),
        )),
    }
}

/// `{ N }`: one branch value of a default.
fn braced_int(input: ParseStream, what: &str, prim: &str) -> Result<Sp<u32>> {
    if !input.peek(token::Brace) {
        return Err(input.error(format!("expected `{{ N }}`, the {what} in this branch")));
    }
    let content;
    braced!(content in input);
    let v = int_literal(&content, what, prim)?;
    if !content.is_empty() {
        return Err(content.error("expected only the number in `{ N }`"));
    }
    Ok(v)
}

/// An unsuffixed integer literal that fits in u32.
fn int_literal(input: ParseStream, what: &str, prim: &str) -> Result<Sp<u32>> {
    if !input.peek(LitInt) {
        let tt: TokenTree = input.parse()?;
        return Err(Error::new(
            tt.span(),
            format!("expected an integer literal for the {what} of `{prim}`, found `{tt}`"),
        ));
    }
    let lit: LitInt = input.parse()?;
    if !lit.suffix().is_empty() {
        return Err(Error::new(
            lit.span(),
            format!(
                "write the {what} as a plain integer, without the `{}` suffix",
                lit.suffix()
            ),
        ));
    }
    let value = lit.base10_parse::<u32>()?;
    Ok(Sp {
        value,
        span: lit.span(),
    })
}
