//! An export bundle: the generated kernels for a list of K on one arch, as files that drop into
//! a C++ build (`mra-bench export`). Pure text; the command writes the files.
//!
//! Per kernel: the self-contained source (`.cu` / `.hip`, the same text the runtime compiles)
//! and its device part (`<entry>_device.h`: constants, `load_b`, `transform_tensor`,
//! `transform_block`, without the `__global__` kernel) for callers' own kernels. For all of
//! them: `mra_transform.h` (host launchers, workspace queries, the per-K dispatch),
//! `mra_transform_device.h` (every device part), `manifest.json` and a README.

mod header;
mod readme;

use crate::emit::{self, Kernel};
use crate::ir::Schedule;
use crate::plan::{Body, PlanError, Request};
use crate::{levels, Arch, DType, Vendor};
use serde::Serialize;

/// Levels tried in order when no level is asked for: the fastest generated levels of the H200
/// sweep (README table) where they fit: fused-pipe (NVIDIA sm_80+, K <= 24 on sm_90; its
/// block-level function is the unpipelined per-tensor transform), else fused (also AMD: K <= 15
/// on 64 KiB LDS), else the B-in-registers matrix-core level, else the register-blocked one
/// (f32, or archs without FP64 matrix cores).
pub const DEFAULT_CHAIN: &[&str] = &["fused-pipe", "fused", "L7-breg", "L3-regblk"];

/// One K of a bundle: the kernel, its level, and why that level.
#[derive(Clone, Debug)]
pub struct Entry {
    pub k: u32,
    pub schedule: Schedule,
    pub kernel: Kernel,
    /// `default (fused fits)`, `-l L3`, `tuned`: printed in the header and README.
    pub reason: String,
}

impl Entry {
    /// The kernel's namespace, `mra::fused_k8_f64`.
    pub fn namespace(&self) -> String {
        emit::namespace_name(&self.schedule, &self.kernel.plan.request)
    }

    /// Dynamic shared memory the kernel launches with (0: static arrays only).
    pub fn dynamic_shared_bytes(&self) -> u32 {
        if self.kernel.plan.dynamic_shared { self.kernel.plan.shared_bytes } else { 0 }
    }

    fn source_name(&self) -> String {
        format!("{}.{}", self.kernel.entry, source_ext(self.kernel.plan.request.arch))
    }

    fn device_header_name(&self) -> String {
        format!("{}_device.h", self.kernel.entry)
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
    #[error("-K {k} is listed twice")]
    Duplicate { k: u32 },
}

/// The kernel for `k` at `level` (exactly that level: an error says why it cannot).
pub fn entry_for(level: &Schedule, k: u32, arch: &'static Arch, dtype: DType, reason: String) -> Result<Entry, ExportError> {
    let one = one_tensor_per_pass(level, Request { k, arch, dtype });
    let reason = if one.is_some() { format!("{reason}; stack(1): transform_block is one tensor per call") } else { reason };
    let level = one.as_ref().unwrap_or(level);
    let kernel = emit::generate(level, Request { k, arch, dtype }).map_err(|source| ExportError::Plan { k, source })?;
    let what = match kernel.plan.body {
        Body::Transform(tp) if tp.cluster > 1 => Some("a thread-block-cluster kernel (one tensor spans several blocks, so there is no block-level transform_block)"),
        Body::Transform(tp) if tp.split_output > 1 => Some("a split-output kernel (one tensor spans two blocks, so there is no block-level transform_block)"),
        Body::Transform(_) => None,
        Body::Copy { shadow: None, .. } => Some("the copy floor (no transform)"),
        Body::Copy { shadow: Some(_), .. } => Some("the measured bound (a copy beside discarded matrix instructions, no transform)"),
        Body::Library(_) => Some("vendor BLAS calls, not a kernel"),
    };
    if let Some(what) = what {
        return Err(ExportError::NoKernel { k, level: level.name.clone(), what });
    }
    Ok(Entry { k, schedule: level.clone(), kernel, reason })
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

/// The kernel source up to its namespace's end (prelude, constants, device functions), guarded,
/// plus the per-K alias `mra::k8_f64`.
fn device_header(e: &Entry) -> String {
    let ns = e.namespace();
    let end_line = emit::namespace_end(&ns);
    let src = &e.kernel.source;
    let end = src.find(&end_line).expect("a transform kernel closes its namespace") + end_line.len();
    let g = guard(&e.device_header_name());
    let inner = &ns["mra::".len()..];
    let dtype = e.kernel.plan.request.dtype;
    format!(
        "// Device part of {src_name}: the block-level transform for callers' own kernels.\n\
         // #include it in the translation unit of a kernel that calls\n\
         //   {ns}::transform_block(a_n, b, c_n, workspace, smem)   (alias mra::{alias}::transform_block)\n\
         // with every thread of a block of {ns}::THREADS threads, {ns}::SHARED_BYTES bytes of shared\n\
         // memory and {ns}::WORKSPACE_ELEMS elements of workspace per block. Not the __global__ kernel:\n\
         // that is in {src_name}, which this header does not conflict with.\n\
         #ifndef {g}\n#define {g}\n\n{body}\n\nnamespace mra {{ namespace {alias} = {inner}; }}\n\n#endif  // {g}\n",
        src_name = e.source_name(),
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
        s += &format!("#include \"{}\"  // K = {}: {}\n", e.device_header_name(), e.k, e.kernel.level);
    }
    s += "\n#endif  // MRA_TRANSFORM_DEVICE_H\n";
    s
}
