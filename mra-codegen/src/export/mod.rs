//! An export bundle: the generated kernels for a list of K on one arch, as files that drop into
//! a C++ build (`mra-bench export`). Pure text; the command writes the files.
//!
//! Per K: the self-contained source of the kernel the host launcher runs (`.cu` / `.hip`, the
//! same text the runtime compiles) and a device part (`<entry>_device.h`: constants, `load_b`,
//! `transform_tensor`, `transform_block`, without the `__global__` kernel) for callers' own
//! kernels. The device part is the launcher kernel's own, except where that kernel spreads one
//! tensor over several blocks (a thread-block cluster, `split_output(2)`): there is no
//! block-level function in it, so the device part comes from the first level of
//! [`BLOCK_CHAIN`] that has one (K = 25..32 on sm_90: L7-breg beside fused-cluster and
//! fused-split). For all of them: `mra_transform.h` (host launchers, workspace queries, the
//! per-K dispatch), `mra_transform_device.h` (every device part), `manifest.json` and a README.

mod header;
pub mod operations;
mod readme;

use crate::emit::{self, Kernel};
use crate::ir::Schedule;
use crate::plan::{Body, PlanError, Request};
use crate::{levels, Arch, DType, Vendor};
use serde::Serialize;

/// Levels tried in order for the host launcher when no level is asked for: the fastest
/// generated levels of the sweeps (README tables) where they fit: fused-split (K = 32, sm_90,
/// f64), fused-pipe (NVIDIA sm_80+, K <= 24 on sm_90), fused-cluster (sm_90: K = 25..31, where
/// one tensor no longer fits a block), then the levels of [`BLOCK_CHAIN`].
pub const DEFAULT_CHAIN: &[&str] = &["fused-split", "fused-pipe", "fused-cluster", "fused", "L7-breg", "L3-regblk"];

/// Levels tried in order for the block-level device function (`transform_block`, one tensor per
/// block) where the launcher's level has none: fused-pipe (its block-level function is the
/// unpipelined per-tensor transform), else fused (also AMD: K <= 15 on 64 KiB LDS), else the
/// B-in-registers matrix-core level, else the register-blocked one (f32, or archs without FP64
/// matrix cores).
pub const BLOCK_CHAIN: &[&str] = &["fused-pipe", "fused", "L7-breg", "L3-regblk"];

/// One K of a bundle: the kernel the host launcher runs, its level, and why that level; and,
/// where that kernel has no block-level function, the kernel whose device part is exported.
#[derive(Clone, Debug)]
pub struct Entry {
    pub k: u32,
    pub schedule: Schedule,
    pub kernel: Kernel,
    /// `default (fused fits)`, `-l L3`, `tuned`: printed in the header and README.
    pub reason: String,
    /// The block-level function's kernel where `kernel` spreads a tensor over several blocks
    /// (`None`: `kernel`'s own `transform_block`).
    pub block: Option<Block>,
}

/// The kernel whose device part a bundle exports for one K, when it is not the launcher's.
#[derive(Clone, Debug)]
pub struct Block {
    pub schedule: Schedule,
    pub kernel: Kernel,
    /// Why: the launcher's level has no block-level function, and this is the first of
    /// [`BLOCK_CHAIN`] that lowers.
    pub reason: String,
}

impl Entry {
    /// The launcher kernel's namespace, `mra::fused_k8_f64`.
    pub fn namespace(&self) -> String {
        emit::namespace_name(&self.schedule, &self.kernel.plan.request)
    }

    /// Dynamic shared memory the kernel launches with (0: static arrays only).
    pub fn dynamic_shared_bytes(&self) -> u32 {
        if self.kernel.plan.dynamic_shared { self.kernel.plan.shared_bytes } else { 0 }
    }

    /// The kernel whose `transform_block` the device part holds.
    pub fn block_kernel(&self) -> &Kernel {
        self.block.as_ref().map_or(&self.kernel, |b| &b.kernel)
    }

    /// The block-level function's namespace (the launcher's, or the fallback level's).
    pub fn block_namespace(&self) -> String {
        match &self.block {
            Some(b) => emit::namespace_name(&b.schedule, &b.kernel.plan.request),
            None => self.namespace(),
        }
    }

    /// Blocks that share one tensor (`split_output(N)`: N; else 1).
    pub fn blocks_per_tensor(&self) -> u32 {
        self.kernel.plan.work_blocks(1) as u32
    }

