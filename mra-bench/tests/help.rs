//! Every option of every `--help` has a description; the main help has Examples and
//! Environment sections naming every MRA_* variable the code reads; the seed's short flags
//! have long forms; --dtype, --arch and --compiler list their possible values.

use std::process::Command;

fn help(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_mra-bench")).args(args).arg("--help").output().expect("run mra-bench");
    assert!(o.status.success(), "{args:?} --help failed");
    String::from_utf8(o.stdout).expect("UTF-8 help")
}

/// (option line, the line after it) for every option and argument in a long help.
fn options(text: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut in_options = false;
    for (i, l) in lines.iter().enumerate() {
        if *l == "Options:" || *l == "Arguments:" {
            in_options = true;
            continue;
        }
        if in_options && !l.starts_with(' ') && !l.is_empty() {
            in_options = false;
        }
        let t = l.trim_start();
        if in_options && (t.starts_with('-') || t.starts_with('<') || t.starts_with('[')) && l.len() - t.len() <= 6 {
            out.push((t.to_string(), lines.get(i + 1).copied().unwrap_or("").to_string()));
        }
    }
    out
}

const SUBCOMMANDS: &[&[&str]] = &[&[], &["validate"], &["sweep"], &["levels"], &["tune"], &["plot"], &["completions"], &["man"], &["export"], &["transform"]];

#[test]
fn every_option_of_every_help_is_described() {
    for sub in SUBCOMMANDS {
        let text = help(sub);
        let opts = options(&text);
        assert!(opts.len() >= 2, "{sub:?}: no options found in:\n{text}");
        for (opt, next) in opts {
            // Long layout: the description on the next line; compact layout: after two spaces.
            let inline = opt.split("  ").filter(|p| !p.trim().is_empty()).count() >= 2;
            // A bare `[default: ...]` under the option is no description.
            let described = inline || (next.starts_with("          ") && !next.trim().is_empty() && !next.trim_start().starts_with('['));
            assert!(described, "{sub:?}: `{opt}` has no description");
        }
    }
}

#[test]
fn the_seed_short_flags_have_long_forms_and_choices_are_listed() {
    let main = help(&[]);
    for pair in ["-K, --order", "-N, --nfuncs", "-M, --max-blocks", "-n, --tasks", "-r, --reps", "-s, --streams", "-l, --level", "-o, --output"] {
        assert!(main.contains(pair), "`{pair}` missing from --help");
    }
    assert!(main.contains("untimed ones of --warmup") && main.contains("[default: 200ms]"), "-r names the warm-up the harness does, --warmup its default");
    assert!(main.contains("`settle`"), "--warmup says what settle does");
    for text in [main.clone(), help(&["sweep"])] {
        assert!(text.contains("--stream-data <shared|private>") && text.contains("[default: shared]"), "--stream-data and its default (the seed's harness)");
    }
    // The arch table's names, in its order (an arch added to the table is listed without a change here).
    let archs = mra_codegen::arch::names().join(", ");
    assert!(main.contains(&format!("[possible values: {archs}]")), "--arch values: {archs}");
    assert!(main.contains("[possible values: hiprtc, clang, nvrtc]"), "--compiler values");
    assert!(main.contains("- bf16:"), "--dtype values");
    for sub in ["validate", "sweep"] {
        let text = help(&[sub]);
        for pair in ["-K, --order", "-N, --nfuncs", "-M, --max-blocks", "- f32:"] {
            assert!(text.contains(pair), "`{pair}` missing from {sub} --help");
        }
    }
    // tune's --dtype lists its values as the others do.
    assert!(help(&["tune"]).contains("- f32:"), "tune --dtype values");
}

#[test]
fn main_help_has_examples_and_every_environment_variable() {
    let main = help(&[]);
    assert!(main.contains("\nExamples:\n"), "Examples section");
    assert!(main.contains("\nEnvironment:\n"), "Environment section");
    // The variables the code reads, found by grepping the sources (not a list kept by hand).
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let mut vars = std::collections::BTreeSet::new();
    for dir in ["mra-bench/src", "mra-runtime/src", "mra-codegen/src", "tests/src"] {
        collect_env_vars(&std::path::Path::new(root).join(dir), &mut vars);
    }
    assert!(vars.len() >= 6, "found {vars:?}");
    for v in &vars {
        assert!(main.contains(&format!("  {v} ")), "{v} is read by the code but missing from the Environment section");
    }
}

/// `MRA_[A-Z_]+` inside string literals of the .rs files under `dir`, except test-only names
/// and the build-time commit stamp.
fn collect_env_vars(dir: &std::path::Path, out: &mut std::collections::BTreeSet<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            collect_env_vars(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let text = std::fs::read_to_string(&p).unwrap();
            for piece in text.split('"').skip(1).step_by(2) {
                if piece.starts_with("MRA_") && piece.chars().all(|c| c.is_ascii_uppercase() || c == '_') && !piece.contains("TEST") && piece != "MRA_COMMIT" {
                    out.insert(piece.to_string());
                }
            }
        }
    }
}

/// `--version` names the commit the binary was built from, as git names the checkout's HEAD,
/// with `-dirty` when tracked files differ from it (results and scripts quote it; a copied
/// tree's .git may say otherwise). Without git: "unknown". The test is built and run from the
/// same tree, so git's answer now is the build's.
#[test]
fn version_names_the_commit_of_the_build_and_marks_a_dirty_tree() {
    let o = Command::new(env!("CARGO_BIN_EXE_mra-bench")).arg("--version").output().expect("run mra-bench");
    assert!(o.status.success());
    let out = String::from_utf8(o.stdout).expect("UTF-8");
    let git = |args: &[&str]| match Command::new("git").args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output() {
        Ok(g) if g.status.success() => Some(String::from_utf8_lossy(&g.stdout).trim().to_string()),
        _ => None,
    };
    let commit = match git(&["rev-parse", "--short", "HEAD"]) {
        Some(head) if git(&["diff", "--quiet", "HEAD"]).is_none() => format!("{head}-dirty"),
        Some(head) => head,
        None => "unknown".to_string(),
    };
    assert_eq!(out.trim(), format!("mra-bench {} (commit {commit})", env!("CARGO_PKG_VERSION")));
}
