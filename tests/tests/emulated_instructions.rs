//! Each matrix instruction the CPU wave emulator defines, executed as the emulator builds it
//! (the C++ that `mra-runtime/src/emulate/prelude.rs` generates in place of a generated kernel's
//! HIP prelude: its layout tables, its gather and its RDNA3 replication check) on registers
//! placed by AMD's Matrix Instruction Calculator, read from the shared reference
//! (`mra_tests::calculator`): every lane's A and B registers hold the elements the calculator
//! says, C is placed by its D table, and D must come back with the calculator's element of
//! A·B + C in every lane and register. On RDNA3, lanes 16-31 repeat lanes 0-15 (the calculator's
//! A and B tables say so); an upper lane that does not must be refused, as the hardware's
//! results would be undefined.
//!
//! The emulator's layouts are written from AMD's formulas (`emulate/layouts.rs`) and compared
//! with the calculator as data (`amd_layouts.rs`); this runs the generated C++ itself, so a
//! wrong table text, gather or accumulation fails here whatever the generated kernels do.

use mra_codegen::emit::{PRELUDE_BEGIN, PRELUDE_END};
use mra_codegen::{arch, levels, DType, Request};
use mra_runtime::backend::{Backend, LaunchArgs};
use mra_runtime::emulate::{Emulator, HostClang};
use mra_runtime::KernelCache;
use mra_tests::calculator::{require_all, InstructionTables, OperandTable};
use mra_tests::require;

/// What the emulator runs for one calculator file: the arch whose generated prelude defines the
/// instruction, the element type, and the prelude function's name.
struct Case {
    arch: &'static str,
    dtype: DType,
    function: String,
}

fn case_of(t: &InstructionTables) -> Case {
    let dtype = if t.instruction.contains("bf16") {
        DType::Bf16
    } else if t.instruction.contains("f16") {
        DType::F16
    } else {
        DType::F64
    };
    let (arch, function) = match t.architecture.as_str() {
        "cdna2" => ("gfx90a", "mra_mfma_f64_16x16x4".to_string()),
        "cdna3" => ("gfx942", "mra_mfma_f64_16x16x4".to_string()),
        "rdna3" => ("gfx1100", format!("mra_wmma_f32_16x16x16_{dtype}_gfx11")),
        "rdna4" => ("gfx1201", format!("mra_wmma_f32_16x16x16_{dtype}_gfx12")),
        other => panic!("{}: unknown architecture {other}", t.file),
    };
    Case { arch, dtype, function }
}

/// The HIP prelude of the kernel the code generator makes for `case` (a matrix-core level), from
/// its begin marker to its end marker: the text the emulator replaces.
fn generated_prelude(case: &Case) -> String {
    let a = arch::find(case.arch).unwrap();
    let kernel = mra_codegen::generate(&levels::find("L4").unwrap(), Request { k: 16, arch: a, dtype: case.dtype }).unwrap();
    let s = &kernel.source;
    let begin = s.find(PRELUDE_BEGIN).expect("a generated HIP kernel has a prelude");
    let end = s.find(PRELUDE_END).unwrap() + PRELUDE_END.len();
    let prelude = s[begin..end].to_string();
    assert!(prelude.contains(&format!(" {}(", case.function)), "{}: the generated prelude does not define {}:\n{prelude}", case.arch, case.function);
    prelude
}

