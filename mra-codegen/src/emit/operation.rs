//! What an operation other than the seed's changes in a transform kernel
//! ([`crate::op::Operation`]): the kernel's parameters, the address of tensor n, three B
//! loads for a matrix per dimension (pass p contracts dimension p, so it takes matrix p), and
//! C written as α·T(A) + β·C through an output type the pass functions are templated on.

use super::Emitter;
use crate::op::{Layout, Matrices, Operation};

impl Emitter<'_> {
    pub(super) fn op(&self) -> Operation {
        self.plan.op
    }

    /// The operation, for the header: what the kernel computes, with its parameters.
    pub(super) fn operation_comment(&self) -> String {
        let op = self.op();
        let mut s = String::from("// The operation: ");
        s += match op.matrices {
            Matrices::One => "C_n(i,j,k) = sum_{a,b,c} A_n(a,b,c) B(a,i) B(b,j) B(c,k)",
            Matrices::PerDim => "C_n(i,j,k) = sum_{a,b,c} A_n(a,b,c) X(a,i) Y(b,j) Z(c,k), b = X, Y, Z (3 K^2)",
            Matrices::RankSum => "C_n(i,j,k) = sum_mu s_mu sum_{a,b,c} A_n(a,b,c) X_mu(a,i) Y_mu(b,j) Z_mu(c,k), mu < ranks,\n// b = X_mu, Y_mu, Z_mu per term (3 K^2 each), then the ranks weights s_mu",
        };
        if op.scaled {
            s += ", stored as\n// alpha * C_n + beta * (C_n as it was); beta == 0 does not read C";
        }
        s += match op.layout {
            Layout::Contiguous => ";\n// tensor n at n K^3",
            Layout::Strided => ";\n// tensor n at n a_stride in A, n c_stride in C",
            Layout::Pointers => ";\n// tensor n at a[n] and c[n]",
        };
        s += ". Computed as three passes of out(i,j) = sum_k in(k,i) * M(k,j),\n// in: K x K^2, out: K^2 x K row-major";
        match op.matrices {
            Matrices::One => {}
            Matrices::PerDim => s += ", M = X, Y, Z in passes 0, 1, 2",
            Matrices::RankSum => s += ", M = X_mu, Y_mu, s_mu Z_mu in passes 0, 1, 2 of term mu",
        }
        s + "."
    }

    /// The kernel's parameters: the seed's six, then for any other operation the strides and
    /// α, β (each kernel of an operation takes all four, used or not, so the runtime launches
    /// every operation alike), and for a rank sum its number of terms.
    pub(super) fn kernel_params(&self) -> String {
        let t = self.t();
        let op = self.op();
        if op.is_seed() {
            return format!("const {t}* __restrict__ a, const {t}* __restrict__ b, {t}* __restrict__ c, {t}* workspace, int nfuncs, int nblocks");
        }
        let (a, c) = match op.layout {
            Layout::Pointers => (format!("const {t}* const* __restrict__ a"), format!("{t}* const* __restrict__ c")),
            _ => (format!("const {t}* __restrict__ a"), format!("{t}* __restrict__ c")),
        };
        let ranks = if op.matrices == Matrices::RankSum { ", int ranks" } else { "" };
        format!("{a}, const {t}* __restrict__ b, {c}, {t}* workspace, int nfuncs, int nblocks, long long a_stride, long long c_stride, double alpha, double beta{ranks}")
    }

    /// The address of tensor `n` (an expression) of A (`'a'`) or C (`'c'`).
    pub(super) fn tensor_at(&self, operand: char, n: &str) -> String {
        let simple = n.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_') || (n.starts_with('(') && n.ends_with(')'));
        let n = if simple { n.to_string() } else { format!("({n})") };
        match self.op().layout {
            Layout::Contiguous => format!("{operand} + (long long){n} * K3"),
            Layout::Strided => format!("{operand} + (long long){n} * {operand}_stride"),
            Layout::Pointers => format!("{operand}[{n}]"),
        }
    }

    /// C of tensor `n` as the passes receive it: the pointer, or with α and β the output type.
    pub(super) fn c_out(&self, n: &str) -> String {
        let at = self.tensor_at('c', n);
        if self.op().scaled { format!("COut{{{at}, alpha, beta}}") } else { at }
    }

    /// The batch loops' `c_n`: C of tensor n, as the last pass receives it.
    pub(super) fn c_n_decl(&self) -> String {
        if self.op().scaled {
            format!("    const COut c_n{{{}, alpha, beta}};\n", self.tensor_at('c', "n"))
        } else {
            format!("    {}* c_n = {};\n", self.t(), self.tensor_at('c', "n"))
        }
    }

    /// With β ≠ 0 on NVIDIA, tensor n's C asked of L2 as its work begins, where shared memory
    /// admits one block per SM: its last pass's loads of C then wait on L2, not DRAM, since no
    /// other block's work hides a DRAM round trip per tile. Where several blocks share an SM
    /// they do, and the prefetch's registers would cost one of them. `None`: nothing to emit
    /// (β = 0 never reads C; the AMD dialect has no prefetch to L2).
    pub(super) fn c_prefetch(&self) -> Option<String> {
        if !self.prefetches_c() {
            return None;
        }
        let (t, c_n) = (self.t(), self.tensor_at('c', "n"));
        Some(format!(
            "if (beta != 0) for (int e = tid * (128 / sizeof({t})); e < K3; e += THREADS * (128 / sizeof({t}))) mra_prefetch_line({c_n} + e);  // C's lines to L2 before the last pass reads them"
        ))
    }

    /// Whether [`Emitter::c_prefetch`] emits anything (and its helper is needed).
    fn prefetches_c(&self) -> bool {
        let one_block_per_sm = 2 * self.plan.shared_bytes > self.plan.request.arch.shared_bytes_max;
        // split_output(2) asks for its block's half of C itself (emit/split.rs); a rank sum
        // reads C once, after all its terms, long after a prefetch at the tensor's start.
        let split = matches!(&self.plan.body, crate::plan::Body::Transform(tp) if tp.split_output > 1);
        let rank_sum = self.op().matrices == Matrices::RankSum;
        self.op().scaled && self.d.vendor() == crate::Vendor::Nvidia && one_block_per_sm && !split && !rank_sum
    }

    /// The type of `transform_tensor`'s C parameter.
    pub(super) fn c_param_type(&self) -> String {
        if self.op().scaled { "COut".into() } else { format!("{}*", self.t()) }
    }

    /// A pass function's head with its `T* out` made a template parameter where C is written
    /// through [`Emitter::scaled_output`] (the shared intermediates stay plain pointers).
    pub(super) fn out_head(&self, head: String) -> String {
        if !self.op().scaled {
            return head;
        }
        let plain = format!("{}* out", self.t());
        assert!(head.contains(&plain), "a pass function writes `{plain}`: {head}");
        format!("template <class Out>\n{}", head.replacen(&plain, "Out out", 1))
    }

    /// `COut`: where C goes, with α and β. The last pass is called with `COutSet` (β = 0: C
    /// written, never read) or `COutAdd` (α·value + β·C), chosen once per call
    /// ([`beta_dispatch`]), not per element: a test of β at every store, each store a
    /// read-modify-write, kept the last pass from issuing its stores back to back.
    pub(super) fn scaled_output(&mut self) {
        if !self.op().scaled {
            return;
        }
        let t = self.t();
        let inline = self.d.inline_device();
        // C's old value through the read-only path on NVIDIA: each element is read once, by the
        // thread that then writes it, so the compiler may issue every load of a tile before its
        // stores (a plain load may alias the store before it, which serializes load, store, load).
        let nvidia = self.d.vendor() == crate::Vendor::Nvidia;
        let old = if nvidia { "__ldg(q)" } else { "*q" };
        self.w.line("");
        self.w.line("// C as the last pass writes it: COutSet stores alpha * v (beta == 0: C is not read, so");
        self.w.line("// whatever it held, NaN included, is harmless); COutAdd stores alpha * v + beta * C. The");
        self.w.line("// passes that write the shared or workspace intermediates take plain pointers.");
        self.w.lines(&output_type("COutSet", t, inline, "double alpha", "alpha", &format!("*q = ({t})(alpha * v);")));
        self.w.lines(&output_type("COutAdd", t, inline, "double alpha, beta", "alpha, beta", &format!("*q = ({t})(alpha * v + beta * {old});")));
        self.w.block("struct COut", ";", |w| {
            w.line(format!("{t}* p;"));
            w.line("double alpha, beta;");
            w.line(format!("{inline} COutSet set() const {{ return COutSet{{p, alpha}}; }}"));
            w.line(format!("{inline} COutAdd add() const {{ return COutAdd{{p, alpha, beta}}; }}"));
        });
        if self.prefetches_c() {
            self.w.line("// Asks L2 for the 128-byte line at p (a generic address of global memory).");
            self.w.line(format!("{inline} void mra_prefetch_line(const void* p) {{ asm volatile(\"prefetch.L2 [%0];\" :: \"l\"(p)); }}"));
        }
        if self.plan.request.dtype == crate::DType::F64 && self.d.vendor() == crate::Vendor::Nvidia {
            // The paired stores of the untransposed passes, 16 bytes each: into the
            // intermediates, and into C (a pair starts at an even element of a tensor that is
            // 16-byte aligned where K is even, the only K that pairs C's columns).
            self.w.line(format!("{inline} void store_pair(double* out, int e, double x, double y) {{ *reinterpret_cast<double2*>(&out[e]) = make_double2(x, y); }}"));
            self.w.line(format!("{inline} void store_pair(const COutSet& out, int e, double x, double y) {{ *reinterpret_cast<double2*>(&out.p[e]) = make_double2(out.alpha * x, out.alpha * y); }}"));
            self.w.block(format!("{inline} void store_pair(const COutAdd& out, int e, double x, double y)"), "", |w| {
                w.line("double2* q = reinterpret_cast<double2*>(&out.p[e]);");
                w.line("const double2 c = __ldg(q);");
                w.line("*q = make_double2(out.alpha * x + out.beta * c.x, out.alpha * y + out.beta * c.y);");
            });
        }
    }
}

