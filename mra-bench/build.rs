//! Records the commit the binary is built from, so results can name it, and marks a build
//! from a tree whose tracked files differ from that commit (`2d7e419-dirty`): a binary built
//! before its commit was made once carried the previous commit's name into results.
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    Command::new("git").args(args).output().ok().filter(|o| o.status.success()).map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

fn main() {
    let commit = match git(&["rev-parse", "--short", "HEAD"]) {
        // Tracked files only: results, logs and build outputs are untracked or ignored.
        Some(head) => match git(&["status", "--porcelain", "--untracked-files=no"]) {
            Some(changes) if !changes.is_empty() => format!("{head}-dirty"),
            _ => head,
        },
        None => "unknown".into(),
    };
    println!("cargo:rustc-env=MRA_COMMIT={commit}");
    // A new commit, a staged change, or an edit to anything the binary is built from.
    for path in ["../.git/HEAD", "../.git/refs/heads", "../.git/index", "../Cargo.toml", "../Cargo.lock", "../mra-dsl", "../mra-codegen", "../mra-runtime", "../mra-bench/src", "../mra-bench/Cargo.toml"] {
        println!("cargo:rerun-if-changed={path}");
    }
}