/// A kernel of the generated form (the four buffers, one block of one wave) around the
/// generated prelude: lane l loads its A registers from a[l·RA + r], its B registers from
/// b[l·RB + r] and its accumulator from workspace[l·RD + r], runs the instruction once and
/// stores its D registers to c[l·RD + r]. f16 registers are converted from the doubles, bf16
/// ones are given as their 16 bits.
fn probe_source(case: &Case, t: &InstructionTables) -> String {
    let (ra, rb, rd) = (t.a.regs(), t.b.regs(), t.d.regs());
    let (operand_a, operand_b, acc) = match case.dtype {
        DType::F64 => ("double".to_string(), "double".to_string(), "mra_double4"),
        d => (format!("mra_{d}x{ra}"), format!("mra_{d}x{rb}"), "mra_float8"),
    };
    let element = |buffer: &str, regs: usize| {
        let at = format!("{buffer}[lane * {regs} + r]");
        match case.dtype {
            DType::F64 => at,
            DType::F16 => format!("(_Float16){at}"),
            _ => format!("(short)(int){at}"),
        }
    };
    let load = |name: &str, buffer: &str, regs: usize| {
        if regs == 1 {
            format!("{name} = {};", element(buffer, 1).replace(" + r]", "]"))
        } else {
            format!("for (int r = 0; r < {regs}; ++r) {name}[r] = {};", element(buffer, regs))
        }
    };
    format!(
        "{prelude}\n\n\
         extern \"C\" __global__ void mra_probe(const double* a, const double* b, double* c, double* workspace, int nfuncs, int nblocks) {{\n\
         \x20   const int lane = mra_thread_id();\n\
         \x20   {operand_a} av;\n\
         \x20   {operand_b} bv;\n\
         \x20   {acc} acc;\n\
         \x20   {load_a}\n\
         \x20   {load_b}\n\
         \x20   for (int r = 0; r < {rd}; ++r) acc[r] = workspace[lane * {rd} + r];\n\
         \x20   acc = {function}(av, bv, acc);\n\
         \x20   for (int r = 0; r < {rd}; ++r) c[lane * {rd} + r] = acc[r];\n\
         }}\n",
        prelude = generated_prelude(case),
        load_a = load("av", "a", ra),
        load_b = load("bv", "b", rb),
        function = case.function,
    )
}

/// A rows × cols matrix of small integers (exact in f16 and bf16; every sum of 16 products
/// plus C exact in f32), different for each `seed`.
fn matrix(rows: u32, cols: u32, seed: u64) -> Vec<Vec<f64>> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..rows)
        .map(|_| {
            (0..cols)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % 17) as f64 - 8.0
                })
                .collect()
        })
        .collect()
}

/// The registers of every lane, as the calculator's `table` places `m`'s elements, flattened
/// lane by lane; bf16 registers as their bits.
fn place(table: &OperandTable, m: &[Vec<f64>], dtype: DType) -> Vec<f64> {
    let bits = |v: f64| if dtype == DType::Bf16 { ((v as f32).to_bits() >> 16) as f64 } else { v };
    table.cells.iter().flat_map(|lane| lane.iter().map(|&(i, j)| bits(m[i as usize][j as usize]))).collect()
}

