//! The operations of an export (`mra-bench export --ops general,dir,ranksum`): per K, the
//! kernels of a matrix per dimension and of the rank sum, each for contiguous, strided and
//! pointer-array batches, their block-level device parts, a small kernel that lays out one
//! direction's matrices, and `mra_transform_ops.h` (host functions and the dispatch over K).
//!
//! `dir` runs the per-dimension kernel with the identity in the two other dimensions (exact),
//! the three matrices written into the caller's workspace by `mra_dir_matrices_k<K>`.

use super::{block_op_level, default_op_level, source_ext, ExportError, File};
use crate::emit::{self, Kernel};
use crate::op::{Layout, Matrices, Operation};
use crate::tuned_defaults::Regime;
use crate::{Arch, DType, Request, Vendor};
use serde::Serialize;

/// The operations an export may carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    General,
    Dir,
    RankSum,
}

impl OpKind {
    pub fn parse(s: &str) -> Option<OpKind> {
        match s {
            "general" => Some(OpKind::General),
            "dir" => Some(OpKind::Dir),
            "ranksum" => Some(OpKind::RankSum),
            _ => None,
        }
    }
    fn name(self) -> &'static str {
        match self {
            OpKind::General => "general",
            OpKind::Dir => "dir",
            OpKind::RankSum => "ranksum",
        }
    }
}

const LAYOUTS: [Layout; 3] = [Layout::Contiguous, Layout::Strided, Layout::Pointers];

/// One operation kernel of one K.
#[derive(Clone, Debug)]
pub struct OpKernel {
    pub k: u32,
    /// `general` (also what `dir` runs) or `ranksum`.
    pub kind: OpKind,
    pub layout: Layout,
    pub kernel: Kernel,
    /// Where `kernel`'s level spreads a tensor over several blocks (fused-split at K = 32) and so
    /// has no block-level function: the contiguous kernel of the next level that has one, whose
    /// device part the export ships instead.
    pub block: Option<Kernel>,
}

impl OpKernel {
    /// The kernel whose block-level functions the device part holds.
    pub fn block_kernel(&self) -> &Kernel {
        self.block.as_ref().unwrap_or(&self.kernel)
    }
}

/// The operation kernels of one K: the per-dimension kernel in every layout where `general` or
/// `dir` is asked for, the rank sum's where `ranksum` is.
pub fn op_kernels(k: u32, arch: &'static Arch, dtype: DType, kinds: &[OpKind]) -> Result<Vec<OpKernel>, ExportError> {
    let mut out = Vec::new();
    let wanted = [(OpKind::General, Matrices::PerDim), (OpKind::RankSum, Matrices::RankSum)];
    for (kind, matrices) in wanted {
        let asked = match kind {
            OpKind::General => kinds.contains(&OpKind::General) || kinds.contains(&OpKind::Dir),
            _ => kinds.contains(&kind),
        };
        if !asked {
            continue;
        }
        for layout in LAYOUTS {
            let op = Operation { matrices, layout, scaled: true };
            let req = Request { k, arch, dtype };
            let level = default_op_level(k, arch, dtype, op)?;
            let kernel = level.generate_tuned(req, op, Regime::Api).map_err(|source| ExportError::Plan { k, source })?;
            let block = match kernel.plan.work_blocks(1) > 1 && layout == Layout::Contiguous {
                true => Some(block_op_level(k, arch, dtype, op)?.generate_tuned(req, op, Regime::Api).map_err(|source| ExportError::Plan { k, source })?),
                false => None,
            };
            out.push(OpKernel { k, kind, layout, kernel, block });
        }
    }
    Ok(out)
}

fn suffix(layout: Layout) -> &'static str {
    match layout {
        Layout::Contiguous => "",
        Layout::Strided => "_strided",
        Layout::Pointers => "_pointers",
    }
}

fn dir_kernel_name(k: u32, dtype: DType) -> String {
    format!("mra_dir_matrices_k{k}_{dtype}")
}