    /// Tensors one block of the launcher transforms per pass (`stack(N)`: N; else 1).
    pub fn tensors_per_block(&self) -> u32 {
        match self.kernel.plan.body {
            Body::Transform(tp) => tp.stack,
            _ => 1,
        }
    }

    /// What the launcher's grid must be a multiple of (a cluster's blocks, a tensor's blocks).
    pub fn grid_multiple(&self) -> u32 {
        self.kernel.plan.grid_multiple()
    }

    fn source_name(&self) -> String {
        format!("{}.{}", self.kernel.entry, source_ext(self.kernel.plan.request.arch))
    }

    fn device_header_name(&self) -> String {
        format!("{}_device.h", self.block_kernel().entry)
    }
}

/// `cu` or `hip`.
pub fn source_ext(arch: &Arch) -> &'static str {
    match arch.vendor {
        Vendor::Nvidia => "cu",
        Vendor::Amd => "hip",
    }
}

/// Why a K cannot be exported as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportError {
    #[error("K={k}: {source}")]
    Plan { k: u32, source: PlanError },
    #[error("K={k}: level {level} is {what}; export needs a level with a transform kernel of its own (e.g. fused, L7, L3)")]
    NoKernel { k: u32, level: String, what: &'static str },
    #[error("K={k}: no level of {chain} lowers for {arch} in {dtype}: {why}")]
    NoDefault { k: u32, chain: String, arch: &'static str, dtype: DType, why: String },
    #[error("K={k}: level {level} spreads a tensor over several blocks, and no level of {chain} has a block-level transform_block for {arch} in {dtype}: {why}")]
    NoBlockFunction { k: u32, level: String, chain: String, arch: &'static str, dtype: DType, why: String },
    #[error("-K {k} is listed twice")]
    Duplicate { k: u32 },
}

/// The kernel for `k` at `level` (exactly that level: an error says why it cannot). Where the
/// level spreads a tensor over several blocks, the block-level function comes from
/// [`BLOCK_CHAIN`] ([`Entry::block`]).
pub fn entry_for(level: &Schedule, k: u32, arch: &'static Arch, dtype: DType, reason: String) -> Result<Entry, ExportError> {
    // A code calls the launcher once over its batch: the tuned defaults timed that way.
    let req = Request { k, arch, dtype };
    let level = level.at_in(req, crate::tuned_defaults::Regime::Api);
    let kernel = emit::generate(&level, req).map_err(|source| ExportError::Plan { k, source })?;
    let multi = match kernel.plan.body {
        Body::Transform(tp) if tp.cluster > 1 => Some("a thread-block cluster"),
        Body::Transform(tp) if tp.split_output > 1 => Some("two blocks (split_output)"),
        Body::Transform(_) => None,
        Body::Copy { shadow: None, .. } => return Err(no_kernel(k, &level, "the copy floor (no transform)")),
        Body::Copy { shadow: Some(_), .. } => return Err(no_kernel(k, &level, "the measured bound (a copy beside discarded matrix instructions, no transform)")),
        Body::Library(_) => return Err(no_kernel(k, &level, "vendor BLAS calls, not a kernel")),
    };
    let block = match multi {
        Some(what) => Some(block_for(k, arch, dtype, &level.name, what)?),
        // stack(N): the launcher's passes span N tensors; transform_block is one tensor per call,
        // from the same level with stack(1).
        None => match one_tensor_per_pass(&level, req) {
            Some(one) => {
                let kernel = emit::generate(&one, req).map_err(|source| ExportError::Plan { k, source })?;
                let reason = format!("{} stacks {} tensors per pass: transform_block is the same level with stack(1), one tensor per call", level.name, kernel_stack(&level, req));
                Some(Block { schedule: one, kernel, reason })
            }
            None => None,
        },
    };
    Ok(Entry { k, schedule: level, kernel, reason, block })
}

fn no_kernel(k: u32, level: &Schedule, what: &'static str) -> ExportError {
    ExportError::NoKernel { k, level: level.name.clone(), what }
}

/// `level` generated for `k` (with `stack(1)` where it would stack tensors; the reason says so).
fn kernel_for(level: &Schedule, k: u32, arch: &'static Arch, dtype: DType, reason: String) -> Result<(Schedule, Kernel, String), ExportError> {
    let one = one_tensor_per_pass(level, Request { k, arch, dtype });
    let reason = if one.is_some() { format!("{reason}; stack(1): transform_block is one tensor per call") } else { reason };
    let level = one.unwrap_or_else(|| level.clone());
    let kernel = emit::generate(&level, Request { k, arch, dtype }).map_err(|source| ExportError::Plan { k, source })?;
    Ok((level, kernel, reason))
}

/// The block-level function for `k` beside a launcher level (`launcher`) that spreads a tensor
/// over `what`: the first level of [`BLOCK_CHAIN`] that lowers.
fn block_for(k: u32, arch: &'static Arch, dtype: DType, launcher: &str, what: &str) -> Result<Block, ExportError> {
    let mut why = Vec::new();
    for name in BLOCK_CHAIN {
        let level = levels::find(name).expect("the block chain names levels");
        match level.plan(Request { k, arch, dtype }) {
            Ok(_) => {
                let reason = format!("{launcher} spreads a tensor over {what}: transform_block from {name}, the first of {} that fits", BLOCK_CHAIN.join(", "));
                let (schedule, kernel, reason) = kernel_for(&level, k, arch, dtype, reason)?;
                return Ok(Block { schedule, kernel, reason });
            }
            Err(e) => why.push(e.to_string()),
        }
    }
    Err(ExportError::NoBlockFunction { k, level: launcher.to_string(), chain: BLOCK_CHAIN.join(", "), arch: arch.name, dtype, why: distinct_clauses(&why) })
}

/// The tensors `level`'s passes span at `req` (`stack(N)`; 1 where it has none).
fn kernel_stack(level: &Schedule, req: Request) -> u32 {
    match level.plan(req) {
        Ok(crate::Plan { body: Body::Transform(tp), .. }) => tp.stack,
        _ => 1,
    }
}

/// `level` with `stack(1)` where its tunable `stack(N)` resolves to N > 1 for `req` (else
/// `None`): a bundle's `transform_block` transforms one tensor per call, and with N tensors
/// per pass each call would compute N slots' rows for it (N times the instructions, N times
/// the shared memory). The bundle's batch kernel is planned the same way, so both match.
fn one_tensor_per_pass(level: &Schedule, req: Request) -> Option<Schedule> {
    let stacked = matches!(level.plan(req), Ok(crate::Plan { body: Body::Transform(tp), .. }) if tp.stack > 1);
    let tunable = level.params().iter().any(|p| p.name == "stack");
    if !(stacked && tunable) {
        return None;
    }
    level.with_config(&[("stack".to_string(), 1)].into_iter().collect()).ok()
}

/// Levels tried in order for an operation other than the seed's ([`crate::Operation`]): the
/// levels `plan_op` names in its refusals. A rank sum: `fused`, else `L3-regblk`.
pub const OP_CHAIN: &[&str] = &["fused-split", "fused-pipe", "fused", "L7-breg", "L3-regblk"];

/// The default level computing `op` at `k`: the first of [`OP_CHAIN`] (for a rank sum, `fused`)
/// that lowers it, or every level's reason.
pub fn default_op_level(k: u32, arch: &'static Arch, dtype: DType, op: crate::Operation) -> Result<Schedule, ExportError> {
    if op.is_seed() {
        return default_level(k, arch, dtype);
    }
    let chain: &[&str] = if op.matrices == crate::Matrices::RankSum { &["fused", "L3-regblk"] } else { OP_CHAIN };
    let mut why = Vec::new();
    for name in chain {
        let level = levels::find(name).expect("the operation chain names levels");
        match level.plan_tuned(Request { k, arch, dtype }, op, crate::tuned_defaults::Regime::Api) {
            Ok(_) => return Ok(level),
            Err(e @ PlanError::KOutOfRange(_)) => return Err(ExportError::Plan { k, source: e }),
            Err(e) => why.push(e.to_string()),
        }
    }
    Err(ExportError::NoDefault { k, chain: chain.join(", "), arch: arch.name, dtype, why: distinct_clauses(&why) })
}

/// The level of an operation's block-level device function where [`default_op_level`]'s spreads
/// a tensor over several blocks: the first of [`OP_CHAIN`] with one tensor per block.
pub fn block_op_level(k: u32, arch: &'static Arch, dtype: DType, op: crate::Operation) -> Result<Schedule, ExportError> {
    let req = Request { k, arch, dtype };
    let one_per_block = |name: &str| levels::find(name).ok().and_then(|l| l.plan_tuned(req, op, crate::tuned_defaults::Regime::Api).ok()).is_some_and(|p| p.work_blocks(1) == 1);
    match OP_CHAIN.iter().find(|name| one_per_block(name)) {
        Some(name) => Ok(levels::find(name).expect("the operation chain names levels")),
        None => Err(ExportError::NoDefault { k, chain: OP_CHAIN.join(", "), arch: arch.name, dtype, why: "no level of the chain with one tensor per block lowers it".into() }),
    }
}

/// The default level for `k`: the first level of [`DEFAULT_CHAIN`] that lowers.
pub fn default_level(k: u32, arch: &'static Arch, dtype: DType) -> Result<Schedule, ExportError> {
    let mut why = Vec::new();
    for name in DEFAULT_CHAIN {
        let level = levels::find(name).expect("the default chain names levels");
        match level.plan(Request { k, arch, dtype }) {
            Ok(_) => return Ok(level),
            Err(e @ PlanError::KOutOfRange(_)) => return Err(ExportError::Plan { k, source: e }),
            Err(e) => why.push(e.to_string()),
        }
    }
    Err(ExportError::NoDefault { k, chain: DEFAULT_CHAIN.join(", "), arch: arch.name, dtype, why: distinct_clauses(&why) })
}

/// The levels' reasons joined by "; ", each clause said once: they share their endings (which
/// archs run the type, which types run here), and the message is one line a person reads.
fn distinct_clauses(reasons: &[String]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for clause in reasons.iter().flat_map(|r| r.split("; ")) {
        if !seen.contains(&clause) {
            seen.push(clause);
        }
    }
    seen.join("; ")
}

/// The default kernel for `k` (see [`default_level`]).
pub fn default_entry(k: u32, arch: &'static Arch, dtype: DType) -> Result<Entry, ExportError> {
    let level = default_level(k, arch, dtype)?;
    let reason = format!("default ({})", level.name);
    entry_for(&level, k, arch, dtype, reason)
}

/// One file of a bundle: a path relative to the export directory and its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct File {
    pub path: String,
    pub text: String,
}

/// What `manifest.json` says about one K (also what tests check the C++ constants against).
#[derive(Serialize)]
struct ManifestEntry<'a> {
    #[serde(rename = "K")]
    k: u32,
    level: &'a str,
    reason: &'a str,
    entry: &'a str,
    namespace: String,
    source: String,
    device_header: String,
    threads: u32,
    shared_bytes: u32,
    dynamic_shared_bytes: u32,
    workspace_elems_per_block: u64,
    /// `persistent(1)`: the launcher uses no more blocks than the device holds at once.
    persistent: bool,
    /// Blocks that share one tensor (`split_output(2)`: 2), and what the grid is a multiple of
    /// (a cluster's blocks, a tensor's blocks): the launcher's grid is
    /// min(nfuncs · blocks_per_tensor, what the device holds at once[, MRA_MAX_BLOCKS]) rounded up
    /// to a multiple of grid_multiple.
    blocks_per_tensor: u32,
    grid_multiple: u32,
    /// The block-level function (`device_header`): the launcher's kernel, or another level's
    /// where the launcher spreads a tensor over several blocks.
    block: ManifestBlock<'a>,
}