fn bytes(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// One launch of the probe with these registers: D's registers lane by lane, or the
/// emulator's refusal.
fn launch(emu: &Emulator, f: &<Emulator as Backend>::Function, lanes: usize, a: &[f64], b: &[f64], c: &[f64]) -> Result<Vec<f64>, String> {
    let buffer = |v: &[f64]| {
        let buf = emu.alloc(v.len() * 8).unwrap();
        emu.upload(&buf, &bytes(v)).unwrap();
        buf
    };
    let (ab, bb, cb, db) = (buffer(a), buffer(b), buffer(c), buffer(&vec![f64::NAN; c.len()]));
    let args = LaunchArgs {
        a: Emulator::device_ptr(&ab),
        b: Emulator::device_ptr(&bb),
        c: Emulator::device_ptr(&db),
        workspace: Emulator::device_ptr(&cb),
        nfuncs: 1,
        nblocks: 1,
        op: None,
    };
    emu.launch(f, &(), lanes as u32, &args).map_err(|e| e.to_string())?;
    let out = emu.download(&db).unwrap();
    Ok(out.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect())
}

#[test]
#[ignore = "needs clang++ with AddressSanitizer (run with --include-ignored; .ci/run does)"]
fn every_emulated_matrix_instruction_computes_amds_layouts() {
    let Some(tables) = require_all() else { return };
    let Some(clang) = require("clang++ with AddressSanitizer (the CPU wave emulator)", HostClang::find()) else { return };
    let cache = KernelCache::from_env();
    let mut covered = Vec::new();
    for t in &tables {
        let case = case_of(t);
        let emu = Emulator::new(arch::find(case.arch).unwrap()).unwrap();
        let lanes = t.a.lanes();
        assert_eq!(lanes as u32, arch::find(case.arch).unwrap().wave_size, "{}: the calculator's lanes are the arch's wave", t.file);
        let compiled = emu.compile(&clang, &probe_source(&case, t), "mra_probe", &cache).unwrap_or_else(|e| panic!("{}: {e}", t.file));
        let f = emu.load(&compiled, "mra_probe", 0).unwrap();
        // The shapes from the calculator's tables: A is M x K, B K x N, D M x N.
        let dim = |table: &OperandTable, axis: usize| 1 + table.cells.iter().flatten().map(|c| if axis == 0 { c.0 } else { c.1 }).max().unwrap();
        let (m, k, n) = (dim(&t.a, 0), dim(&t.a, 1), dim(&t.b, 1));
        assert_eq!(dim(&t.b, 0), k, "{}", t.file);
        for seed in [1, 2] {
            let (am, bm, cm) = (matrix(m, k, seed), matrix(k, n, seed + 10), matrix(m, n, seed + 20));
            let (a, b, c) = (place(&t.a, &am, case.dtype), place(&t.b, &bm, case.dtype), place(&t.d, &cm, DType::F64));
            let d = launch(&emu, &f, lanes, &a, &b, &c).unwrap_or_else(|e| panic!("{}: the emulator refused registers placed by the calculator: {e}", t.file));
            let mut wrong = Vec::new();
            for (lane, regs) in t.d.cells.iter().enumerate() {
                for (r, &(i, j)) in regs.iter().enumerate() {
                    let want = cm[i as usize][j as usize] + (0..k as usize).map(|kk| am[i as usize][kk] * bm[kk][j as usize]).sum::<f64>();
                    let got = d[lane * t.d.regs() + r];
                    if got != want {
                        wrong.push(format!("lane {lane} reg {r} (D[{i}][{j}]): {got}, want {want}"));
                    }
                }
            }
            assert!(wrong.is_empty(), "{} ({}, {}): {} of {} D registers wrong, first: {}", t.file, case.arch, case.function, wrong.len(), d.len(), wrong[..wrong.len().min(4)].join("; "));
        }
        // RDNA3: an upper lane that does not repeat its lower lane, in A or in B, is refused.
        if t.architecture == "rdna3" {
            let (am, bm, cm) = (matrix(m, k, 3), matrix(k, n, 13), matrix(m, n, 23));
            let (a, b, c) = (place(&t.a, &am, case.dtype), place(&t.b, &bm, case.dtype), place(&t.d, &cm, DType::F64));
            for (operand, lane, reg) in [('A', 20, 3), ('B', 31, 15), ('A', 16, 0)] {
                let (mut a, mut b) = (a.clone(), b.clone());
                let (regs, at) = if operand == 'A' { (&mut a, lane * t.a.regs() + reg) } else { (&mut b, lane * t.b.regs() + reg) };
                let (table, lower) = if operand == 'A' { (&t.a, lane - 16) } else { (&t.b, lane - 16) };
                assert_eq!(table.cells[lane][reg], table.cells[lower][reg], "{}: the calculator says lane {lane} repeats lane {lower}", t.file);
                // Another value of the same type: +1 (f16), the next bf16 bit pattern.
                regs[at] += 1.0;
                let err = launch(&emu, &f, lanes, &a, &b, &c).err();
                let err = err.unwrap_or_else(|| panic!("{} ({}): {operand} of lane {lane} register {reg} differs from lane {lower}'s, and the emulator executed the instruction", t.file, case.function));
                assert!(err.contains("differs between lanes that must hold the same value") && err.contains(&format!("{}: {operand}[", case.function)), "{}: {err}", t.file);
            }
        }
        covered.push(format!("{} {} ({})", case.arch, case.function, t.file));
    }
    let archs: Vec<&str> = tables.iter().map(|t| t.architecture.as_str()).collect();
    for family in ["cdna2", "cdna3", "rdna3", "rdna4"] {
        assert!(archs.contains(&family), "no calculator table for {family}: {archs:?}");
    }
    println!("{}", covered.join("\n"));
}
