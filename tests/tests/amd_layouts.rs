//! Every (lane, register) of A, B and D of every AMD matrix instruction we use, as AMD's Matrix
//! Instruction Calculator prints it (the shared reference `../shared/reference/amd-matrix-layouts/`,
//! or `$MRA_AMD_LAYOUTS`: `mra_tests::calculator`), against the layout tables the code generator
//! emits its index expressions from (`mra-codegen/src/fragment.rs`) and the emulator's own.

use mra_codegen::arch::MatrixInstr;
use mra_codegen::fragment::{fragment, OperandLayout};
use mra_tests::calculator::{self, require_all, InstructionTables, OperandTable};

/// The generator's instruction for a calculator file, by its architecture.
fn instr_of(t: &InstructionTables) -> MatrixInstr {
    match t.architecture.as_str() {
        "cdna2" | "cdna3" => MatrixInstr::MfmaF64_16x16x4,
        "rdna3" => MatrixInstr::WmmaF32_16x16x16Gfx11,
        "rdna4" => MatrixInstr::WmmaF32_16x16x16Gfx12,
        other => panic!("{}: unknown architecture {other}", t.file),
    }
}

/// Every (lane, register) where `layout` and the calculator's table disagree, as text.
fn differences(name: &str, layout: &OperandLayout, lanes: u32, table: &OperandTable) -> Vec<String> {
    let mut out = Vec::new();
    if table.lanes() != lanes as usize || table.regs() != layout.regs as usize {
        out.push(format!("{name}: calculator has {} lanes x {} registers, fragment.rs {lanes} x {}", table.lanes(), table.regs(), layout.regs));
        return out;
    }
    for lane in 0..lanes {
        for r in 0..layout.regs {
            let want = table.cells[lane as usize][r as usize];
            let got = (layout.row.at(lane, r), layout.col.at(lane, r));
            if got != want {
                out.push(format!("{name}: lane {lane} reg {r}: fragment.rs {name}[{}][{}], AMD {name}[{}][{}]", got.0, got.1, want.0, want.1));
            }
        }
    }
    out
}

#[test]
fn the_calculator_data_is_all_there() {
    let Some(all) = require_all() else { return };
    let names: Vec<&str> = all.iter().map(|t| t.file.as_str()).collect();
    assert_eq!(names.len(), 6, "{names:?}");
    for t in &all {
        let lanes = if t.architecture.starts_with("cdna") { 64 } else { 32 };
        for (m, table) in [('A', &t.a), ('B', &t.b), ('D', &t.d)] {
            assert_eq!(table.lanes(), lanes, "{} {m}", t.file);
        }
    }
}

#[test]
fn fragment_tables_match_amds_calculator_for_every_lane_and_register() {
    let Some(all) = require_all() else { return };
    let mut all_diffs = Vec::new();
    for t in all {
        let f = fragment(instr_of(&t));
        let mut diffs = differences("A", &f.a, f.lanes, &t.a);
        diffs.extend(differences("B", &f.b, f.lanes, &t.b));
        diffs.extend(differences("D", &f.c, f.lanes, &t.d));
        if !diffs.is_empty() {
            all_diffs.push(format!("{} ({} differences), first: {}", t.file, diffs.len(), diffs[..diffs.len().min(4)].join("; ")));
        }
    }
    assert!(all_diffs.is_empty(), "fragment.rs disagrees with AMD's calculator:\n{}", all_diffs.join("\n"));
}

/// The emulator's own layouts (`mra-runtime/src/emulate/layouts.rs`, written from the
/// calculator's formulas without `fragment.rs`) against the calculator's tables.
#[test]
fn emulator_layouts_match_amds_calculator_for_every_lane_and_register() {
    use mra_runtime::emulate::layouts::{Instruction, Operand};
    let Some(all) = require_all() else { return };
    let mut all_diffs = Vec::new();
    for t in all {
        let instr = match t.architecture.as_str() {
            "cdna2" | "cdna3" => Instruction::MfmaF64_16x16x4,
            "rdna3" => Instruction::WmmaRdna3,
            "rdna4" => Instruction::WmmaRdna4,
            other => panic!("{}: unknown architecture {other}", t.file),
        };
        for (op, table) in [(Operand::A, &t.a), (Operand::B, &t.b), (Operand::D, &t.d)] {
            if table.lanes() != instr.lanes() as usize || table.regs() != instr.regs(op) as usize {
                all_diffs.push(format!("{} {op:?}: calculator {} x {}, emulator {} x {}", t.file, table.lanes(), table.regs(), instr.lanes(), instr.regs(op)));
                continue;
            }
            for lane in 0..instr.lanes() {
                for r in 0..instr.regs(op) {
                    let (got, want) = (instr.element(op, lane, r), table.cells[lane as usize][r as usize]);
                    if got != want {
                        all_diffs.push(format!("{} {op:?} lane {lane} reg {r}: emulator {got:?}, AMD {want:?}", t.file));
                    }
                }
            }
        }
    }
    assert!(all_diffs.is_empty(), "the emulator disagrees with AMD's calculator ({}):\n{}", all_diffs.len(), all_diffs[..all_diffs.len().min(8)].join("\n"));
}

/// The deliberately wrong layout the failure tests use really is wrong by AMD's data.
#[test]
fn the_sabotaged_f64_d_layout_disagrees_with_the_calculator() {
    use mra_runtime::emulate::layouts::{Instruction, Operand, Sabotage};
    let Some(all) = require_all() else { return };
    let t = all.into_iter().find(|t| t.architecture == "cdna2").unwrap();
    let wrong = (0..64u32)
        .flat_map(|l| (0..4u32).map(move |r| (l, r)))
        .filter(|&(l, r)| Sabotage::SwapF64DRows.element(Instruction::MfmaF64_16x16x4, Operand::D, l, r) != t.d.cells[l as usize][r as usize])
        .count();
    assert_eq!(wrong, 192, "rows 0, 5, 10, 15 of each tile agree; the other 192 (lane, reg) must not");
}

/// The repository's copy (`tests/data/amd-matrix-layouts/`, what CI reads on a clone without
/// `../shared/` beside it) is the shared reference, file for file and byte for byte, wherever
/// the reference is there to compare with.
#[test]
fn the_copy_in_tests_data_is_the_shared_reference() {
    let reference = calculator::reference_dir();
    let found = if reference.is_dir() { Ok(reference.clone()) } else { Err(format!("{} is not a directory", reference.display())) };
    let Some(reference) = mra_tests::require("the shared reference ../shared/reference/amd-matrix-layouts", found) else { return };
    let names = |dir: &std::path::Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    };
    let copy = calculator::copy_dir();
    assert_eq!(names(&copy), names(&reference), "{} and {} hold different files", copy.display(), reference.display());
    for name in names(&reference) {
        let (a, b) = (std::fs::read(copy.join(&name)).unwrap(), std::fs::read(reference.join(&name)).unwrap());
        assert!(a == b, "{name}: the copy in {} differs from the shared reference {}; copy the reference over it", copy.display(), reference.display());
    }
}