/// What `manifest.json` says about one K's block-level function.
#[derive(Serialize)]
struct ManifestBlock<'a> {
    level: &'a str,
    reason: &'a str,
    namespace: String,
    threads: u32,
    shared_bytes: u32,
    workspace_elems_per_block: u64,
}

/// The files of a bundle for `entries` (distinct K, all of one arch and dtype).
pub fn bundle(entries: &[Entry], generator: &str) -> Result<Vec<File>, ExportError> {
    let mut seen = std::collections::BTreeSet::new();
    for e in entries {
        if !seen.insert(e.k) {
            return Err(ExportError::Duplicate { k: e.k });
        }
    }
    let mut files = Vec::new();
    for e in entries {
        files.push(File { path: e.source_name(), text: e.kernel.source.clone() });
        files.push(File { path: e.device_header_name(), text: device_header(e) });
    }
    files.push(File { path: "mra_transform_device.h".into(), text: umbrella_device_header(entries) });
    files.push(File { path: "mra_transform.h".into(), text: header::host_header(entries, generator) });
    files.push(File { path: "README.md".into(), text: readme::readme(entries, generator) });
    let manifest: Vec<ManifestEntry> = entries
        .iter()
        .map(|e| ManifestEntry {
            k: e.k,
            level: &e.kernel.level,
            reason: &e.reason,
            entry: &e.kernel.entry,
            namespace: e.namespace(),
            source: e.source_name(),
            device_header: e.device_header_name(),
            threads: e.kernel.plan.threads,
            shared_bytes: e.kernel.plan.shared_bytes,
            dynamic_shared_bytes: e.dynamic_shared_bytes(),
            workspace_elems_per_block: e.kernel.plan.workspace_elems_per_block,
            persistent: e.kernel.plan.persistent,
            blocks_per_tensor: e.blocks_per_tensor(),
            grid_multiple: e.grid_multiple(),
            block: ManifestBlock {
                level: &e.block_kernel().level,
                reason: e.block.as_ref().map_or("the launcher's kernel", |b| b.reason.as_str()),
                namespace: e.block_namespace(),
                threads: e.block_kernel().plan.threads,
                shared_bytes: e.block_kernel().plan.shared_bytes,
                workspace_elems_per_block: e.block_kernel().plan.workspace_elems_per_block,
            },
        })
        .collect();
    let text = serde_json::to_string_pretty(&manifest).expect("plain data serializes") + "\n";
    files.push(File { path: "manifest.json".into(), text });
    Ok(files)
}

