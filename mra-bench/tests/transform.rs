//! `mra-bench transform` without a GPU: `--reference` and `--emulate` (the generated HIP on the
//! CPU wave emulator) round-trip .npy files against the direct six-loop definition, and every
//! way an input can be wrong is a one-line error.
//! The .npy files are written and read here by hand (format 1.0: magic, header length, a Python
//! dict literal, raw data), independently of the npyz crate the tool uses.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn mra_bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mra-bench")).args(args).env("MRA_KERNEL_CACHE", "off").env("MRA_TUNING_DB", "/nonexistent/mra-tuning.json").output().expect("run mra-bench")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mra-transform-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[path = "support/npy.rs"]
mod npy_support;
use npy_support::npy_bytes;

fn f64_le(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Parses a .npy written by the tool: (descr, shape, data bytes).
fn parse_npy(bytes: &[u8]) -> (String, Vec<usize>, Vec<u8>) {
    assert_eq!(&bytes[..6], b"\x93NUMPY", "magic");
    let (len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        _ => (u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize, 12),
    };
    let header = std::str::from_utf8(&bytes[start..start + len]).unwrap();
    assert_eq!((start + len) % 64, 0, "data aligned to 64 bytes");
    assert!(header.contains("'fortran_order': False"), "{header}");
    let descr = header.split("'descr': '").nth(1).unwrap().split('\'').next().unwrap().to_string();
    let shape = header.split("'shape': (").nth(1).unwrap().split(')').next().unwrap();
    let shape = shape.split(',').map(str::trim).filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()).collect();
    (descr, shape, bytes[start + len..].to_vec())
}

/// The definition, C(i,j,k) = Σ_{a,b,c} A(a,b,c) B(a,i) B(b,j) B(c,k), one tensor, six loops:
/// independent of the three GEMM passes that `--reference` and every level compute.
fn direct(k: usize, a: &[f64], b: &[f64]) -> Vec<f64> {
    mra_runtime::reference::transform_direct(k, a, b)
}

