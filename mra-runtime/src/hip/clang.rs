//! Offline compilation of generated HIP C++ with clang's AMDGPU target: no HIP headers, no
//! device libraries, no GPU. The generated source carries its own prelude, so a bare
//! `clang++ -x hip -nogpuinc -nogpulib` is enough (Debian's ROCm 5.2 headers do not work with
//! clang-19 anyway).

use super::{find_tool, CodeObject, HipError, Result, ScratchDir};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The environment variable that names the clang to use.
pub const CLANG_ENV: &str = "MRA_CLANG";

/// Where a clang is looked for, in order, when `$MRA_CLANG` is not set.
pub const CLANG_CANDIDATES: &[&str] = &["clang++-19", "clang++-20", "clang++-18", "clang++", "/opt/rocm/llvm/bin/clang++"];

/// A clang that has the AMDGPU target.
#[derive(Clone, Debug)]
pub struct Clang {
    pub path: PathBuf,
    /// The first line of `--version`: `Debian clang version 19.1.7 (3~deb12u1)`.
    pub version: String,
}

impl Clang {
    /// `$MRA_CLANG` if set, else the first of [`CLANG_CANDIDATES`] that exists and lists the
    /// `amdgcn` target in `--print-targets`.
    pub fn find() -> Result<Clang> {
        let path = find_tool(CLANG_ENV, CLANG_CANDIDATES, has_amdgpu_target).map_err(|tried| HipError::ClangNotFound { tried })?;
        let version = first_line_of_version(&path).unwrap_or_else(|| "unknown version".into());
        Ok(Clang { path, version })
    }

    /// `clang++-19 (Debian clang version 19.1.7 (3~deb12u1))`, for reports and messages.
    pub fn describe(&self) -> String {
        let name = self.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| self.path.display().to_string());
        format!("{name} ({})", self.version)
    }

    /// The arguments of one compile, exactly:
    /// `-x hip --offload-arch=<arch> --cuda-device-only -nogpulib -nogpuinc -O3
    /// --no-gpu-bundle-output -o <out> <src>`.
    pub fn args(arch: &str, src: &Path, out: &Path) -> Vec<std::ffi::OsString> {
        let mut args: Vec<std::ffi::OsString> = ["-x", "hip"].iter().map(Into::into).collect();
        args.push(format!("--offload-arch={arch}").into());
        for a in ["--cuda-device-only", "-nogpulib", "-nogpuinc", "-O3", "--no-gpu-bundle-output", "-o"] {
            args.push(a.into());
        }
        args.push(out.into());
        args.push(src.into());
        args
    }

    /// Compiles `source` for `arch` (`gfx90a`, `gfx942`, `gfx1100`, ...) to a code object.
    /// Each call works in a temporary directory of its own, so calls may run in parallel.
    pub fn compile(&self, source: &str, arch: &str) -> Result<CodeObject> {
        let dir = ScratchDir::new("clang")?;
        let src = dir.write("kernel.hip", source.as_bytes())?;
        let out = dir.path.join("kernel.co");
        let start = Instant::now();
        // Its own temporaries in the scratch directory too: removed with it however clang ends.
        let output = crate::process::output(Command::new(&self.path).args(Self::args(arch, &src, &out)).env("TMPDIR", &dir.path))
            .map_err(|source| HipError::Io { what: "running clang", path: self.path.clone(), source })?;
        let seconds = start.elapsed().as_secs_f64();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        if !output.status.success() {
            let (compiler, arch) = (self.describe(), arch.to_string());
            return Err(if lld_missing(&stderr) {
                HipError::LldMissing { compiler, arch, stderr }
            } else {
                HipError::ClangFailed { compiler, arch, status: output.status.to_string(), stderr }
            });
        }
        let bytes = std::fs::read(&out).map_err(|source| HipError::Io { what: "reading the code object clang wrote", path: out.clone(), source })?;
        Ok(CodeObject { bytes, arch: arch.to_string(), compiler: self.describe(), log: stderr, seconds })
    }
}

/// Does this clang list the `amdgcn` target?
fn has_amdgpu_target(clang: &Path) -> bool {
    crate::process::output(Command::new(clang).arg("--print-targets")).is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).contains("amdgcn"))
}

fn first_line_of_version(clang: &Path) -> Option<String> {
    let out = crate::process::output(Command::new(clang).arg("--version")).ok()?;
    String::from_utf8_lossy(&out.stdout).lines().next().map(|l| l.trim().to_string())
}

/// Did the AMDGPU link step fail because lld is missing? clang-19 says
/// `error: unable to execute command: Executable "lld" doesn't exist!` followed by
/// `error: amdgcn-link command failed`.
fn lld_missing(stderr: &str) -> bool {
    stderr.lines().any(|l| {
        let names_lld = l.contains("\"lld\"") || l.contains("\"ld.lld\"") || l.contains("ld.lld");
        names_lld && (l.contains("doesn't exist") || l.contains("not found") || l.contains("No such file"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compile_command_is_exactly_the_documented_one() {
        let args = Clang::args("gfx942", Path::new("/t/k.hip"), Path::new("/t/k.co"));
        let line: Vec<String> = args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(
            line.join(" "),
            "-x hip --offload-arch=gfx942 --cuda-device-only -nogpulib -nogpuinc -O3 --no-gpu-bundle-output -o /t/k.co /t/k.hip"
        );
    }

    #[test]
    fn recognises_a_missing_lld() {
        // What clang-19 prints when neither its own directory nor PATH holds lld.
        let stderr = "clang++: error: unable to execute command: Executable \"lld\" doesn't exist!\n\
                      clang++: error: amdgcn-link command failed with exit code 1 (use -v to see invocation)\n";
        assert!(lld_missing(stderr));
        assert!(!lld_missing("k.hip:3:1: error: unknown type name 'foo'\n"));
    }
}
