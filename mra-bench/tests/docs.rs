//! `mra-bench completions bash|zsh|fish` and `mra-bench man` come from the clap definitions:
//! they name the subcommands and the long options, and bash accepts its script.

use std::process::{Command, Output};

fn mra_bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mra-bench")).args(args).output().expect("run mra-bench")
}

#[test]
fn completions_name_subcommands_and_options() {
    for shell in ["bash", "zsh", "fish"] {
        let o = mra_bench(&["completions", shell]);
        assert!(o.status.success(), "{shell}: {}", String::from_utf8_lossy(&o.stderr));
        let script = String::from_utf8_lossy(&o.stdout);
        for needle in ["sweep", "validate", "plot", "transform", "max-blocks", "emit-src", "gfx90a"] {
            assert!(script.contains(needle), "{shell}: `{needle}` missing");
        }
        // The hidden test helpers are no user's completion.
        assert!(!script.contains("npy-random") && !script.contains("npy-compare"), "{shell}: a hidden helper completes");
    }
    // bash parses the script and registers the completion function.
    if let Ok(bash) = Command::new("bash").arg("-c").arg(format!("source <({} completions bash) && complete -p mra-bench", env!("CARGO_BIN_EXE_mra-bench"))).output() {
        assert!(String::from_utf8_lossy(&bash.stdout).contains("mra-bench"), "{}", String::from_utf8_lossy(&bash.stderr));
    }
    let o = mra_bench(&["completions", "tcsh"]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("[possible values: bash"));
}

#[test]
fn man_page_is_roff_with_options_and_environment() {
    let o = mra_bench(&["man"]);
    assert!(o.status.success());
    let page = String::from_utf8_lossy(&o.stdout);
    assert!(page.contains(".TH mra-bench 1"), "roff title");
    for needle in ["\\-\\-max\\-blocks", "MRA_KERNEL_CACHE", "Examples:", "validate"] {
        assert!(page.contains(needle), "`{needle}` missing from the man page");
    }
    let dir = std::env::temp_dir().join(format!("mra-man-test-{}", std::process::id()));
    let o = mra_bench(&["man", "-o", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for page in ["mra-bench.1", "mra-bench-sweep.1", "mra-bench-plot.1"] {
        assert!(dir.join(page).is_file(), "{page} not written");
    }
}