/// `mra::k8_f64`: the per-K alias of a bundle's kernel namespace.
pub fn alias(k: u32, dtype: DType) -> String {
    format!("k{k}_{dtype}")
}

/// The include guard of a device header.
fn guard(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect()
}

/// The block kernel's source up to its namespace's end (prelude, constants, device functions),
/// guarded, plus the per-K alias `mra::k8_f64`.
fn device_header(e: &Entry) -> String {
    let ns = e.block_namespace();
    let end_line = emit::namespace_end(&ns);
    let block = e.block_kernel();
    let src = &block.source;
    let end = src.find(&end_line).expect("a transform kernel closes its namespace") + end_line.len();
    let g = guard(&e.device_header_name());
    let inner = &ns["mra::".len()..];
    let dtype = block.plan.request.dtype;
    let origin = match &e.block {
        None => format!(
            "// Device part of {src_name}: the block-level transform for callers' own kernels.\n",
            src_name = e.source_name()
        ),
        Some(b) => format!(
            "// The block-level transform of K = {k} for callers' own kernels: level {level}'s device part. The host\n\
             // launcher runs {launcher} ({src_name}), which spreads a tensor over several blocks and so has no\n\
             // block-level function; {level} is the first of {chain} that fits.\n",
            k = e.k,
            level = b.kernel.level,
            launcher = e.kernel.level,
            src_name = e.source_name(),
            chain = BLOCK_CHAIN.join(", "),
        ),
    };
    let kernel_note = match &e.block {
        None => format!("that is in {}, which this header does not conflict with", e.source_name()),
        Some(_) => format!("{}'s is not part of this export", block.level),
    };
    format!(
        "{origin}\
         // #include it in the translation unit of a kernel that calls\n\
         //   {ns}::transform_block(a_n, b, c_n, workspace, smem)   (alias mra::{alias}::transform_block)\n\
         // with every thread of a block of {ns}::THREADS threads, {ns}::SHARED_BYTES bytes of shared\n\
         // memory and {ns}::WORKSPACE_ELEMS elements of workspace per block. Not the __global__ kernel:\n\
         // {kernel_note}.\n\
         #ifndef {g}\n#define {g}\n\n{body}\n\nnamespace mra {{ namespace {alias} = {inner}; }}\n\n#endif  // {g}\n",
        alias = alias(e.k, dtype),
        body = &src[..end],
    )
}

/// Every device part of the bundle, in one include.
fn umbrella_device_header(entries: &[Entry]) -> String {
    let mut s = String::from(
        "// Every block-level transform of this export: #include in a kernel's translation unit and call\n\
         // mra::k<K>_<dtype>::transform_block(...) (see each <entry>_device.h and README.md).\n\
         #ifndef MRA_TRANSFORM_DEVICE_H\n#define MRA_TRANSFORM_DEVICE_H\n\n",
    );
    for e in entries {
        s += &format!("#include \"{}\"  // K = {}: {}\n", e.device_header_name(), e.k, e.block_kernel().level);
    }
    s += "\n#endif  // MRA_TRANSFORM_DEVICE_H\n";
    s
}