/// The files the operations add to a bundle: each kernel's source, the contiguous kernels'
/// device parts, the direction kernels' sources, `mra_transform_ops.h` and `operations.json`.
pub fn files(ops: &[OpKernel], kinds: &[OpKind], generator: &str) -> Vec<File> {
    let Some(first) = ops.first() else { return Vec::new() };
    let req = first.kernel.plan.request;
    let ext = source_ext(req.arch);
    let mut files = Vec::new();
    for o in ops {
        files.push(File { path: format!("{}.{ext}", o.kernel.entry), text: o.kernel.source.clone() });
        if o.layout == Layout::Contiguous {
            files.push(File { path: format!("{}_device.h", o.block_kernel().entry), text: device_part(o.block_kernel()) });
        }
    }
    let dir = kinds.contains(&OpKind::Dir);
    let mut ks: Vec<u32> = ops.iter().map(|o| o.k).collect();
    ks.dedup();
    if dir {
        for &k in &ks {
            files.push(File { path: format!("{}.{ext}", dir_kernel_name(k, req.dtype)), text: dir_source(k, req.dtype, req.arch) });
        }
    }
    files.push(File { path: "mra_transform_ops.h".into(), text: host_header(ops, kinds, generator) });
    #[derive(Serialize)]
    struct Row<'a> {
        #[serde(rename = "K")]
        k: u32,
        op: &'static str,
        layout: Layout,
        level: &'a str,
        entry: &'a str,
        threads: u32,
        shared_bytes: u32,
        dynamic_shared_bytes: u32,
        workspace_elems_per_block: u64,
    }
    let rows: Vec<Row> = ops
        .iter()
        .map(|o| Row {
            k: o.k,
            op: o.kind.name(),
            layout: o.layout,
            level: &o.kernel.level,
            entry: &o.kernel.entry,
            threads: o.kernel.plan.threads,
            shared_bytes: o.kernel.plan.shared_bytes,
            dynamic_shared_bytes: dynamic(&o.kernel),
            workspace_elems_per_block: o.kernel.plan.workspace_elems_per_block,
        })
        .collect();
    files.push(File { path: "operations.json".into(), text: serde_json::to_string_pretty(&rows).expect("plain data serializes") + "\n" });
    files
}

fn dynamic(k: &Kernel) -> u32 {
    if k.plan.dynamic_shared { k.plan.shared_bytes } else { 0 }
}

/// A kernel's source up to its namespace's end: the block-level functions, guarded.
fn device_part(kernel: &Kernel) -> String {
    let ns = emit::namespace_of(kernel);
    let end_line = emit::namespace_end(&ns);
    let end = kernel.source.find(&end_line).expect("a transform kernel closes its namespace") + end_line.len();
    let guard: String = format!("{}_device_h", kernel.entry).chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect();
    let call = if kernel.plan.op.matrices == Matrices::RankSum {
        "rank_sum_block(a_n, b, ranks, c_n, workspace, smem, alpha, beta)"
    } else {
        "transform_block(a_n, xyz, c_n, workspace, smem, alpha, beta)"
    };
    // restage_a(1) copies A with cp.async for every term, which reads global memory only.
    let restaged = matches!(kernel.plan.body, crate::plan::Body::Transform(tp) if tp.restage_a) && kernel.plan.request.arch.vendor == Vendor::Nvidia;
    let a_n_note = if restaged { "// a_n must be in device memory here: the function copies it again for every term (cp.async).\n" } else { "" };
    format!(
        "// Device part of {entry}: the block-level function for callers' own kernels, #include it and call\n\
         //   {ns}::{call}\n\
         // with every thread of a block of {ns}::THREADS threads, {ns}::SHARED_BYTES bytes of shared memory and\n\
         // {ns}::WORKSPACE_ELEMS elements of workspace per block.\n\
         {a_n_note}#ifndef {guard}\n#define {guard}\n\n{body}\n\n#endif  // {guard}\n",
        entry = kernel.entry,
        body = &kernel.source[..end],
    )
}

