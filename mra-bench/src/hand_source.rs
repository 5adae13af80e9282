//! `--source FILE`: a hand-edited kernel validated and timed in place of the generated one.
//!
//! The level still decides how the kernel is launched: threads, shared memory and grid come
//! from its plan, as in any run. The file replaces only the source. It must therefore define
//! the same entry, and, where it states a block size, the same one. The usual start is
//! `mra-bench --emit-src ... -o FILE`, then an edit.

use crate::select::CmdResult;
use mra_codegen::Kernel;

/// A kernel source read from `--source`.
pub struct HandSource {
    pub path: String,
    text: String,
}

impl HandSource {
    /// Reads the file; refuses one that cannot be read or holds nothing.
    pub fn read(path: &str) -> CmdResult<HandSource> {
        let text = mra_runtime::read_file::read_bounded_to_string(std::path::Path::new(path), mra_runtime::read_file::MAX_SOURCE)
            .map_err(|e| format!("--source {path}: cannot read it ({e})"))?;
        if text.trim().is_empty() {
            return Err(format!("--source {path} is empty").into());
        }
        Ok(HandSource { path: path.to_string(), text })
    }

    /// `kernel` (the level as generated for this request) with this file as its source. Refuses
    /// a library level (nothing to replace), a file that does not define the kernel's entry,
    /// and a file whose `THREADS` differs from the block size the plan launches.
    pub fn apply(&self, mut kernel: Kernel) -> CmdResult<Kernel> {
        let req = kernel.plan.request;
        let what = format!("{} at K={} ({}, {})", kernel.level, req.k, req.dtype, req.arch.name);
        let emit = format!("mra-bench --emit-src -l {} -K {} --arch {} --dtype {} -o {}", kernel.level, req.k, req.arch.name, req.dtype, self.path);
        if kernel.entry.is_empty() {
            return Err(format!("--source {}: {what} calls a vendor library and has no kernel to replace", self.path).into());
        }
        if !defines(&self.text, &kernel.entry) {
            return Err(format!("--source {} does not define {}, the kernel of {what}; start from `{emit}`", self.path, kernel.entry).into());
        }
        if let (Some(theirs), Some(ours)) = (threads_constant(&self.text), threads_constant(&kernel.source)) {
            if theirs != ours {
                return Err(format!(
                    "--source {} was written for THREADS = {theirs}, but {what} launches {ours} threads per block here; emit it with the configuration this command uses (`{emit}`, with --untuned if this command has it)",
                    self.path
                )
                .into());
            }
        }
        kernel.source = self.text.clone();
        Ok(kernel)
    }
}

/// Whether `text` names `entry` as a function: the name, then `(` (spaces allowed between),
/// and before it neither a letter, a digit nor `_`.
fn defines(text: &str, entry: &str) -> bool {
    text.match_indices(entry).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + entry.len()..].trim_start().chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_') && after == Some('(')
    })
}

/// The value of a `constexpr int THREADS = N;` line, as generated sources state the block size.
fn threads_constant(text: &str) -> Option<u32> {
    text.lines().find_map(|l| l.trim_start().strip_prefix("constexpr int THREADS = ")?.split(';').next()?.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mra_codegen::{levels, DType, Request};

    fn generated(level: &str, k: u32, arch: &str) -> Kernel {
        let arch = mra_codegen::arch::find(arch).unwrap();
        mra_codegen::generate(&levels::find(level).unwrap(), Request { k, arch, dtype: DType::F64 }).unwrap()
    }

    fn source(text: &str) -> HandSource {
        HandSource { path: "k.cu".into(), text: text.into() }
    }

    #[test]
    fn the_generated_source_itself_is_accepted_and_replaces_nothing_else() {
        for (level, k, arch) in [("fused-pipe", 10, "sm_90"), ("L3", 5, "gfx90a"), ("fused-split", 32, "sm_90")] {
            let g = generated(level, k, arch);
            let edited = g.source.replace("// ", "// edited: ");
            let k2 = source(&edited).apply(g.clone()).unwrap();
            assert_eq!(k2.source, edited);
            assert_eq!((k2.entry, k2.plan.threads, k2.plan.shared_bytes), (g.entry, g.plan.threads, g.plan.shared_bytes));
        }
    }

    #[test]
    fn another_entry_or_block_size_is_refused_in_one_line() {
        let g = generated("fused-pipe", 10, "sm_90");
        // Another K's kernel: its entry names another K.
        let other = generated("fused-pipe", 12, "sm_90");
        let e = source(&other.source).apply(g.clone()).err().unwrap().to_string();
        assert!(e.starts_with("--source k.cu does not define mra_fused_pipe_k10_f64, the kernel of fused-pipe at K=10 (f64, sm_90); start from `mra-bench --emit-src -l fused-pipe -K 10 --arch sm_90 --dtype f64 -o k.cu`"), "{e}");
        assert!(!e.contains('\n'));
        // The entry's name as a prefix of a longer one, or not followed by `(`, is no definition.
        assert!(!defines("void mra_fused_pipe_k10_f64x(int)", "mra_fused_pipe_k10_f64"));
        assert!(!defines("void xmra_fused_pipe_k10_f64(int)", "mra_fused_pipe_k10_f64"));
        assert!(!defines("// mra_fused_pipe_k10_f64 is launched", "mra_fused_pipe_k10_f64"));
        assert!(defines("void __cluster_dims__(2, 1, 1) mra_fused_pipe_k10_f64 (int)", "mra_fused_pipe_k10_f64"));
        // The same entry written for another block size.
        let ours = threads_constant(&g.source).unwrap();
        let other = g.source.replace(&format!("constexpr int THREADS = {ours};"), &format!("constexpr int THREADS = {};", 2 * ours));
        let e = source(&other).apply(g.clone()).err().unwrap().to_string();
        assert!(e.contains(&format!("was written for THREADS = {}, but fused-pipe at K=10 (f64, sm_90) launches {ours} threads per block here", 2 * ours)), "{e}");
        // A library level has no kernel.
        let lib = generated("vendor-3gemm", 10, "sm_90");
        let e = source("void f() {}").apply(lib).err().unwrap().to_string();
        assert!(e.contains("calls a vendor library and has no kernel to replace"), "{e}");
    }

    #[test]
    fn an_unreadable_or_empty_file_is_refused() {
        let e = HandSource::read("/nonexistent/k.cu").err().unwrap().to_string();
        assert!(e.starts_with("--source /nonexistent/k.cu: cannot read it ("), "{e}");
        let p = std::env::temp_dir().join(format!("mra-hand-source-empty-{}.cu", std::process::id()));
        std::fs::write(&p, "  \n").unwrap();
        let e = HandSource::read(p.to_str().unwrap()).err().unwrap().to_string();
        std::fs::remove_file(&p).unwrap();
        assert!(e.ends_with(".cu is empty"), "{e}");
    }
}