/// An output type of the last pass: `name { T* p; fields; }` whose `out[e] = v` runs `store`
/// with `q` = `p + e` and the fields (`args`, their names) in scope.
pub(super) fn output_type(name: &str, t: &str, inline: &str, fields: &str, args: &str, store: &str) -> String {
    format!(
        "struct {name} {{\n    {t}* p;\n    {fields};\n    struct Ref {{\n        {t}* q;\n        {fields};\n        {inline} void operator=({t} v) const {{ {store} }}\n    }};\n    {inline} Ref operator[](long long e) const {{ return Ref{{p + e, {args}}}; }}\n}};"
    )
}

/// The last pass's call (with `{out}`, the COut of C) as two calls, one per output type,
/// chosen once by β.
pub(super) fn beta_dispatch(call: &str) -> String {
    let call = call.trim_end_matches(';');
    format!("if ({{out}}.beta == 0) {}; else {};", call.replace("{out}", "{out}.set()"), call.replace("{out}", "{out}.add()"))
}

/// `b_frag, b_tail` → `b_frag1, b_tail1`: pass `p`'s B arguments or parameters where each
/// dimension has its own matrix (every comma-separated item ends with the name).
pub(super) fn for_dim(list: &str, p: usize) -> String {
    list.split(", ").map(|item| format!("{item}{p}")).collect::<Vec<_>>().join(", ")
}

/// The three dimensions' B arguments or parameters side by side.
pub(super) fn all_dims(list: &str) -> String {
    (0..3).map(|p| for_dim(list, p)).collect::<Vec<_>>().join(", ")
}