/// `mra_dir_matrices_k<K>`: X, Y, Z for dimension `dim` only (M there, the identity elsewhere).
fn dir_source(k: u32, dtype: DType, arch: &Arch) -> String {
    let t = dtype.cpp();
    let include = if arch.vendor == Vendor::Amd { "#include <hip/hip_runtime.h>\n\n" } else { "" };
    format!(
        "// The three matrices of one direction for the per-dimension kernels of K = {k}: b3 = X, Y, Z with\n\
         // M in dimension dim and the identity in the two others (exact: the identity's products are).\n\
         {include}extern \"C\" __global__ void {name}(const {t}* __restrict__ m, int dim, {t}* __restrict__ b3) {{\n\
         \x20   constexpr int K = {k}, K2 = K * K;\n\
         \x20   for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < 3 * K2; e += gridDim.x * blockDim.x) {{\n\
         \x20       const int p = e / K2, i = e % K2 / K, j = e % K;\n\
         \x20       b3[e] = p == dim ? m[i * K + j] : ({t})(i == j ? 1 : 0);\n\
         \x20   }}\n}}\n",
        name = dir_kernel_name(k, dtype)
    )
}

/// `mra_transform_ops.h`.
fn host_header(ops: &[OpKernel], kinds: &[OpKind], generator: &str) -> String {
    let req = ops[0].kernel.plan.request;
    let t = req.dtype.cpp();
    let (p, stream) = match req.arch.vendor {
        Vendor::Nvidia => ("cuda", "cudaStream_t"),
        Vendor::Amd => ("hip", "hipStream_t"),
    };
    let err = format!("{p}Error_t");
    let mut s = format!("// mra_transform_ops.h: the operations of this export besides the transform. Generated by {generator}.\n");
    s += "//\n// general:  C_n = alpha * A_n x1 X x2 Y x3 Z + beta * C_n        xyz: X, Y, Z (K x K row-major each), one after the other\n";
    s += "// dir:      C_n = alpha * (A_n times M in dimension dim) + beta * C_n   (dim = 0, 1, 2; for dim = 1,\n";
    s += "//           C(a,j,c) = sum_b A(a,b,c) M(b,j))\n";
    s += "// ranksum:  C_n = alpha * sum_mu s_mu A_n x1 X_mu x2 Y_mu x3 Z_mu + beta * C_n   terms: per term X_mu, Y_mu, Z_mu\n";
    s += "//           (K x K each), then the ranks weights s_mu\n";
    s += "// beta == 0 never reads C. Batches: contiguous (tensor n at n K^3), _strided (at n a_stride in A, n c_stride\n";
    s += "// in C, in elements, each at least K^3), _pointers (device arrays of nfuncs tensor pointers for A and C).\n";
    s += "// Where K is even the kernels read A 16 bytes at a time: a and c 16-byte aligned, strides even (refused\n";
    s += "// otherwise), and every pointer of a _pointers batch 16-byte aligned (as cudaMalloc/hipMalloc give).\n";
    s += "// Each function takes a workspace of <op>_workspace_bytes(K, nfuncs) bytes of device memory (null where that\n";
    s += "// is 0) and returns as mra_transform does (mra_status_string).\n//\n";
    s += "//  K  op        layout       level        kernel                                threads  shared  workspace/block\n";
    for o in ops {
        let pl = &o.kernel.plan;
        s += &format!(
            "// {:>2}  {:<8}  {:<11}  {:<11}  {:<36}  {:>7}  {:>6}  {}\n",
            o.k,
            o.kind.name(),
            format!("{:?}", o.layout).to_lowercase(),
            o.kernel.level,
            o.kernel.entry,
            pl.threads,
            pl.shared_bytes,
            pl.workspace_elems_per_block
        );
    }
    s += "\n#ifndef MRA_TRANSFORM_OPS_H\n#define MRA_TRANSFORM_OPS_H\n\n#include \"mra_transform.h\"\n\n";
    s += &format!("#if defined({})\n#define MRA_KERNEL __global__\n#else\n#define MRA_KERNEL\n#endif\nextern \"C\" {{\n", if p == "cuda" { "__CUDACC__" } else { "__HIPCC__" });
    for o in ops {
        let (a, c) = match o.layout {
            Layout::Pointers => (format!("const {t}* const*"), format!("{t}* const*")),
            _ => (format!("const {t}*"), format!("{t}*")),
        };
        let ranks = if o.kind == OpKind::RankSum { ", int" } else { "" };
        s += &format!("MRA_KERNEL void {}({a}, const {t}*, {c}, {t}*, int, int, long long, long long, double, double{ranks});\n", o.kernel.entry);
    }
    let mut ks: Vec<u32> = ops.iter().map(|o| o.k).collect();
    ks.dedup();
    if kinds.contains(&OpKind::Dir) {
        for &k in &ks {
            s += &format!("MRA_KERNEL void {}(const {t}*, int, {t}*);\n", dir_kernel_name(k, req.dtype));
        }
    }
    s += "}\n#undef MRA_KERNEL\n\n";
    s += &format!(
        "// Blocks of one launch: waves of what the device holds of the kernel at once (asked once per device and\n\
         // kernel, cached in *resident), at most per_tensor per tensor (a level that splits a tensor's output over\n\
         // per_tensor blocks takes whole groups of them), MRA_MAX_BLOCKS where defined.\n\
         inline int mra_op_blocks(const void* kernel, int threads, int dynamic, int* resident, int nfuncs, int per_tensor) {{\n\
         \x20   int device = 0;\n\
         \x20   if ({p}GetDevice(&device) != {p}Success || device < 0 || device >= MRA_MAX_DEVICES) device = -1;\n\
         \x20   if (device >= 0 && resident[device] == 0) {{\n\
         \x20       int multiprocessors = 0, per_multiprocessor = 0;\n\
         \x20       if (dynamic > 0) (void){p}FuncSetAttribute(kernel, {p}FuncAttributeMaxDynamicSharedMemorySize, dynamic);\n\
         \x20       const bool known = {attr}(&multiprocessors, {mp}, device) == {p}Success\n\
         \x20           && {p}OccupancyMaxActiveBlocksPerMultiprocessor(&per_multiprocessor, kernel, threads, dynamic) == {p}Success;\n\
         \x20       resident[device] = known && multiprocessors * per_multiprocessor > 0 ? multiprocessors * per_multiprocessor : -1;\n\
         \x20   }}\n\
         \x20   long long cap = device >= 0 && resident[device] > 0 ? (long long)resident[device] * 32 : MRA_FALLBACK_BLOCKS;\n\
         #ifdef MRA_MAX_BLOCKS\n\
         \x20   if (cap > MRA_MAX_BLOCKS) cap = MRA_MAX_BLOCKS;\n\
         #endif\n\
         \x20   cap = cap / per_tensor * per_tensor;\n\
         \x20   if (cap < per_tensor) cap = per_tensor;\n\
         \x20   const long long want = (long long)nfuncs * per_tensor;\n\
         \x20   return (int)(want < cap ? want : cap);\n}}\n\n",
        attr = if p == "cuda" { "cudaDeviceGetAttribute" } else { "hipDeviceGetAttribute" },
        mp = if p == "cuda" { "cudaDevAttrMultiProcessorCount" } else { "hipDeviceAttributeMultiprocessorCount" },
    );
    s += &format!(
        "// One launch of an operation kernel (every one takes these parameters; ranks < 0: it has none).\n\
         inline int mra_op_launch(const void* kernel, int threads, int dynamic, int nblocks, const void* a, const {t}* b, const void* c,\n\
         \x20                        {t}* workspace, int nfuncs, long long a_stride, long long c_stride, double alpha, double beta,\n\
         \x20                        int ranks, {stream} stream) {{\n\
         \x20   if (dynamic > 0) {{\n\
         \x20       {err} e = {p}FuncSetAttribute(kernel, {p}FuncAttributeMaxDynamicSharedMemorySize, dynamic);\n\
         \x20       if (e != {p}Success) return (int)e;\n\
         \x20   }}\n\
         \x20   void* args[] = {{&a, &b, &c, &workspace, &nfuncs, &nblocks, &a_stride, &c_stride, &alpha, &beta, &ranks}};\n\
         \x20   return (int){p}LaunchKernel(kernel, dim3(nblocks), dim3(threads), args, dynamic, stream);\n}}\n"
    );
    for &k in &ks {
        for o in ops.iter().filter(|o| o.k == k) {
            s += &launcher(o, t, stream);
        }
        if kinds.contains(&OpKind::Dir) {
            s += &dir_launchers(k, req.dtype, t, stream, p);
        }
    }
    s += &dispatch(ops, kinds, &ks, t, stream);
    s += "\n#endif  // MRA_TRANSFORM_OPS_H\n";
    s
}

