//! `mra-bench transform` with inputs and outputs that are wrong in the ways a probe found: a
//! device or a huge non-.npy file as input (never read whole), a stream longer than its header,
//! a damaged header, an output that is one of the inputs or cannot be written (refused before
//! any work, naming the user's path), `-M 0`, big-endian arrays (read by value), no GPU, and an
//! emulator kernel cache that cannot be used. The .npy files are built here byte by byte.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mra-bench"));
    c.env("MRA_KERNEL_CACHE", "off").env("MRA_TUNING_DB", "/nonexistent/mra-tuning.json").stdin(Stdio::null());
    c
}

fn mra_bench(args: &[&str]) -> Output {
    bin().args(args).output().expect("run mra-bench")
}

/// Runs `c`, killing it (and failing the test) if it has not ended within `secs`.
fn output_within(mut c: Command, secs: u64, what: &str) -> Output {
    let mut child = c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("run mra-bench");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {secs} s (reading without bound?)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The one stderr line of a failed run that contains every needle.
fn one_line_error(o: &Output, needles: &[&str]) -> String {
    let err = text(&o.stderr);
    assert!(!o.status.success(), "succeeded: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("mra-bench: error: "), "{err}");
    for n in needles {
        assert!(err.contains(n), "`{n}` missing: {err}");
    }
    err
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mra-transform-bad-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[path = "support/npy.rs"]
mod npy_support;
use npy_support::npy_raw;

fn npy(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    npy_raw(&format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}"), data)
}

fn le(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn be(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_be_bytes()).collect()
}

/// A good K=2 problem in `dir`: A (2 tensors, little-endian), B; returns (A, B) paths.
fn good_files(dir: &Path) -> (PathBuf, PathBuf) {
    let (a, b) = (dir.join("a.npy"), dir.join("b.npy"));
    std::fs::write(&a, npy("<f8", "(2, 2, 2, 2)", &le(&(0..16).map(f64::from).collect::<Vec<_>>()))).unwrap();
    std::fs::write(&b, npy("<f8", "(2, 2)", &le(&[1.0, 2.0, 3.0, 4.0]))).unwrap();
    (a, b)
}

/// C(i,j,k) = Σ A(x,y,z) B(x,i) B(y,j) B(z,k) for K=2, written out: the definition itself.
fn direct2(a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut c = vec![0.0; 8];
    for i in 0..2 {
        for j in 0..2 {
            for k in 0..2 {
                for x in 0..2 {
                    for y in 0..2 {
                        for z in 0..2 {
                            c[i * 4 + j * 2 + k] += a[x * 4 + y * 2 + z] * b[x * 2 + i] * b[y * 2 + j] * b[z * 2 + k];
                        }
                    }
                }
            }
        }
    }
    c
}

/// The f64 data of a little-endian .npy the tool wrote (its header checked to say `<f8`).
fn read_le_f64(path: &Path) -> Vec<f64> {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
    let len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(&bytes[10..10 + len]).unwrap();
    assert!(header.contains("'descr': '<f8'"), "{header}");
    bytes[10 + len..].chunks_exact(8).map(|x| f64::from_le_bytes(x.try_into().unwrap())).collect()
}

#[test]
fn a_device_or_a_large_non_npy_file_is_refused_at_once() {
    let dir = scratch("magic");
    let (_, b) = good_files(&dir);
    let out = dir.join("c.npy");
    // /dev/zero never ends: reading it whole grows until the process is killed.
    let mut c = bin();
    c.args(["transform", "--input", "/dev/zero", "--matrix", s(&b), "--output", s(&out), "--reference"]);
    let o = output_within(c, 30, "--input /dev/zero");
    one_line_error(&o, &["--input /dev/zero", "not a NumPy .npy file (no \\x93NUMPY magic"]);
    // 8 GiB of (sparse) zeros: no "out of memory", no reading it in.
    let big = dir.join("big.dat");
    std::fs::File::create(&big).unwrap().set_len(8 << 30).unwrap();
    let mut c = bin();
    c.args(["transform", "--input", s(&big), "--matrix", s(&b), "--output", s(&out), "--reference"]);
    let o = output_within(c, 30, "a large non-npy input");
    one_line_error(&o, &["big.dat", "no \\x93NUMPY magic"]);
    assert!(!out.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_stream_is_read_only_as_far_as_its_header_says() {
    let dir = scratch("fifo");
    let (a, b) = good_files(&dir);
    let fifo = dir.join("a.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success(), "mkfifo");
    let out = dir.join("c.npy");
    // A valid header and then zeros without end: the data the header implies, one byte more,
    // and a one-line error; the writer then sees the pipe closed and stops.
    let header = npy("<f8", "(2, 2, 2, 2)", &[]);
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut f = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
            if f.write_all(&header).is_err() {
                return;
            }
            let zeros = [0u8; 65536];
            while f.write_all(&zeros).is_ok() {}
        })
    };
    let mut c = bin();
    c.args(["transform", "--input", s(&fifo), "--matrix", s(&b), "--output", s(&out), "--reference"]);
    let o = output_within(c, 30, "an endless stream after a valid header");
    one_line_error(&o, &["a.fifo", "more than 128", "longer than its header says"]);
    writer.join().unwrap();
    assert!(!out.exists());
    // The same stream with exactly the data: read and transformed.
    let bytes = std::fs::read(&a).unwrap();
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::OpenOptions::new().write(true).open(&fifo).unwrap().write_all(&bytes).unwrap())
    };
    let mut c = bin();
    c.args(["transform", "--input", s(&fifo), "--matrix", s(&b), "--output", s(&out), "--reference"]);
    let o = output_within(c, 30, "an exact stream");
    assert!(o.status.success(), "{}", text(&o.stderr));
    writer.join().unwrap();
    let a_vals: Vec<f64> = (0..16).map(f64::from).collect();
    let want: Vec<f64> = (0..2).flat_map(|t| direct2(&a_vals[t * 8..t * 8 + 8], &[1.0, 2.0, 3.0, 4.0])).collect();
    assert_eq!(read_le_f64(&out), want);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_truncated_or_wild_preamble_is_one_line() {
    let dir = scratch("preamble");
    let (_, b) = good_files(&dir);
    let out = dir.join("c.npy");
    // Header length 1000, but the file ends after 20 bytes of it.
    let mut cut = b"\x93NUMPY\x01\x00".to_vec();
    cut.extend_from_slice(&1000u16.to_le_bytes());
    cut.extend_from_slice(&[b' '; 20]);
    // Format 2.0 with a header length of 4 GiB - 1: no such allocation, one line.
    let mut wild = b"\x93NUMPY\x02\x00".to_vec();
    wild.extend_from_slice(&u32::MAX.to_le_bytes());
    for (name, bytes, needle) in [
        ("cut.npy", cut, "truncated (it ends inside the .npy header)"),
        ("wild.npy", wild, "the file is damaged"),
        ("v9.npy", b"\x93NUMPY\x09\x00\x10\x00".to_vec(), "unsupported .npy format version 9.0"),
        ("magic.npy", b"\x93NUMPY".to_vec(), "truncated"),
    ] {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        let o = mra_bench(&["transform", "--input", s(&p), "--matrix", s(&b), "--output", s(&out), "--reference"]);
        one_line_error(&o, &[name, needle]);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_output_that_is_an_input_is_refused_and_the_input_kept() {
    let dir = scratch("same");
    let (a, b) = good_files(&dir);
    let (a_bytes, b_bytes) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let link = dir.join("link.npy");
    std::os::unix::fs::symlink(&a, &link).unwrap();
    let hard = dir.join("hard.npy");
    std::fs::hard_link(&b, &hard).unwrap();
    let dotted = format!("{}/./a.npy", dir.display());
    for (output, flag, extra) in [
        (s(&a).to_string(), "--input", vec!["--reference"]),
        (dotted, "--input", vec!["--reference"]),
        (s(&link).to_string(), "--input", vec!["--reference"]),
        (s(&b).to_string(), "--matrix", vec!["--reference"]),
        (s(&hard).to_string(), "--matrix", vec!["--reference"]),
        // Refused before the emulator or a GPU is looked for.
        (s(&a).to_string(), "--input", vec!["--emulate"]),
        (s(&a).to_string(), "--input", vec![]),
    ] {
        let mut args = vec!["transform", "--input", s(&a), "--matrix", s(&b), "--output", &output];
        args.extend(extra.iter().copied());
        let o = bin().args(&args).env("MRA_CLANG", "/nonexistent/clang++").output().unwrap();
        one_line_error(&o, &[&format!("--output {output} is the same file as {flag}"), "give another output path"]);
        assert_eq!(std::fs::read(&a).unwrap(), a_bytes, "{output}: A kept");
        assert_eq!(std::fs::read(&b).unwrap(), b_bytes, "{output}: B kept");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_output_is_checked_before_any_work_and_named_as_given() {
    let dir = scratch("output");
    let (a, b) = good_files(&dir);
    let d = s(&dir).to_string();
    for (output, needles) in [
        // Relative to the run's directory (`dir`): named as given, not as a temporary file.
        ("no/such/c.npy", vec!["--output no/such/c.npy: directory no/such does not exist"]),
        (d.as_str(), vec!["is a directory"]),
        ("/proc/c.npy", vec!["--output /proc/c.npy: cannot create a file in /proc"]),
    ] {
        // Each target: the output's error, not the emulator's (no clang) nor the GPU's.
        for extra in [vec!["--reference"], vec!["--emulate", "--arch", "gfx90a"], vec![]] {
            let mut args = vec!["transform", "--input", s(&a), "--matrix", s(&b), "--output", output];
            args.extend(extra.iter().copied());
            let o = bin().args(&args).current_dir(&dir).env("MRA_CLANG", "/nonexistent/clang++").output().unwrap();
            let line = one_line_error(&o, &needles);
            assert!(!line.contains(".tmp") && !line.contains("clang") && !line.contains("GPU"), "{extra:?}: {line}");
        }
    }
    assert!(!dir.join("-").exists(), "no file named `-`");
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 2, "nothing but A and B: {left:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--output -` and `--output /dev/stdout` into a pipe stream the .npy (the same bytes as the
/// file; /dev/stdout used to fail: "cannot create a file in /proc/self/fd"), and nothing else
/// goes to standard output.
#[test]
fn the_output_streams_into_a_pipe_as_dash_or_dev_stdout() {
    let dir = scratch("stream");
    let (a, b) = good_files(&dir);
    let file = dir.join("c.npy");
    let o = mra_bench(&["transform", "--input", s(&a), "--matrix", s(&b), "--output", s(&file), "--reference"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let want = std::fs::read(&file).unwrap();
    for output in ["-", "/dev/stdout"] {
        let o = mra_bench(&["transform", "--input", s(&a), "--matrix", s(&b), "--output", output, "--reference"]);
        assert!(o.status.success(), "{output}: {}", text(&o.stderr));
        assert!(o.stdout == want, "{output}: {} bytes on standard output, the file has {}", o.stdout.len(), want.len());
    }
    assert!(!dir.join("-").exists(), "no file named `-`");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn zero_blocks_per_launch_is_refused_as_elsewhere() {
    let dir = scratch("m0");
    let (a, b) = good_files(&dir);
    let out = dir.join("c.npy");
    for extra in [vec!["--reference"], vec!["--emulate"], vec![]] {
        let mut args = vec!["transform", "--input", s(&a), "--matrix", s(&b), "--output", s(&out), "-M", "0"];
        args.extend(extra.iter().copied());
        let o = mra_bench(&args);
        one_line_error(&o, &["-M must be at least 1"]);
        assert!(!out.exists());
    }
    // The run mode says the same.
    one_line_error(&mra_bench(&["-K", "6", "-M", "0"]), &["-M must be at least 1"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn big_endian_arrays_are_read_by_value() {
    let dir = scratch("endian");
    let a_vals: Vec<f64> = vec![1.5, -2.0, 0.25, 3.0, -0.5, 4.0, 1.0, -1.25, 2.0, 0.5, -3.0, 0.75, 1.0, 2.5, -1.0, 0.125];
    let b_vals = [0.5, -1.5, 2.0, 0.25];
    let want: Vec<f64> = (0..2).flat_map(|t| direct2(&a_vals[t * 8..t * 8 + 8], &b_vals)).collect();
    let out = dir.join("c.npy");
    // Both big-endian; mixed; and big-endian float32 with --dtype f32.
    for (a_descr, a_bytes, b_descr, b_bytes) in [(">f8", be(&a_vals), ">f8", be(&b_vals)), (">f8", be(&a_vals), "<f8", le(&b_vals)), ("<f8", le(&a_vals), ">f8", be(&b_vals))] {
        let (a, b) = (dir.join("a.npy"), dir.join("b.npy"));
        std::fs::write(&a, npy(a_descr, "(2, 2, 2, 2)", &a_bytes)).unwrap();
        std::fs::write(&b, npy(b_descr, "(2, 2)", &b_bytes)).unwrap();
        let o = mra_bench(&["transform", "--input", s(&a), "--matrix", s(&b), "--output", s(&out), "--reference"]);
        assert!(o.status.success(), "{a_descr} {b_descr}: {}", text(&o.stderr));
        // Small binary fractions: the sums are exact in any order.
        assert_eq!(read_le_f64(&out), want, "{a_descr} {b_descr}");
    }
    // float32: `--reference` computes in f64, so the byte order is checked through npy-compare
    // (the same reader): a big-endian file equals the little-endian one of the same values.
    let f32_be = |v: &[f64]| v.iter().flat_map(|&x| (x as f32).to_be_bytes()).collect::<Vec<u8>>();
    let f32_le = |v: &[f64]| v.iter().flat_map(|&x| (x as f32).to_le_bytes()).collect::<Vec<u8>>();
    let (x, y, z) = (dir.join("x.npy"), dir.join("y.npy"), dir.join("z.npy"));
    std::fs::write(&x, npy(">f4", "(2, 8)", &f32_be(&a_vals))).unwrap();
    std::fs::write(&y, npy("<f4", "(2, 8)", &f32_le(&a_vals))).unwrap();
    let o = mra_bench(&["npy-compare", s(&x), s(&y), "--dtype", "f32"]);
    assert!(o.status.success() && text(&o.stdout).contains("max_abs_err=0.000e0"), "{}{}", text(&o.stdout), text(&o.stderr));
    // Read as little-endian bytes, the values would differ.
    std::fs::write(&z, npy("<f4", "(2, 8)", &f32_be(&a_vals))).unwrap();
    let o = mra_bench(&["npy-compare", s(&z), s(&y), "--dtype", "f32"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_malformed_header_value_is_one_line_naming_the_field() {
    let dir = scratch("header");
    let (_, b) = good_files(&dir);
    let out = dir.join("c.npy");
    let data = le(&[0.0; 16]);
    for (name, dict, needles) in [
        ("maybe.npy", "{'descr': '<f8', 'fortran_order': Maybe, 'shape': (2, 2, 2, 2), }", vec!["'fortran_order'", "`Maybe`", "True or False"]),
        ("shape.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (2, x, 2, 2), }", vec!["'shape'", "`(2, x, 2, 2)`"]),
        ("descr.npy", "{'descr': <f8, 'fortran_order': False, 'shape': (2, 2, 2, 2), }", vec!["'descr'", "`<f8`"]),
        ("noshape.npy", "{'descr': '<f8', 'fortran_order': False, }", vec!["no 'shape' field"]),
        ("notdict.npy", "[1, 2, 3", vec!["the .npy header"]),
    ] {
        let p = dir.join(name);
        std::fs::write(&p, npy_raw(dict, &data)).unwrap();
        let o = mra_bench(&["transform", "--input", s(&p), "--matrix", s(&b), "--output", s(&out), "--reference"]);
        let line = one_line_error(&o, &needles);
        assert!(line.contains(&format!("--input {}", s(&p))), "names the file: {line}");
        assert!(!line.contains('^'), "no parser dump: {line}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn without_a_gpu_transform_says_what_the_other_commands_say() {
    if mra_runtime::cuda::probe_driver().is_ok() || mra_runtime::hip::runtime::Gpu::open(0).is_ok() {
        println!("SKIPPED: this machine has a GPU");
        return;
    }
    let dir = scratch("nogpu");
    let (a, b) = good_files(&dir);
    let out = dir.join("c.npy");
    let o = mra_bench(&["transform", "--input", s(&a), "--matrix", s(&b), "--output", s(&out)]);
    let run = mra_bench(&["-K", "6", "-n", "1"]);
    let (err, want) = (text(&o.stderr), text(&run.stderr));
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(want.starts_with("mra-bench: error: no GPU found"), "{want}");
    // The run mode's three lines, but for the middle one, which names transform's own GPU-free modes.
    let (e, w): (Vec<&str>, Vec<&str>) = (err.lines().collect(), want.lines().collect());
    assert_eq!((e.len(), e[0], e[2]), (w.len(), w[0], w[2]), "transform's no-GPU message is the run mode's: {err}");
    assert!(e[1].contains("transform --reference") && e[1].contains("--emulate"), "{err}");
    assert!(err.lines().all(|l| l.chars().count() <= 140), "short lines: {err}");
    assert!(!out.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[ignore = "needs clang++ with AddressSanitizer (run with --include-ignored; .ci/run does)"]
fn an_emulator_cache_that_is_a_file_is_a_warning_not_a_failure() {
    if mra_tests::require("clang++ with AddressSanitizer (the CPU wave emulator)", mra_runtime::emulate::HostClang::find()).is_none() {
        return;
    }
    let dir = scratch("emucache");
    let (a, b) = good_files(&dir);
    let out = dir.join("c.npy");
    let file = dir.join("cache-is-a-file");
    std::fs::write(&file, "mine").unwrap();
    let o = bin()
        .args(["transform", "--input", s(&a), "--matrix", s(&b), "--output", s(&out), "--emulate", "--arch", "gfx90a"])
        .env("MRA_KERNEL_CACHE", &file)
        .output()
        .unwrap();
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning:")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(warnings[0].contains("MRA_KERNEL_CACHE") && warnings[0].contains(s(&file)) && warnings[0].contains("without caching"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine", "the file kept");
    let a_vals: Vec<f64> = (0..16).map(f64::from).collect();
    let want: Vec<f64> = (0..2).flat_map(|t| direct2(&a_vals[t * 8..t * 8 + 8], &[1.0, 2.0, 3.0, 4.0])).collect();
    let got = read_le_f64(&out);
    assert!(got.iter().zip(&want).all(|(x, y)| (x - y).abs() <= 1e-12 * y.abs().max(1.0)), "{got:?} vs {want:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_help_says_what_transform_does() {
    // The top-level example runs gfx942's kernel, and says so.
    let help = text(&mra_bench(&["--help"]).stdout);
    let lines: Vec<&str> = help.lines().collect();
    let at = lines.iter().position(|l| l.contains("transform") && l.contains("--emulate --arch gfx942")).expect("the --emulate example");
    assert!(lines[at + 1].contains("gfx942's kernel on the CPU emulator"), "{}", lines[at + 1]);
    assert!(!help.contains("gfx1100's kernel"), "{help}");
    // Big-endian input is documented, and read (big_endian_arrays_are_read_by_value).
    let help = text(&mra_bench(&["transform", "--help"]).stdout);
    assert!(help.contains("little- or big-endian"), "{help}");
    assert!(help.contains("not the --input or --matrix file"), "{help}");
}
