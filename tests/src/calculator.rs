//! A parser for the printed output of AMD's Matrix Instruction Calculator, read from the
//! project's shared reference (`../shared/reference/amd-matrix-layouts/` beside the checkout,
//! or the directory `$MRA_AMD_LAYOUTS` names): the `--A-matrix`, `--B-matrix` and `--D-matrix`
//! tables printed with `--matrix-layout`, one table row per lane, one column per register, each
//! cell the element that lane/register holds.
//!
//! `tests/data/amd-matrix-layouts/` is a byte-for-byte copy of that reference for clones that
//! have no `../shared/` beside them (CI's fresh clone: `.ci/run` points `$MRA_AMD_LAYOUTS` at
//! it there); `amd_layouts.rs` checks that the copy is the reference wherever both exist.
//!
//! This is test-side code on purpose: it knows nothing of `mra-codegen` or the emulator, so
//! the layouts those carry are checked against AMD's data, not against each other.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The environment variable naming the directory of the calculator files.
pub const LAYOUTS_ENV: &str = "MRA_AMD_LAYOUTS";

/// The shared reference: `../shared/reference/amd-matrix-layouts` beside the workspace.
pub fn reference_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/reference/amd-matrix-layouts")
}

/// The copy kept in the repository (see the module docs).
pub fn copy_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/amd-matrix-layouts")
}

/// The directory the tests read: `$MRA_AMD_LAYOUTS` if set, else [`reference_dir`]; an error
/// saying what to do when it is not there (callers skip or fail by `crate::require`).
pub fn data_dir() -> Result<PathBuf, String> {
    let (dir, from) = match std::env::var_os(LAYOUTS_ENV).filter(|v| !v.is_empty()) {
        Some(v) => (PathBuf::from(v), format!("${LAYOUTS_ENV}")),
        None => (reference_dir(), "the shared reference".to_string()),
    };
    if !dir.is_dir() {
        return Err(format!(
            "{} ({from}) is not a directory; set {LAYOUTS_ENV} to the directory of AMD's calculator tables ({} is a copy)",
            dir.display(),
            copy_dir().display()
        ));
    }
    Ok(dir)
}

/// The `.txt` files of `dir`, sorted.
pub fn table_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|e| e == "txt")).collect();
    files.sort();
    if files.is_empty() {
        return Err(format!("{} holds no calculator tables (*.txt)", dir.display()));
    }
    Ok(files)
}

/// One operand's table: `cells[lane][reg] = (row, col)` of the element held there.
#[derive(Debug, Clone, PartialEq)]
pub struct OperandTable {
    pub cells: Vec<Vec<(u32, u32)>>,
}

impl OperandTable {
    pub fn lanes(&self) -> usize {
        self.cells.len()
    }
    pub fn regs(&self) -> usize {
        self.cells.first().map_or(0, |r| r.len())
    }
}

/// The three tables of one instruction file.
#[derive(Debug, Clone)]
pub struct InstructionTables {
    /// File name, e.g. `cdna2-v_mfma_f64_16x16x4f64.txt`.
    pub file: String,
    /// `Architecture:` line, lower-case (`cdna2`, `rdna3`, ...).
    pub architecture: String,
    /// `Instruction:` line, lower-case.
    pub instruction: String,
    pub a: OperandTable,
    pub b: OperandTable,
    pub d: OperandTable,
}

/// Parses one cell such as `A[12][3]` (the letter must be `letter`).
fn parse_cell(cell: &str, letter: char) -> Result<(u32, u32), String> {
    let rest = cell.strip_prefix(letter).ok_or_else(|| format!("cell `{cell}` is not an element of {letter}"))?;
    let nums: Vec<u32> = rest
        .split(['[', ']'])
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<u32>().map_err(|e| format!("cell `{cell}`: {e}")))
        .collect::<Result<_, _>>()?;
    match nums.as_slice() {
        [r, c] => Ok((*r, *c)),
        _ => Err(format!("cell `{cell}` does not have two indices")),
    }
}