/// A small deterministic generator (values in [-1, 1)), fresh per call site via `seed`.
fn values(n: usize, seed: u64) -> Vec<f64> {
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

fn fresh_seed() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn reference_round_trips_npy_against_the_six_loop_definition() {
    let dir = scratch("roundtrip");
    let seed = fresh_seed();
    for (k, n, flat) in [(5usize, 3usize, false), (3, 7, true), (1, 1, false), (6, 2, false)] {
        let k3 = k * k * k;
        let a = values(n * k3, seed ^ (k as u64 * 31 + n as u64));
        let b = values(k * k, seed ^ 0xB ^ k as u64);
        let shape: Vec<usize> = if flat { vec![n, k3] } else { vec![n, k, k, k] };
        let (ap, bp, cp) = (dir.join("a.npy"), dir.join("b.npy"), dir.join("c.npy"));
        std::fs::write(&ap, npy_bytes("<f8", false, &shape, &f64_le(&a))).unwrap();
        std::fs::write(&bp, npy_bytes("<f8", false, &[k, k], &f64_le(&b))).unwrap();
        // Poison: a stale output must be replaced, not reused.
        std::fs::write(&cp, b"stale").unwrap();
        let o = mra_bench(&["transform", "--input", path_str(&ap), "--matrix", path_str(&bp), "--output", path_str(&cp), "--reference"]);
        assert!(o.status.success(), "K={k} N={n}: {}", String::from_utf8_lossy(&o.stderr));
        let (descr, got_shape, data) = parse_npy(&std::fs::read(&cp).unwrap());
        assert_eq!((descr.as_str(), &got_shape), ("<f8", &shape), "C keeps A's shape and dtype");
        let c: Vec<f64> = data.chunks_exact(8).map(|x| f64::from_le_bytes(x.try_into().unwrap())).collect();
        assert_eq!(c.len(), n * k3);
        for t in 0..n {
            let want = direct(k, &a[t * k3..(t + 1) * k3], &b);
            let scale = want.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(1e-300);
            for (e, (x, y)) in c[t * k3..(t + 1) * k3].iter().zip(&want).enumerate() {
                assert!((x - y).abs() / scale < 1e-12, "K={k} N={n} tensor {t} element {e}: {x} vs {y} (seed {seed})");
            }
        }
    }
    // f32 in, f32 out.
    let k = 4;
    let a = values(2 * k * k * k, seed ^ 0xF32);
    let b = values(k * k, seed ^ 0xF33);
    let (a32, b32): (Vec<f32>, Vec<f32>) = (a.iter().map(|&x| x as f32).collect(), b.iter().map(|&x| x as f32).collect());
    let le32 = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let (ap, bp, cp) = (dir.join("a32.npy"), dir.join("b32.npy"), dir.join("c32.npy"));
    std::fs::write(&ap, npy_bytes("<f4", false, &[2, k, k, k], &le32(&a32))).unwrap();
    std::fs::write(&bp, npy_bytes("<f4", false, &[k, k], &le32(&b32))).unwrap();
    let o = mra_bench(&["transform", "--input", path_str(&ap), "--matrix", path_str(&bp), "--output", path_str(&cp), "--reference", "--dtype", "f32"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (descr, _, data) = parse_npy(&std::fs::read(&cp).unwrap());
    assert_eq!(descr, "<f4");
    let c: Vec<f32> = data.chunks_exact(4).map(|x| f32::from_le_bytes(x.try_into().unwrap())).collect();
    let (a64, b64): (Vec<f64>, Vec<f64>) = (a32.iter().map(|&x| x as f64).collect(), b32.iter().map(|&x| x as f64).collect());
    for t in 0..2 {
        let want = direct(k, &a64[t * 64..(t + 1) * 64], &b64);
        for (x, y) in c[t * 64..(t + 1) * 64].iter().zip(&want) {
            assert!((*x as f64 - y).abs() < 1e-5 * (1.0 + y.abs()), "f32: {x} vs {y}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_inputs_are_one_line_errors() {
    let dir = scratch("errors");
    let k = 3;
    let a = f64_le(&values(2 * 27, 1));
    let b = f64_le(&values(9, 2));
    let file = |name: &str, bytes: Vec<u8>| {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p.to_str().unwrap().to_string()
    };
    let good_a = file("a.npy", npy_bytes("<f8", false, &[2, k, k, k], &a));
    let good_b = file("b.npy", npy_bytes("<f8", false, &[k, k], &b));
    let out = dir.join("c.npy");
    let out = out.to_str().unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec![file("fo.npy", npy_bytes("<f8", true, &[2, k, k, k], &a)), good_b.clone()], "Fortran order"),
        (vec![file("f4.npy", npy_bytes("<f4", false, &[2, k, k, k], &a[..a.len() / 2])), good_b.clone()], "--dtype f32"),
        (vec![file("i8.npy", npy_bytes("<i8", false, &[2, k, k, k], &a)), good_b.clone()], "'<i8'"),
        (vec![file("trunc.npy", npy_bytes("<f8", false, &[2, k, k, k], &a[..100])), good_b.clone()], "truncated"),
        (vec![file("long.npy", npy_bytes("<f8", false, &[1, k, k, k], &a)), good_b.clone()], "longer than its header says"),
        (vec![file("shape.npy", npy_bytes("<f8", false, &[2, k, k, 2], &a[..2 * 18 * 8])), good_b.clone()], "must be (N, 3, 3, 3) or (N, 27)"),
        (vec![file("flat.npy", npy_bytes("<f8", false, &[54], &a)), good_b.clone()], "must be (N, 3, 3, 3)"),
        (vec![file("zero.npy", npy_bytes("<f8", false, &[0, k, k, k], &[])), good_b.clone()], "N >= 1"),
        (vec![good_a.clone(), file("brect.npy", npy_bytes("<f8", false, &[3, 2], &b[..48]))], "must be K x K"),
        (vec![good_a.clone(), file("b4.npy", npy_bytes("<f8", false, &[4, 4], &f64_le(&values(16, 3))))], "with K = 4 (from B)"),
        (vec![good_a.clone(), file("b33.npy", npy_bytes("<f8", false, &[33, 33], &f64_le(&values(33 * 33, 3))))], "1 <= K <= 32"),
        (vec![file("junk.npy", b"not an npy file at all".to_vec()), good_b.clone()], "not a NumPy .npy file"),
        (vec![dir.join("missing.npy").to_str().unwrap().to_string(), good_b.clone()], "cannot read"),
    ];
    for (files, needle) in cases {
        let o = mra_bench(&["transform", "--input", &files[0], "--matrix", &files[1], "--output", out, "--reference"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{files:?} succeeded");
        assert!(!err.contains("panicked"), "{files:?}: {err}");
        assert!(err.contains(needle), "{files:?}: expected `{needle}` in: {err}");
        assert_eq!(err.lines().count(), 1, "{files:?}: one line: {err}");
        assert!(!Path::new(out).exists(), "{files:?}: an output was written");
    }
    // Options that cannot be honoured.
    for (extra, needle) in [
        // The emulator's refusals come before it looks for clang: no toolchain needed here.
        (vec!["--arch", "gfx90a"], "add --emulate"),
        (vec!["--emulate", "--arch", "sm_90"], "sm_90 is NVIDIA"),
        (vec!["--emulate", "-l", "L6"], "library level"),
        (vec!["--emulate", "--arch", "gfx1100", "-l", "L4"], "f64 matrix cores, which gfx1100 does not have"),
        (vec!["--emulate", "-l", "copy"], "choose a transform level"),
        (vec!["--emulate", "-l", "bound"], "level bound is a measured bound (the floor's copy and discarded matrix instructions): it copies A; choose a transform level"),
        (vec!["--reference", "-l", "L3"], "runs on a GPU"),
        (vec!["--reference", "--dtype", "f32"], "--dtype f64"),
    ] {
        let mut args = vec!["transform", "--input", &good_a, "--matrix", &good_b, "--output", out];
        args.extend(extra.iter().copied());
        let o = mra_bench(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(needle) && err.lines().count() == 1, "{extra:?}: {err}");
        assert!(!Path::new(out).exists(), "{extra:?}: an output was written");
    }
    // No clang++ where MRA_CLANG points: the emulator's one line naming what to install.
    let o = Command::new(env!("CARGO_BIN_EXE_mra-bench"))
        .args(["transform", "--input", &good_a, "--matrix", &good_b, "--output", out, "--emulate", "-l", "L3"])
        .env("MRA_KERNEL_CACHE", "off")
        .env("MRA_CLANG", "/nonexistent/clang++")
        .output()
        .expect("run mra-bench");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("--emulate needs clang++") && err.lines().count() == 1, "{err}");
    assert!(!Path::new(out).exists(), "an output was written without clang");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `transform --emulate` on `arch` for one (K, N, level, dtype): A and B random (fresh seed),
/// C poisoned beforehand; returns max |C - direct| / max |direct| over all tensors.
fn emulated_error(dir: &Path, arch: &str, level: Option<&str>, f32: bool, k: usize, n: usize, seed: u64) -> f64 {
    let k3 = k * k * k;
    let round = |v: Vec<f64>| if f32 { v.iter().map(|&x| x as f32 as f64).collect() } else { v };
    let a = round(values(n * k3, seed ^ (k as u64 * 131 + n as u64)));
    let b = round(values(k * k, seed ^ 0xE ^ k as u64));
    let bytes = |v: &[f64]| if f32 { v.iter().flat_map(|&x| (x as f32).to_le_bytes()).collect() } else { f64_le(v) };
    let descr = if f32 { "<f4" } else { "<f8" };
    let (ap, bp, cp) = (dir.join("a.npy"), dir.join("b.npy"), dir.join("c.npy"));
    std::fs::write(&ap, npy_bytes(descr, false, &[n, k, k, k], &bytes(&a))).unwrap();
    std::fs::write(&bp, npy_bytes(descr, false, &[k, k], &bytes(&b))).unwrap();
    // Poison: NaN of the right size, so a run that wrote nothing cannot pass.
    std::fs::write(&cp, npy_bytes(descr, false, &[n, k, k, k], &bytes(&vec![f64::NAN; n * k3]))).unwrap();
    let mut args = vec!["transform", "--input", path_str(&ap), "--matrix", path_str(&bp), "--output", path_str(&cp), "--emulate", "--arch", arch];
    args.extend(["--dtype", if f32 { "f32" } else { "f64" }]);
    if let Some(l) = level {
        args.extend(["-l", l]);
    }
    let o = mra_bench(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{arch} {level:?} K={k} N={n}: {err}");
    assert!(err.contains(&format!("CPU wave emulator ({arch}")), "ran on the emulator: {err}");
    let (got_descr, shape, data) = parse_npy(&std::fs::read(&cp).unwrap());
    assert_eq!((got_descr.as_str(), shape), (descr, vec![n, k, k, k]), "C keeps A's shape and dtype");
    let c: Vec<f64> = if f32 {
        data.chunks_exact(4).map(|x| f32::from_le_bytes(x.try_into().unwrap()) as f64).collect()
    } else {
        data.chunks_exact(8).map(|x| f64::from_le_bytes(x.try_into().unwrap())).collect()
    };
    let want: Vec<f64> = (0..n).flat_map(|t| direct(k, &a[t * k3..(t + 1) * k3], &b)).collect();
    let scale = want.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    // NaN (a poisoned element left unwritten) makes the error NaN, which no tolerance accepts.
    c.iter().zip(&want).map(|(x, y)| (x - y).abs() / scale).fold(0.0, |m, e| if e.is_nan() || m.is_nan() { f64::NAN } else { m.max(e) })
}

#[test]
#[ignore = "needs clang++ with AddressSanitizer (run with --include-ignored; .ci/run does)"]
fn emulate_round_trips_npy_against_the_six_loop_definition() {
    if mra_tests::require("clang++ with AddressSanitizer (the CPU wave emulator)", mra_runtime::emulate::HostClang::find()).is_none() {
        return;
    }
    let dir = scratch("emulate");
    let seed = fresh_seed();
    // (arch, level, f32?, tolerance): the validation bounds of f64 (1e-10) and f32 (1e-4).
    // f64 on gfx90a: the default level and the MFMA level; f32 on gfx1100 (wave32) and gfx942.
    let cases: &[(&str, Option<&str>, bool, f64)] =
        &[("gfx90a", None, false, 1e-10), ("gfx90a", Some("L4"), false, 1e-10), ("gfx1100", None, true, 1e-4), ("gfx942", Some("L3"), true, 1e-4)];
    for &(arch, level, f32, tol) in cases {
        for (k, n) in [(5, 3), (13, 2)] {
            let e = emulated_error(&dir, arch, level, f32, k, n, seed);
            println!("{arch} {level:?} f32={f32} K={k} N={n}: max rel err {e:e}");
            assert!(e <= tol, "{arch} {level:?} f32={f32} K={k} N={n}: max |C - direct| / max |direct| = {e:e} > {tol:e} (seed {seed})");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// One direction by its definition: for d = 1, C(a, j, c) = Σ_b A(a, b, c) M(b, j).
fn dir_direct(k: usize, a: &[f64], m: &[f64], d: usize) -> Vec<f64> {
    let mut c = vec![0.0; k * k * k];
    for (e, out) in c.iter_mut().enumerate() {
        let i = [e / (k * k), e / k % k, e % k];
        *out = (0..k)
            .map(|q| {
                let mut j = i;
                j[d] = q;
                a[(j[0] * k + j[1]) * k + j[2]] * m[q * k + i[d]]
            })
            .sum();
    }
    c
}

/// `transform` with a matrix per dimension, one direction, α/β with an initial C0, and the rank
/// sum, through `target` (`--reference`, or the emulator), against the definitions: general
/// and the rank sum by the six loops of `general_direct`, a direction by its own loop.
fn operations_round_trip(target: &[&str], name: &str) {
    let dir = scratch(name);
    let seed = fresh_seed();
    let (k, n, r) = (5usize, 3usize, 4usize);
    let (k2, k3) = (k * k, k * k * k);
    let a = values(n * k3, seed);
    let c0 = values(n * k3, seed ^ 1);
    let m: Vec<Vec<f64>> = (0..3).map(|p| values(r * k2, seed ^ (7 + p))).collect();
    let w = values(r, seed ^ 11);
    let file = |name: &str, shape: &[usize], v: &[f64]| {
        let p = dir.join(name);
        std::fs::write(&p, npy_bytes("<f8", false, shape, &f64_le(v))).unwrap();
        p.to_str().unwrap().to_string()
    };
    let ap = file("a.npy", &[n, k, k, k], &a);
    let c0p = file("c0.npy", &[n, k, k, k], &c0);
    let xyz: Vec<String> = (0..3).map(|p| file(&format!("m{p}.npy"), &[k, k], &m[p][..k2])).collect();
    let stacks: Vec<String> = (0..3).map(|p| file(&format!("s{p}.npy"), &[r, k, k], &m[p])).collect();
    let wp = file("w.npy", &[r], &w);
    let out = dir.join("c.npy");
    let per_dim = xyz.join(",");
    let stacked = stacks.join(",");
    type Want = Box<dyn Fn(&[f64]) -> Vec<f64>>;
    let (mx, my, mz) = (m[0][..k2].to_vec(), m[1][..k2].to_vec(), m[2][..k2].to_vec());
    let general: Want = { let (x, y, z) = (mx.clone(), my.clone(), mz.clone()); Box::new(move |t| mra_runtime::reference::general_direct(k, t, &x, &y, &z)) };
    let one: Want = { let y = my.clone(); Box::new(move |t| dir_direct(k, t, &y, 2)) };
    let sum: Want = {
        let (m, w) = (m.clone(), w.clone());
        Box::new(move |t| {
            let mut c = vec![0.0; k3];
            for mu in 0..r {
                let g = mra_runtime::reference::general_direct(k, t, &m[0][mu * k2..][..k2], &m[1][mu * k2..][..k2], &m[2][mu * k2..][..k2]);
                c.iter_mut().zip(g).for_each(|(c, g)| *c += w[mu] * g);
            }
            c
        })
    };
    let cases: Vec<(Vec<&str>, Want, f64, f64)> = vec![
        (vec!["--matrix", &per_dim], general, 1.0, 0.0),
        (vec!["--matrix", &xyz[1], "--dim", "2", "--alpha", "2", "--beta", "-0.5", "--initial", &c0p], one, 2.0, -0.5),
        (vec!["--matrix", &stacked, "--weights", &wp, "--beta", "1", "--initial", &c0p], sum, 1.0, 1.0),
    ];
    for (flags, want, alpha, beta) in cases {
        let mut args = vec!["transform", "--input", &ap, "--output", out.to_str().unwrap()];
        args.extend(&flags);
        args.extend(target);
        let o = mra_bench(&args);
        assert!(o.status.success(), "{flags:?}: {}", String::from_utf8_lossy(&o.stderr));
        let (_, shape, data) = parse_npy(&std::fs::read(&out).unwrap());
        assert_eq!(shape, [n, k, k, k]);
        let c: Vec<f64> = data.chunks_exact(8).map(|x| f64::from_le_bytes(x.try_into().unwrap())).collect();
        for t in 0..n {
            let expect: Vec<f64> = want(&a[t * k3..][..k3]).iter().zip(&c0[t * k3..][..k3]).map(|(v, c0)| alpha * v + beta * c0).collect();
            let scale = expect.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            for (e, (x, y)) in c[t * k3..][..k3].iter().zip(&expect).enumerate() {
                assert!((x - y).abs() / scale < 1e-12, "{flags:?} tensor {t} element {e}: {x} vs {y} (seed {seed})");
            }
        }
    }
    // Flags that do not fit together: one line each, nothing written.
    std::fs::remove_file(&out).unwrap();
    for (flags, says) in [
        (vec!["--matrix", &per_dim, "--dim", "1"], "--dim transforms one dimension with one --matrix file"),
        (vec!["--matrix", &xyz[0], "--beta", "1"], "--beta 1 accumulates into C0"),
        (vec!["--matrix", &xyz[0], "--initial", &c0p], "--initial is read only with a --beta"),
        (vec!["--matrix", &stacked, "--weights", &c0p], "it must be (4,)"),
        (vec!["--matrix", &per_dim, "--weights", &wp], "a rank sum's X, Y, Z are (R, K, K)"),
    ] {
        let mut args = vec!["transform", "--input", &ap, "--output", out.to_str().unwrap()];
        args.extend(&flags);
        args.extend(target);
        let o = mra_bench(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{flags:?}: {err}");
        assert!(err.contains(says) && err.trim().lines().count() == 1, "{flags:?}: {err}");
        assert!(!out.exists(), "{flags:?}: wrote C");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn operations_on_the_reference_match_their_definitions() {
    operations_round_trip(&["--reference"], "ops-reference");
}

#[test]
#[ignore = "needs clang++ with AddressSanitizer (run with --include-ignored; .ci/run does)"]
fn operations_on_the_emulator_match_their_definitions() {
    operations_round_trip(&["--emulate", "--arch", "gfx90a"], "ops-emulate");
}
