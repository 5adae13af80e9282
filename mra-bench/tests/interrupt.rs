//! Ctrl-C and SIGTERM (issue 49): at any moment, during a compile, between candidates or
//! cases, the process exits 130 (SIGINT) or 143 (SIGTERM) from its main thread, never by a
//! crash; the last line on stderr is `mra-bench: interrupted`; no scratch directory, `.tmp` or
//! `.cpp` file is left in TMPDIR or the kernel cache; no compiler it started is still running;
//! and the tuning database holds no verdict on the candidate in flight.
//!
//! A fake clang (a shell script) covers the compile and the tuner without a toolchain; the
//! real clang, NVRTC and clang++ (the emulator) are in the ignored tests, which skip without
//! them unless MRA_REQUIRE_TOOLCHAINS=1. Timing is interrupted through the fake driver in the
//! unit tests (`mra-runtime/src/harness/timing.rs`).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A fresh directory for one test: `tmp/` is the run's TMPDIR, `cache/` its kernel cache.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mra-interrupt-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("tmp")).unwrap();
    d
}

/// mra-bench with `args`, TMPDIR and the kernel cache in `dir`, stderr to `dir/stderr`.
fn start(dir: &Path, args: &[&str], env: &[(&str, &Path)]) -> Child {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mra-bench"));
    c.args(args).env("TMPDIR", dir.join("tmp")).env("MRA_KERNEL_CACHE", dir.join("cache")).stdin(Stdio::null()).stdout(Stdio::null());
    c.stderr(std::fs::File::create(dir.join("stderr")).unwrap());
    for (k, v) in env {
        c.env(k, v);
    }
    c.spawn().expect("run mra-bench")
}

fn signal(child: &Child, sig: &str) {
    assert!(Command::new("kill").args([&format!("-{sig}"), &child.id().to_string()]).status().unwrap().success());
}

/// Waits for the run (60 s at most) and returns its exit code and stderr.
fn finish(mut child: Child, dir: &Path) -> (Option<i32>, String) {
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running 60 s after the signal; stderr: {}", std::fs::read_to_string(dir.join("stderr")).unwrap_or_default());
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    (status.code(), std::fs::read_to_string(dir.join("stderr")).unwrap())
}

/// Waits until `ready` holds (30 s at most).
fn wait_for(what: &str, ready: impl Fn() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < Duration::from_secs(30), "never saw {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The exit and stderr of an interrupted run: the signal's status, the last line says so,
/// and no line is a crash or an error.
#[track_caller]
fn assert_interrupted(code: Option<i32>, stderr: &str, sig: &str) {
    let want = if sig == "INT" { 130 } else { 143 };
    assert_eq!(code, Some(want), "SIG{sig}; stderr: {stderr}");
    assert_eq!(stderr.trim_end().lines().last(), Some("mra-bench: interrupted"), "SIG{sig}: {stderr}");
    for bad in ["mra-bench: error", "panicked", "double free", "corruption", "realloc()", "free()"] {
        assert!(!stderr.contains(bad), "SIG{sig}: `{bad}` in: {stderr}");
    }
}

/// Scratch directories (`mra-*`), `.tmp` and `.cpp` files under `dir`.
fn leftovers(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let (path, name) = (e.path(), e.file_name().to_string_lossy().into_owned());
        if name.starts_with("mra-") || name.ends_with(".tmp") || name.ends_with(".cpp") {
            found.push(path);
        } else if path.is_dir() {
            found.extend(leftovers(&path));
        }
    }
    found
}