/// The parameters of a batch form, as declared and as passed on.
fn batch(layout: Layout, t: &str) -> (String, &'static str, &'static str) {
    match layout {
        Layout::Contiguous => (format!("const {t}* a, {t}* c"), "", "K3, K3"),
        Layout::Strided => (format!("const {t}* a, long long a_stride, {t}* c, long long c_stride"), "", "a_stride, c_stride"),
        Layout::Pointers => (format!("const {t}* const* a, {t}* const* c"), "", "0, 0"),
    }
}

/// The workspace query and host function of one kernel.
fn launcher(o: &OpKernel, t: &str, stream: &str) -> String {
    let pl = &o.kernel.plan;
    let (k, entry, threads, dynamic, ws) = (o.k, &o.kernel.entry, pl.threads, dynamic(&o.kernel), pl.workspace_elems_per_block);
    let kind = match o.kind {
        OpKind::RankSum => "ranksum",
        _ => "general",
    };
    let name = format!("mra_transform_{kind}_k{k}{}", suffix(o.layout));
    let (params, _, strides) = batch(o.layout, t);
    let (m_param, ranks_param, ranks_arg) = match o.kind {
        OpKind::RankSum => (format!("const {t}* terms"), ", int ranks", "ranks"),
        _ => (format!("const {t}* xyz"), "", "-1"),
    };
    let m_arg = if o.kind == OpKind::RankSum { "terms" } else { "xyz" };
    let mut s = format!("\n// ---- K = {k}, {kind}{}: {} ({entry}) ----\n", suffix(o.layout), o.kernel.level);
    let per_tensor = pl.work_blocks(1);
    s += &format!("inline int {name}_blocks(int nfuncs) {{\n    static int resident[MRA_MAX_DEVICES];\n    return mra_op_blocks((const void*){entry}, {threads}, {dynamic}, resident, nfuncs, {per_tensor});\n}}\n");
    s += &format!("inline size_t {name}_workspace_bytes(int nfuncs) {{\n");
    if ws == 0 {
        s += "    (void)nfuncs;\n    return 0;\n}\n";
    } else {
        s += &format!("    return nfuncs <= 0 ? 0 : (size_t){name}_blocks(nfuncs) * {ws} * sizeof({t});\n}}\n");
    }
    let ws_check = if ws > 0 { " || !workspace" } else { "" };
    let rank_check = if o.kind == OpKind::RankSum { " || ranks < 0" } else { "" };
    // Where K³ is even the kernels read A 16 bytes at a time: every tensor 16-byte aligned.
    let stride_check = match o.layout {
        Layout::Strided if k % 2 == 0 => " || a_stride < K3 || c_stride < K3 || a_stride % 2 != 0 || c_stride % 2 != 0",
        Layout::Strided => " || a_stride < K3 || c_stride < K3",
        _ => "",
    };
    s += &format!(
        "inline int {name}({params}, {m_param}{ranks_param}, double alpha, double beta, {t}* workspace, int nfuncs, {stream} stream) {{\n\
         \x20   const long long K3 = {k3};\n\
         \x20   (void)K3;\n\
         \x20   if (nfuncs < 0{rank_check}{stride_check}) return MRA_ERROR_INVALID_ARGUMENT;\n\
         \x20   if (nfuncs == 0) return MRA_SUCCESS;\n\
         \x20   if (!a || !{m_arg} || !c{ws_check}) return MRA_ERROR_INVALID_ARGUMENT;\n\
         \x20   return mra_op_launch((const void*){entry}, {threads}, {dynamic}, {name}_blocks(nfuncs), a, {m_arg}, c, workspace, nfuncs, {strides}, alpha, beta, {ranks_arg}, stream);\n}}\n",
        k3 = (k as u64).pow(3),
    );
    s
}