/// Parses the text of one calculator file.
pub fn parse(file: &str, text: &str) -> Result<InstructionTables, String> {
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(name).map(|v| v.trim().to_lowercase()))
            .ok_or_else(|| format!("{file}: no `{name}` line"))
    };
    let architecture = field("Architecture:")?;
    let instruction = field("Instruction:")?;
    let mut tables: BTreeMap<char, OperandTable> = BTreeMap::new();
    let mut current: Option<char> = None;
    for line in text.lines() {
        if line.starts_with("## ") {
            current = ['A', 'B', 'D'].into_iter().find(|m| line.contains(&format!("--{m}-matrix")));
            if let Some(m) = current {
                if tables.insert(m, OperandTable { cells: Vec::new() }).is_some() {
                    return Err(format!("{file}: two {m} tables"));
                }
            }
            continue;
        }
        let Some(m) = current else { continue };
        let Some(body) = line.strip_prefix('|') else { continue };
        let cols: Vec<&str> = body.trim_end_matches('|').split('|').map(str::trim).collect();
        let Ok(lane) = cols[0].parse::<usize>() else { continue }; // the header row
        let table = tables.get_mut(&m).unwrap();
        if lane != table.cells.len() {
            return Err(format!("{file}: {m} table: lane {lane} out of order"));
        }
        let row = cols[1..].iter().map(|c| parse_cell(c, m)).collect::<Result<Vec<_>, _>>().map_err(|e| format!("{file}: {e}"))?;
        if let Some(first) = table.cells.first() {
            if first.len() != row.len() {
                return Err(format!("{file}: {m} table: lane {lane} has {} registers, lane 0 {}", row.len(), first.len()));
            }
        }
        table.cells.push(row);
    }
    let mut take = |m: char| tables.remove(&m).filter(|t| t.lanes() > 0).ok_or_else(|| format!("{file}: no {m} table"));
    Ok(InstructionTables { file: file.to_string(), architecture, instruction, a: take('A')?, b: take('B')?, d: take('D')? })
}

/// Every calculator file in [`data_dir`], parsed, in file-name order; `Err` when the
/// directory is not there (a file that does not parse is a panic: the data is broken).
pub fn load_all() -> Result<Vec<InstructionTables>, String> {
    let files = table_files(&data_dir()?)?;
    Ok(files
        .iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            parse(&name, &text).unwrap_or_else(|e| panic!("{e}"))
        })
        .collect())
}

/// [`load_all`] through [`crate::require`]: `None` (the test skips, saying why) when the tables
/// are not there, unless `MRA_REQUIRE_TOOLCHAINS=1` makes that a failure.
pub fn require_all() -> Option<Vec<InstructionTables>> {
    crate::require("the directory of AMD's Matrix Instruction Calculator tables", load_all())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_small_table() {
        let text = "Architecture: CDNA2\nInstruction: V_X\n## x --D-matrix --matrix-layout\n\
                    +---+\n|   lane | v0 | v1 |\n+===+\n|      0 | D[0][0]  | D[4][0] |\n+--+\n|      1 | D[0][1] | D[4][1] |\n\
                    ## x --A-matrix\n|      0 | A[1][2] |\n## x --B-matrix\n|      0 | B[3][4] |\n";
        let t = parse("x.txt", text).unwrap();
        assert_eq!(t.d.cells, vec![vec![(0, 0), (4, 0)], vec![(0, 1), (4, 1)]]);
        assert_eq!(t.a.cells, vec![vec![(1, 2)]]);
        assert_eq!(t.b.cells, vec![vec![(3, 4)]]);
        assert_eq!(t.architecture, "cdna2");
    }

    #[test]
    fn a_cell_of_the_wrong_matrix_is_an_error() {
        assert!(parse_cell("B[1][2]", 'A').is_err());
        assert!(parse_cell("A[1]", 'A').is_err());
    }
}
