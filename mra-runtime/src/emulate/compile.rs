//! Compiling an emulated program with the host's clang++ (AddressSanitizer on, or
//! ThreadSanitizer for the race check), through the kernel cache: the executable is cached by a
//! hash of the emulated source, the flags and the compiler's version, so `validate` compiles
//! each (level, arch, K, dtype) once for every N.

use crate::cache::KernelCache;
use crate::hip::clang::{CLANG_CANDIDATES, CLANG_ENV};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Why the emulator could not build a kernel.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error("--emulate needs clang++ with AddressSanitizer to compile the kernels for the CPU (tried {tried}); install clang-19 and libclang-rt-19-dev (`apt-get install clang-19 libclang-rt-19-dev`) or point MRA_CLANG at a clang++")]
    NoClang { tried: String },
    /// `status` as the standard library prints it (`exit status: 1`); the first line ends with
    /// the compiler's first error, whose line is the kernel source's (`source::emulated_source`
    /// names its lines with `#line`); the whole message follows.
    #[error("{clang} could not compile the emulated kernel {entry} ({status}): {}\n{stderr}", crate::error::first_error(.stderr))]
    Failed { clang: String, entry: String, status: String, stderr: String },
    /// The compiler said it succeeded and wrote nothing (`MRA_CLANG` naming something that is
    /// no compiler, such as /bin/true).
    #[error("{clang} reported success but wrote no executable for the emulated kernel {entry}; point MRA_CLANG at a clang++ with AddressSanitizer")]
    NoExecutable { clang: String, entry: String },
    #[error("emulator: {what} ({path}): {source}")]
    Io { what: &'static str, path: PathBuf, source: std::io::Error },
}

/// The flags of every emulator compile: C++20, threads, optimized enough to run the waves
/// quickly; the sanitizer is [`Checker::flag`]'s.
pub const FLAGS: &[&str] = &[
    "-x", "c++", "-std=c++20", "-O1", "-g0", "-pthread", "-fno-omit-frame-pointer",
    // The AMDGPU launch-bound attribute means nothing on the host.
    "-Wno-unknown-attributes", "-Wno-ignored-attributes",
    // Vector arguments passed without AVX: the ABI note does not matter inside one program.
    "-Wno-psabi",
];

/// What the emulated executables check beyond the results.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Checker {
    /// AddressSanitizer: an access outside a tensor or an LDS array stops the run.
    #[default]
    Bounds,
    /// ThreadSanitizer: two threads of a block touching the same memory (LDS, or a tensor)
    /// without a barrier between them, one of them writing, stops the run (`validate
    /// --emulate --races`). The fibers' switches carry no ordering; only the block barrier and
    /// a wave's matrix instructions (its lanes meet there) order the threads.
    Races,
}

impl Checker {
    pub fn flag(self) -> &'static str {
        match self {
            Checker::Bounds => "-fsanitize=address",
            Checker::Races => "-fsanitize=thread",
        }
    }
}

/// The host C++ compiler.
#[derive(Clone, Debug)]
pub struct HostClang {
    pub path: PathBuf,
    pub version: String,
}

impl HostClang {
    /// `$MRA_CLANG` if set, else the first of the clang candidates that runs and links a
    /// program with AddressSanitizer.
    pub fn find() -> Result<HostClang, CompileError> {
        let path = crate::hip::find_tool(CLANG_ENV, CLANG_CANDIDATES, links_with_asan).map_err(|tried| CompileError::NoClang { tried })?;
        let version = crate::process::output(Command::new(&path).arg("--version"))
            .ok()
            .and_then(|o| String::from_utf8_lossy(&o.stdout).lines().next().map(str::to_string))
            .unwrap_or_else(|| "unknown version".into());
        Ok(HostClang { path, version })
    }

    pub fn describe(&self) -> String {
        format!("{} ({})", self.path.display(), self.version)
    }

