//! `mra-bench transform` without a GPU: `--reference` round-trips .npy files against the
//! direct six-loop definition, and every way an input can be wrong is a one-line error.
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

/// A .npy file (format 1.0) of `descr` (`<f8`), `shape`, C or Fortran order, with `data` bytes.
fn npy_bytes(descr: &str, fortran: bool, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}", if fortran { "True" } else { "False" });
    // Magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

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

/// The definition: C(i,j,k) = Σ_{a,b,c} A(a,b,c) B(a,i) B(b,j) B(c,k), one tensor, six loops.
fn direct(k: usize, a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut c = vec![0.0; k * k * k];
    for i in 0..k {
        for j in 0..k {
            for l in 0..k {
                let mut s = 0.0;
                for x in 0..k {
                    for y in 0..k {
                        for z in 0..k {
                            s += a[(x * k + y) * k + z] * b[x * k + i] * b[y * k + j] * b[z * k + l];
                        }
                    }
                }
                c[(i * k + j) * k + l] = s;
            }
        }
    }
    c
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
        (vec![file("be.npy", npy_bytes(">f8", false, &[2, k, k, k], &a)), good_b.clone()], "big-endian"),
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
        (vec!["--emulate"], "no CPU HIP emulator"),
        (vec!["--reference", "-l", "L3"], "runs on a GPU"),
        (vec!["--reference", "--dtype", "f32"], "--dtype f64"),
    ] {
        let mut args = vec!["transform", "--input", &good_a, "--matrix", &good_b, "--output", out];
        args.extend(extra.iter().copied());
        let o = mra_bench(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(needle) && err.lines().count() == 1, "{extra:?}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