/// `dir`: the direction's matrices into the workspace's first 3 K² elements, then the
/// per-dimension kernel on them with the rest of the workspace.
fn dir_launchers(k: u32, dtype: DType, t: &str, stream: &str, p: &str) -> String {
    let fill = dir_kernel_name(k, dtype);
    let k2 = k * k;
    // The general kernel's workspace starts 32-element aligned after the matrices.
    let offset = (3 * k2).div_ceil(32) * 32;
    let mut s = String::new();
    for layout in LAYOUTS {
        let sfx = suffix(layout);
        let (params, _, _) = batch(layout, t);
        let args = match layout {
            Layout::Strided => "a, a_stride, c, c_stride",
            _ => "a, c",
        };
        let general = format!("mra_transform_general_k{k}{sfx}");
        s += &format!(
            "\n// dir{sfx}, K = {k}: workspace = the three matrices ({offset} elements), then the per-dimension kernel's.\n\
             inline size_t mra_transform_dir_k{k}{sfx}_workspace_bytes(int nfuncs) {{\n\
             \x20   return nfuncs <= 0 ? 0 : {offset} * sizeof({t}) + {general}_workspace_bytes(nfuncs);\n}}\n\
             inline int mra_transform_dir_k{k}{sfx}({params}, const {t}* m, int dim, double alpha, double beta, {t}* workspace, int nfuncs, {stream} stream) {{\n\
             \x20   if (nfuncs < 0 || dim < 0 || dim > 2) return MRA_ERROR_INVALID_ARGUMENT;\n\
             \x20   if (nfuncs == 0) return MRA_SUCCESS;\n\
             \x20   if (!m || !workspace) return MRA_ERROR_INVALID_ARGUMENT;\n\
             \x20   void* fill_args[] = {{&m, &dim, &workspace}};\n\
             \x20   int e = (int){p}LaunchKernel((const void*){fill}, dim3(1), dim3(256), fill_args, 0, stream);\n\
             \x20   if (e != 0) return e;\n\
             \x20   return {general}({args}, workspace, alpha, beta, {general}_workspace_bytes(nfuncs) ? workspace + {offset} : 0, nfuncs, stream);\n}}\n"
        );
    }
    s
}