    /// Compiles `source` to an executable in `cache` (or in `scratch` when the cache is off).
    pub fn build(&self, source: &str, entry: &str, cache: &KernelCache, scratch: &Path, checker: Checker) -> Result<Built, CompileError> {
        // v2: executables carry a `.sum` entry (v1's had none, and are never looked at).
        let key = KernelCache::key(&[source.as_bytes(), FLAGS.join(" ").as_bytes(), checker.flag().as_bytes(), self.version.as_bytes(), b"emulate-v2"]);
        // Built before: in the cache (checked: length, SHA-256, executable; a damaged one is
        // removed with one warning and built again), or in this run's own scratch directory
        // (the cache off or unwritable).
        if let Some(exe) = cache.get_file(&key, "emu") {
            return Ok(Built { exe, seconds: 0.0, cached: true });
        }
        let exe = scratch.join(format!("{key}.emu"));
        if exe.is_file() {
            return Ok(Built { exe, seconds: 0.0, cached: true });
        }
        // Into the cache while it can be written, else into this run's scratch directory: a
        // cache that cannot be created or written (MRA_KERNEL_CACHE naming a file, a read-only
        // directory) costs one warning and the caching, as for the GPU kernels, not the run.
        let mut dir = match cache.dir().filter(|_| cache.writable()) {
            Some(d) => match std::fs::create_dir_all(d) {
                Ok(()) => d.to_path_buf(),
                Err(e) => {
                    cache.give_up(&e);
                    scratch.to_path_buf()
                }
            },
            None => scratch.to_path_buf(),
        };
        // Unique temporary names: parallel compiles of the same kernel must not collide.
        let tmp_name = format!("{key}.{}.{:?}.tmp", std::process::id(), std::thread::current().id()).replace(['(', ')'], "");
        let mut tmp = dir.join(&tmp_name);
        let mut src = tmp.with_extension("cpp");
        if let Err(e) = std::fs::write(&src, source) {
            if dir == scratch {
                return Err(CompileError::Io { what: "writing the emulated source", path: src, source: e });
            }
            cache.give_up(&e);
            dir = scratch.to_path_buf();
            tmp = dir.join(&tmp_name);
            src = tmp.with_extension("cpp");
            std::fs::write(&src, source).map_err(|source| CompileError::Io { what: "writing the emulated source", path: src.clone(), source })?;
        }
        let exe = dir.join(format!("{key}.emu"));
        let start = Instant::now();
        // clang++'s own temporaries (the object before the link) go into the run's scratch
        // directory, removed with it however the compile ends (a stopped clang leaves them).
        let out = crate::process::output(Command::new(&self.path).args(FLAGS).arg(checker.flag()).arg("-o").arg(&tmp).arg(&src).env("TMPDIR", scratch));
        // MRA_EMU_KEEP=1 keeps the emulated C++ beside its executable (to rebuild it by hand
        // with -g when an emulated kernel misbehaves).
        if std::env::var_os("MRA_EMU_KEEP").is_none() {
            let _ = std::fs::remove_file(&src);
        }
        // Stopped (an interrupt, the tool time limit) or failed: the partial executable goes
        // too, never left in the kernel cache.
        let out = out.map_err(|source| {
            let _ = std::fs::remove_file(&tmp);
            CompileError::Io { what: "running clang++", path: self.path.clone(), source }
        })?;
        if !out.status.success() {
            let _ = std::fs::remove_file(&tmp);
            return Err(CompileError::Failed {
                clang: self.describe(),
                entry: entry.to_string(),
                status: out.status.to_string(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            });
        }
        if !std::fs::metadata(&tmp).is_ok_and(|m| m.is_file() && m.len() > 0) {
            let _ = std::fs::remove_file(&tmp);
            return Err(CompileError::NoExecutable { clang: self.describe(), entry: entry.to_string() });
        }
        let stored = match dir == scratch {
            true => std::fs::rename(&tmp, &exe).map(|()| exe.clone()),
            // Its `.sum` first, then the executable: what a later run checks it against. A cache
            // that takes the executable but not its sum is given up, as any unwritable one.
            false => cache.store_file(&key, "emu", &tmp).or_else(|e| {
                cache.give_up(&e);
                let exe = scratch.join(format!("{key}.emu"));
                std::fs::copy(&tmp, &exe).and_then(|_| std::fs::remove_file(&tmp)).map(|()| exe)
            }),
        };
        let exe = stored.map_err(|source| {
            let _ = std::fs::remove_file(&tmp);
            CompileError::Io { what: "storing the emulated executable", path: exe.clone(), source }
        })?;
        Ok(Built { exe, seconds: start.elapsed().as_secs_f64(), cached: false })
    }
}

/// A built emulated kernel.
#[derive(Clone, Debug)]
pub struct Built {
    pub exe: PathBuf,
    pub seconds: f64,
    pub cached: bool,
}

/// Does this clang++ link a C++ program with AddressSanitizer (the runtime is a separate
/// package on Debian: libclang-rt-19-dev)?
fn links_with_asan(clang: &Path) -> bool {
    links_with(clang, Checker::Bounds)
}

/// Does this clang++ link a C++ program with `checker`'s sanitizer?
pub fn links_with(clang: &Path, checker: Checker) -> bool {
    let Ok(dir) = crate::hip::ScratchDir::new("emu-probe") else { return false };
    let src = dir.path.join("probe.cpp");
    if std::fs::write(&src, "int main() { return 0; }\n").is_err() {
        return false;
    }
    crate::process::output(Command::new(clang).args(["-x", "c++", checker.flag(), "-o"]).arg(dir.path.join("probe")).arg(&src))
        .is_ok_and(|o| o.status.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for clang++ that writes `built` to its `-o` file (executable, as a linker
    /// leaves it): the cache logic without a toolchain.
    fn fake_clang(dir: &Path) -> HostClang {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join("fake-clang++");
        std::fs::write(&path, "#!/bin/sh\nwhile [ $# -gt 0 ]; do if [ \"$1\" = -o ]; then out=\"$2\"; fi; shift; done\nprintf built > \"$out\"; chmod +x \"$out\"\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        HostClang { path, version: "fake 1".into() }
    }

    /// A "compiler" that exits 0 and writes nothing (MRA_CLANG=/bin/true) is blamed for it, and
    /// one that fails says its status once and its first error on the first line.
    #[test]
    fn a_compiler_that_writes_nothing_or_fails_is_named_as_the_culprit() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("mra-emu-no-exe-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let cache = KernelCache::at(dir.join("cache"));
        let true_ = HostClang { path: "/bin/true".into(), version: "unknown version".into() };
        let e = true_.build("int a;", "mra_k", &cache, &dir, Checker::Bounds).unwrap_err().to_string();
        assert_eq!(e, "/bin/true (unknown version) reported success but wrote no executable for the emulated kernel mra_k; point MRA_CLANG at a clang++ with AddressSanitizer");
        let failing = dir.join("failing-clang++");
        std::fs::write(&failing, "#!/bin/sh\necho 'In file included from x:' >&2\necho 'mra_k.hip:76:55: error: expected expression' >&2\nexit 1\n").unwrap();
        std::fs::set_permissions(&failing, std::fs::Permissions::from_mode(0o755)).unwrap();
        let failing = HostClang { path: failing, version: "fake 1".into() };
        let e = failing.build("int a;", "mra_k", &cache, &dir, Checker::Bounds).unwrap_err().to_string();
        let first = e.lines().next().unwrap();
        assert!(first.ends_with("could not compile the emulated kernel mra_k (exit status: 1): mra_k.hip:76:55: error: expected expression"), "{e}");
        assert!(!e.contains("exit status exit status"), "{e}");
        let left: Vec<_> = std::fs::read_dir(dir.join("cache")).map(|d| d.map(|e| e.unwrap().file_name()).collect()).unwrap_or_default();
        assert!(left.is_empty(), "nothing left in the cache: {left:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_cache_that_cannot_be_a_directory_warns_once_and_builds_without_it() {
        let dir = std::env::temp_dir().join(format!("mra-emu-cache-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let scratch = dir.join("scratch");
        std::fs::create_dir_all(&scratch).unwrap();
        let clang = fake_clang(&dir);
        // MRA_KERNEL_CACHE naming an existing regular file: no directory can be made there.
        let file = dir.join("cache-is-a-file");
        std::fs::write(&file, "mine").unwrap();
        let cache = KernelCache::at(&file);
        for (source, entry) in [("int a;", "a"), ("int b;", "b"), ("int a;", "a")] {
            let built = clang.build(source, entry, &cache, &scratch, Checker::Bounds).unwrap_or_else(|e| panic!("{entry}: {e}"));
            assert!(built.exe.starts_with(&scratch), "{entry}: built in the scratch directory: {}", built.exe.display());
            assert_eq!(std::fs::read(&built.exe).unwrap(), b"built");
        }
        let w = cache.warnings();
        assert_eq!(w.len(), 1, "one warning for all builds: {w:?}");
        assert!(w[0].contains(crate::cache::CACHE_ENV) && w[0].contains(&file.display().to_string()) && w[0].contains("without caching") && !w[0].contains('\n'), "{w:?}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine", "the user's file kept");
        // A usable cache: built into it, found there the second time, no warning.
        let good = KernelCache::at(dir.join("cache"));
        assert!(!clang.build("int c;", "c", &good, &scratch, Checker::Bounds).unwrap().cached);
        let again = clang.build("int c;", "c", &good, &scratch, Checker::Bounds).unwrap();
        assert!(again.cached && again.exe.starts_with(dir.join("cache")), "{}", again.exe.display());
        assert!(good.warnings().is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_damaged_executable_in_the_cache_is_warned_once_evicted_and_built_again() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("mra-emu-damage-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let scratch = dir.join("scratch");
        std::fs::create_dir_all(&scratch).unwrap();
        let clang = fake_clang(&dir);
        let cache = KernelCache::at(dir.join("cache"));
        let damages: [(&str, fn(&Path)); 4] = [
            ("truncated", |p| std::fs::write(p, b"buil").unwrap()),
            ("empty", |p| std::fs::write(p, b"").unwrap()),
            ("garbage", |p| std::fs::write(p, b"\x7fELF\x02").unwrap()),
            ("not executable", |p| std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o644)).unwrap()),
        ];
        let first = clang.build("int d;", "d", &cache, &scratch, Checker::Bounds).unwrap();
        assert!(!first.cached && first.exe.starts_with(dir.join("cache")));
        for (i, (how, damage)) in damages.iter().enumerate() {
            damage(&first.exe);
            let again = clang.build("int d;", "d", &cache, &scratch, Checker::Bounds).unwrap();
            assert!(!again.cached, "{how}: built again, not run as it was");
            assert_eq!(std::fs::read(&again.exe).unwrap(), b"built", "{how}");
            assert!(std::fs::metadata(&again.exe).unwrap().permissions().mode() & 0o100 != 0, "{how}: executable");
            let w = cache.warnings();
            assert_eq!(w.len(), i + 1, "{how}: one warning: {w:?}");
            assert!(w[i].contains(&first.exe.display().to_string()) && w[i].contains("compiling again") && !w[i].contains('\n'), "{how}: {w:?}");
            assert!(clang.build("int d;", "d", &cache, &scratch, Checker::Bounds).unwrap().cached, "{how}: the rebuilt one is used next");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