/// Live processes whose command line names `needle` (a path only this test uses), after
/// giving killed ones a second to be reaped (a zombie has an empty command line).
fn running_with(needle: &str) -> Vec<String> {
    let start = Instant::now();
    loop {
        let live: Vec<String> = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().bytes().all(|b| b.is_ascii_digit()))
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .filter(|c| c.contains(needle))
            .collect();
        if live.is_empty() || start.elapsed() > Duration::from_secs(1) {
            return live;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The tuning database's records as JSON values (none if there is no file yet).
fn records(db: &Path) -> Vec<serde_json::Value> {
    match std::fs::read(db) {
        Ok(b) => serde_json::from_slice::<serde_json::Value>(&b).unwrap()["records"].as_array().unwrap().clone(),
        Err(_) => Vec::new(),
    }
}

/// A clang for gfx942 that answers the probes, then per compile writes its pid and the pid of
/// a process of its own (as clang starts lld) to `dir/pids`, and either waits on it (`hang`)
/// or fails after 50 ms.
fn fake_clang(dir: &Path, hang: bool) -> PathBuf {
    let path = dir.join("clang++");
    let compile = if hang { "sleep 60 &\necho $! >> \"$PIDS\"\nwait" } else { "sleep 0.05\necho 'error: the fake clang compiles nothing' >&2\nexit 1" };
    let script = format!(
        "#!/bin/sh\ncase \"$1\" in\n  --print-targets) echo '    amdgcn - AMD GCN GPUs'; exit 0;;\n  --version) echo 'clang version 19 (fake)'; exit 0;;\nesac\nPIDS={}\necho $$ >> \"$PIDS\"\n{compile}\n",
        dir.join("pids").display()
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// The pids the fake clang wrote that still run.
fn fake_clangs_running(dir: &Path) -> Vec<String> {
    let pids = std::fs::read_to_string(dir.join("pids")).unwrap_or_default();
    let start = Instant::now();
    loop {
        let live: Vec<String> = pids.lines().filter(|p| std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| !c.is_empty())).map(str::to_string).collect();
        if live.is_empty() || start.elapsed() > Duration::from_secs(1) {
            return live;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The first candidate of a tune hangs in its compile: the signal stops the compiler and what
/// it started, nothing is recorded for the candidate, and the exit is the signal's.
#[test]
fn a_compile_in_flight_is_stopped_and_its_candidate_left_unrecorded() {
    for sig in ["INT", "TERM"] {
        let d = dir(&format!("hang-{sig}"));
        let clang = fake_clang(&d, true);
        let db = d.join("tuning.json");
        let args = ["tune", "--compile-only", "--arch", "gfx942", "-l", "L7", "-K", "6", "--compiler", "clang", "--db", db.to_str().unwrap()];
        let child = start(&d, &args, &[("MRA_CLANG", &clang)]);
        // Both the fake clang and its own child have started.
        wait_for("a compile in flight", || std::fs::read_to_string(d.join("pids")).is_ok_and(|p| p.lines().count() >= 2));
        signal(&child, sig);
        let (code, stderr) = finish(child, &d);
        assert_interrupted(code, &stderr, sig);
        assert_eq!(fake_clangs_running(&d), Vec::<String>::new(), "SIG{sig}: the compiler or its child outlived mra-bench");
        assert_eq!(records(&db), Vec::<serde_json::Value>::new(), "SIG{sig}: the candidate in flight was recorded");
        assert_eq!(leftovers(&d.join("tmp")), Vec::<PathBuf>::new(), "SIG{sig}");
        let _ = std::fs::remove_dir_all(&d);
    }
}

/// A tune whose candidates each fail to compile after 50 ms, interrupted at random moments
/// (during a compile or between candidates): every exit is the signal's, and the database
/// holds exactly the candidates the run reported, none "did not finish".
#[test]
#[ignore = "about 10 s: ten runs interrupted at random moments (run with --include-ignored; .ci/run does)"]
fn a_tune_interrupted_at_random_moments_records_only_what_it_finished() {
    let d = dir("random-fake");
    let clang = fake_clang(&d, false);
    let mut exits = std::collections::BTreeMap::new();
    for i in 0..10 {
        let sig = if i % 2 == 0 { "INT" } else { "TERM" };
        let db = d.join(format!("tuning-{i}.json"));
        let _ = std::fs::remove_file(d.join("pids"));
        let args = ["tune", "--compile-only", "--arch", "gfx942", "-l", "L7", "-K", "6", "--compiler", "clang", "--db", db.to_str().unwrap()];
        let child = start(&d, &args, &[("MRA_CLANG", &clang)]);
        std::thread::sleep(Duration::from_millis(rand::random_range(200..1200)));
        signal(&child, sig);
        let (code, stderr) = finish(child, &d);
        *exits.entry(code).or_insert(0) += 1;
        assert_interrupted(code, &stderr, sig);
        let reported = stderr.lines().filter(|l| l.starts_with("  L7-breg K=6 ")).count();
        let recs = records(&db);
        assert_eq!(recs.len(), reported, "try {i}: the database holds what the run reported: {stderr}");
        assert!(recs.iter().all(|r| !r.to_string().contains("did not finish")), "try {i}: {recs:?}");
        assert_eq!(fake_clangs_running(&d), Vec::<String>::new(), "try {i}");
        assert_eq!(leftovers(&d.join("tmp")), Vec::<PathBuf>::new(), "try {i}");
    }
    eprintln!("fake clang tune: 10 tries, exits by code {exits:?}");
    let _ = std::fs::remove_dir_all(&d);
}

/// The real clang, for every level: the compile in flight is stopped, no `mra-clang-*`
/// directory and no clang is left.
#[test]
#[ignore = "needs clang with the AMDGPU target (run with --include-ignored; .ci/run does)"]
fn an_interrupted_amd_compile_leaves_no_scratch_directory_and_no_clang() {
    let clang = mra_runtime::hip::compile::AmdCompiler::choose("gfx942", mra_runtime::hip::compile::Choice::Clang);
    if mra_tests::require("clang for gfx942", clang).is_none() {
        return;
    }
    for sig in ["INT", "TERM"] {
        let d = dir(&format!("clang-{sig}"));
        let tmp = d.join("tmp");
        let child = start(&d, &["--compile-only", "--arch", "gfx942", "-K", "16", "-l", "all", "--compiler", "clang"], &[]);
        let scratch_dirs = || std::fs::read_dir(&tmp).unwrap().filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with("mra-clang-")).count();
        wait_for("a compile in flight", || scratch_dirs() > 0);
        signal(&child, sig);
        let (code, stderr) = finish(child, &d);
        assert_interrupted(code, &stderr, sig);
        assert!(stderr.lines().filter(|l| !l.starts_with('#')).count() == 1, "{stderr}");
        assert_eq!(running_with(tmp.to_str().unwrap()), Vec::<String>::new(), "SIG{sig}: a clang outlived mra-bench");
        assert_eq!(leftovers(&tmp), Vec::<PathBuf>::new(), "SIG{sig}");
        let _ = std::fs::remove_dir_all(&d);
    }
}

/// NVRTC compiles in the process itself (no child to stop): the signal is seen between
/// candidates. Twenty runs at random moments, one in five by SIGTERM.
#[test]
#[ignore = "needs NVRTC; about a minute (run with --include-ignored; .ci/run does)"]
fn a_tune_with_nvrtc_interrupted_at_random_moments_exits_by_the_signal() {
    if mra_tests::require("NVRTC", mra_runtime::cuda::nvrtc::Nvrtc::load()).is_none() {
        return;
    }
    let d = dir("nvrtc");
    let mut exits = std::collections::BTreeMap::new();
    let tries = 20;
    for i in 0..tries {
        let sig = if i % 5 == 4 { "TERM" } else { "INT" };
        let db = d.join(format!("tuning-{i}.json"));
        let child = start(&d, &["tune", "--compile-only", "--arch", "sm_90", "-l", "fused", "-K", "8", "--db", db.to_str().unwrap()], &[]);
        std::thread::sleep(Duration::from_millis(rand::random_range(150..3000)));
        signal(&child, sig);
        let (code, stderr) = finish(child, &d);
        *exits.entry(code).or_insert(0) += 1;
        assert_interrupted(code, &stderr, sig);
        let reported = stderr.lines().filter(|l| l.starts_with("  fused K=8 ")).count();
        let recs = records(&db);
        assert_eq!(recs.len(), reported, "try {i}: the database holds what the run reported: {stderr}");
        assert!(recs.iter().all(|r| !r.to_string().contains("did not finish")), "try {i}: {recs:?}");
        assert_eq!(leftovers(&d.join("tmp")), Vec::<PathBuf>::new(), "try {i}");
        assert_eq!(running_with(d.join("tmp").to_str().unwrap()), Vec::<String>::new(), "try {i}");
    }
    eprintln!("NVRTC tune: {tries} tries, exits by code {exits:?}");
    let _ = std::fs::remove_dir_all(&d);
}

/// `validate --emulate` while clang++ builds the emulated kernels into the kernel cache: the
/// builds are stopped, and no `.cpp` or partial `.tmp` executable is left in the cache.
#[test]
#[ignore = "needs clang++ with AddressSanitizer (run with --include-ignored; .ci/run does)"]
fn an_interrupted_emulator_build_leaves_nothing_in_the_kernel_cache() {
    if mra_tests::require("clang++ with AddressSanitizer", mra_runtime::emulate::HostClang::find()).is_none() {
        return;
    }
    for sig in ["INT", "TERM"] {
        let d = dir(&format!("emulate-{sig}"));
        let cache = d.join("cache");
        let child = start(&d, &["validate", "--emulate", "--arch", "gfx90a", "-l", "all", "-K", "6"], &[]);
        let sources = || std::fs::read_dir(&cache).is_ok_and(|r| r.flatten().any(|e| e.file_name().to_string_lossy().ends_with(".cpp")));
        wait_for("an emulator build in flight", sources);
        std::thread::sleep(Duration::from_millis(rand::random_range(0..500)));
        signal(&child, sig);
        let (code, stderr) = finish(child, &d);
        assert_interrupted(code, &stderr, sig);
        assert_eq!(running_with(cache.to_str().unwrap()), Vec::<String>::new(), "SIG{sig}: a clang++ outlived mra-bench");
        assert_eq!(leftovers(&d.join("tmp")), Vec::<PathBuf>::new(), "SIG{sig}");
        assert_eq!(leftovers(&cache), Vec::<PathBuf>::new(), "SIG{sig}");
        let _ = std::fs::remove_dir_all(&d);
    }
}