/// The dispatch over K of each function.
fn dispatch(ops: &[OpKernel], kinds: &[OpKind], ks: &[u32], t: &str, stream: &str) -> String {
    let mut s = String::from("\n// ---- Dispatch over K ----\n");
    let mut forms: Vec<(&str, Layout)> = Vec::new();
    for kind in ["general", "dir", "ranksum"] {
        let asked = kinds.iter().any(|k| k.name() == kind);
        let has = ops.iter().any(|o| match kind {
            "ranksum" => o.kind == OpKind::RankSum,
            _ => o.kind == OpKind::General,
        });
        if asked && has {
            forms.extend(LAYOUTS.map(|l| (kind, l)));
        }
    }
    for (kind, layout) in forms {
        let sfx = suffix(layout);
        let (params, _, _) = batch(layout, t);
        let (m_params, m_args) = match kind {
            "general" => (format!("const {t}* xyz"), "xyz"),
            "dir" => (format!("const {t}* m, int dim"), "m, dim"),
            _ => (format!("const {t}* terms, int ranks"), "terms, ranks"),
        };
        let args = match layout {
            Layout::Strided => "a, a_stride, c, c_stride",
            _ => "a, c",
        };
        let with = |k: u32| ops.iter().any(|o| o.k == k && (kind == "ranksum") == (o.kind == OpKind::RankSum));
        s += &format!("\ninline size_t mra_transform_{kind}{sfx}_workspace_bytes(int K, int nfuncs) {{\n    switch (K) {{\n");
        for &k in ks.iter().filter(|&&k| with(k)) {
            s += &format!("    case {k}: return mra_transform_{kind}_k{k}{sfx}_workspace_bytes(nfuncs);\n");
        }
        s += "    default: return 0;\n    }\n}\n";
        s += &format!("inline int mra_transform_{kind}{sfx}(int K, {params}, {m_params}, double alpha, double beta, {t}* workspace, int nfuncs, {stream} stream) {{\n    switch (K) {{\n");
        for &k in ks.iter().filter(|&&k| with(k)) {
            s += &format!("    case {k}: return mra_transform_{kind}_k{k}{sfx}({args}, {m_args}, alpha, beta, workspace, nfuncs, stream);\n");
        }
        s += "    default: return MRA_ERROR_UNSUPPORTED_K;\n    }\n}\n";
    }
    s
}
