//! `--source FILE`: a hand-edited kernel validated and timed in place of the generated one.
//!
//! The level still decides how the kernel is launched: threads, shared memory and grid come
//! from its plan, as in any run. The file replaces only the source. It must therefore define
//! the same entry, and, where it states a block size, the same one. The usual start is
//! `mra-bench --emit-src ... -o FILE`, then an edit.

use crate::select::CmdResult;
use mra_codegen::emit::{PRELUDE_BEGIN, PRELUDE_END};
use mra_codegen::{Kernel, Schedule};

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

    /// Refuses a library level (L6-kron, vendor-3gemm: BLAS calls, and for L6 a helper kernel
    /// that builds the Kronecker matrix, nothing a file can replace), before any GPU is looked
    /// for: a usage error, as the level and the flag do not go together on any arch.
    pub fn check_level(&self, level: &Schedule) -> CmdResult<()> {
        if level.iter_steps().any(|s| matches!(s, mra_codegen::ir::Step::Library(_))) {
            return Err(crate::select::usage(format!(
                "--source {}: {} is a library level (vendor BLAS calls): it has no generated kernel to replace; give a level that generates one (`mra-bench levels`)",
                self.path, level.name
            )));
        }
        Ok(())
    }

    /// `kernel` (the level as generated for this request) with this file as its source. Refuses
    /// a library level (nothing to replace), a file that does not define the kernel's entry,
    /// and a file whose `THREADS` differs from the block size the plan launches.
    pub fn apply(&self, mut kernel: Kernel) -> CmdResult<Kernel> {
        let req = kernel.plan.request;
        let what = format!("{} at K={} ({}, {})", kernel.level, req.k, req.dtype, req.arch.name);
        let emit = self.emit_command(&kernel);
        if kernel.entry.is_empty() || matches!(kernel.plan.body, mra_codegen::plan::Body::Library(_)) {
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

    /// [`HandSource::apply`] for the CPU wave emulator, which replaces the HIP prelude (the
    /// hardware interface between the prelude markers) with its own CPU definitions: an edit
    /// there would not be what runs, so a file whose prelude differs from the generated one is
    /// refused, naming its lines that differ. (On a GPU the file is compiled as given.)
    pub fn apply_emulated(&self, kernel: Kernel) -> CmdResult<Kernel> {
        let region = |text: &str| -> Option<(usize, Vec<String>)> {
            let begin = text.find(PRELUDE_BEGIN)?;
            let start = begin + text[begin..].find('\n')? + 1;
            let end = text[start..].find(PRELUDE_END)? + start;
            Some((text[..start].matches('\n').count() + 1, text[start..end].lines().map(str::to_string).collect()))
        };
        let Some((first_line, theirs)) = region(&self.text) else {
            return Err(format!(
                "--source {}: the emulator replaces the HIP prelude between the lines `{PRELUDE_BEGIN}` and `{PRELUDE_END}`, and this file lacks them; keep them as --emit-src wrote them",
                self.path
            )
            .into());
        };
        let (_, ours) = region(&kernel.source).expect("a generated HIP kernel has a prelude");
        if let Some(lines) = differing_lines_at(&theirs, &ours, first_line) {
            let last_line = first_line + theirs.len().max(1) - 1;
            return Err(format!(
                "--source {}: {lines} in the HIP prelude (lines {first_line}-{last_line}), which the emulator replaces with its own CPU definitions: the edit would not be what runs; keep the prelude as generated (`{}`), or validate the file on a GPU",
                self.path,
                self.emit_command(&kernel)
            )
            .into());
        }
        self.apply(kernel)
    }

    /// A compile error names the kernel's lines by the name its compiler was given (NVRTC's
    /// `<entry>.cu`, the emulator's `<entry>.hip`): they are this file's lines, so they are named
    /// by its path.
    pub fn locate(&self, message: &str, entry: &str) -> String {
        message.replace(&format!("{entry}.cu"), &self.path).replace(&format!("{entry}.hip"), &self.path)
    }

    /// The command that writes the generated source of `kernel` beside this file: never to
    /// this file itself, which would lose the user's edits.
    fn emit_command(&self, kernel: &Kernel) -> String {
        let req = kernel.plan.request;
        format!("mra-bench --emit-src -l {} -K {} --arch {} --dtype {} -o {}", kernel.level, req.k, req.arch.name, req.dtype, fresh_name(&self.path))
    }
}

/// `line 35 differs`, `lines 35-37 differ` or `lines are missing after line 34` (numbered as in the file, whose
/// prelude body starts at line `first`): the one run of lines where `theirs` differs from
/// `ours` (between their common beginning and common end); `None` where they are the same.
/// (One run covers the lines from the first difference to the last.)
fn differing_lines_at(theirs: &[String], ours: &[String], first: usize) -> Option<String> {
    if theirs == ours {
        return None;
    }
    let head = theirs.iter().zip(ours).take_while(|(a, b)| a == b).count();
    let tail = theirs[head..].iter().rev().zip(ours[head..].iter().rev()).take_while(|(a, b)| a == b).count();
    let (from, to) = (first + head, first + theirs.len() - tail);
    Some(match to - from {
        0 => format!("lines are missing after line {}", from - 1),
        1 => format!("line {from} differs from the generated one"),
        _ => format!("lines {from}-{} differ from the generated ones", to - 1),
    })
}

/// A name beside `path` for a fresh `--emit-src -o`: `k.cu` → `k.generated.cu`.
fn fresh_name(path: &str) -> String {
    let p = std::path::Path::new(path);
    match (p.file_stem(), p.extension()) {
        (Some(stem), Some(ext)) => p.with_file_name(format!("{}.generated.{}", stem.to_string_lossy(), ext.to_string_lossy())).display().to_string(),
        _ => format!("{path}.generated"),
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
        assert!(e.starts_with("--source k.cu does not define mra_fused_pipe_k10_f64, the kernel of fused-pipe at K=10 (f64, sm_90); start from `mra-bench --emit-src -l fused-pipe -K 10 --arch sm_90 --dtype f64 -o k.generated.cu`"), "{e}");
        assert!(!e.contains("-o k.cu"), "never a suggestion to overwrite the file given: {e}");
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

    /// A library level has no kernel a file could replace: refused by the level alone (before
    /// any GPU or arch), and by `apply` for L6-kron too, whose Kronecker-building helper is a
    /// kernel with an entry but not the transform.
    #[test]
    fn a_library_level_is_refused_in_one_line() {
        for level in ["L6", "vendor-3gemm"] {
            let s = levels::find(level).unwrap();
            let e = source("void f() {}").check_level(&s).unwrap_err();
            assert!(e.downcast_ref::<crate::select::Usage>().is_some(), "a usage error (exit 2)");
            let e = e.to_string();
            assert!(e.starts_with(&format!("--source k.cu: {} is a library level (vendor BLAS calls): it has no generated kernel to replace", s.name)) && !e.contains('\n'), "{e}");
        }
        assert!(source("x").check_level(&levels::find("L3").unwrap()).is_ok());
        let l6 = generated("L6", 5, "gfx90a");
        let e = source(&format!("void {}() {{}}", l6.entry)).apply(l6).err().unwrap().to_string();
        assert!(e.contains("calls a vendor library and has no kernel to replace"), "{e}");
    }

    /// The emulator replaces the prelude: a file whose prelude differs from the generated one
    /// (a syntax error in it, `mra_block_id()` returning 0, a line added or deleted) is refused
    /// for it, naming the file's lines; an edit after the prelude is accepted.
    #[test]
    fn an_edited_prelude_is_refused_for_the_emulator_naming_its_lines() {
        let g = generated("L3", 5, "gfx90a");
        let line_of = |text: &str, needle: &str| text[..text.find(needle).unwrap()].matches('\n').count() + 1;
        let (begin, end) = (line_of(&g.source, PRELUDE_BEGIN), line_of(&g.source, PRELUDE_END));
        let block = "return (int)__builtin_amdgcn_workgroup_id_x();";
        let at = line_of(&g.source, block);
        let refusal = |text: String| source(&text).apply_emulated(g.clone()).err().map(|e| e.to_string());
        let e = refusal(g.source.replace(block, "return 0;")).expect("mra_block_id() returning 0 passed");
        assert_eq!(
            e,
            format!("--source k.cu: line {at} differs from the generated one in the HIP prelude (lines {}-{}), which the emulator replaces with its own CPU definitions: the edit would not be what runs; keep the prelude as generated (`mra-bench --emit-src -l L3-regblk -K 5 --arch gfx90a --dtype f64 -o k.generated.cu`), or validate the file on a GPU", begin + 1, end - 1)
        );
        let e = refusal(g.source.replace(block, "return (int)__builtin_amdgcn_workgroup_id_x()\n    syntax error;")).unwrap();
        assert!(e.contains(&format!("lines {at}-{} differ from the generated ones in the HIP prelude", at + 1)), "{e}");
        let e = refusal(g.source.replace(&format!("    {block}\n"), "")).unwrap();
        assert!(e.contains(&format!("lines are missing after line {} in the HIP prelude", at - 1)), "{e}");
        let e = refusal(g.source.replace(PRELUDE_END, "// end")).unwrap();
        assert!(e.contains("the emulator replaces the HIP prelude between the lines") && e.contains("this file lacks them"), "{e}");
        // The kernel after the prelude is the user's to edit; the emulator compiles it as given.
        let edited = g.source.replace("for (int j = 0; j < K; ++j) acc[j] = 0.0;", "for (int j = 0; j < K; ++j) acc[j] = 0.0 + 0.0;");
        assert_ne!(edited, g.source);
        assert_eq!(source(&edited).apply_emulated(g.clone()).unwrap().source, edited);
        assert_eq!(fresh_name("dir/k.hip"), "dir/k.generated.hip");
        assert_eq!(fresh_name("kernel"), "kernel.generated");
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
