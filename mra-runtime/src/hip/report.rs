//! What the compiler made of a kernel: per-kernel resources from an AMDGPU code object's
//! `NT_AMDGPU_METADATA` note, and the matrix-core instructions in its disassembly.
//!
//! The note (owner `AMDGPU`, type 32, code object v3 and later) holds a MessagePack map:
//! `amdhsa.target` and `amdhsa.kernels`, a list with one map per kernel whose keys include
//! `.name`, `.vgpr_count`, `.agpr_count` (CDNA only), `.sgpr_count`, `.vgpr_spill_count`,
//! `.sgpr_spill_count`, `.group_segment_fixed_size` (static LDS bytes),
//! `.private_segment_fixed_size` (scratch bytes per work-item) and `.wavefront_size`.
//! `object` walks the ELF and its notes; `rmpv` decodes the MessagePack.
//!
//! The matrix instructions are counted in `llvm-objdump -d --mcpu=<arch>` output: lines whose
//! mnemonic starts with `v_mfma` (CDNA matrix cores) or `v_wmma` (RDNA3/4).

use super::{find_tool, CodeObject, HipError, Result, ScratchDir};
use object::elf::{FileHeader64, EM_AMDGPU};
use object::read::elf::{FileHeader, SectionHeader};
use object::Endianness;
use rmpv::Value;
use serde::Serialize;
use std::path::PathBuf;
use std::process::Command;

/// The ELF note type of the MessagePack metadata (owner `AMDGPU`).
pub const NT_AMDGPU_METADATA: u32 = 32;

/// One kernel's resources, as the compiler recorded them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct KernelResources {
    pub name: String,
    /// `.vgpr_count`. On gfx90a/gfx942 this is the unified register file a wave allocates
    /// (arch VGPRs rounded up, plus AGPRs).
    pub vgpr_count: u32,
    /// `.agpr_count` (accumulation registers, CDNA); 0 where the key is absent (RDNA).
    pub agpr_count: u32,
    pub sgpr_count: u32,
    /// `.group_segment_fixed_size`: static LDS (shared memory) bytes per workgroup.
    pub lds_bytes: u32,
    /// `.private_segment_fixed_size`: scratch bytes per work-item (spills, stack arrays).
    pub scratch_bytes: u32,
    pub vgpr_spill_count: u32,
    pub sgpr_spill_count: u32,
    pub wavefront_size: u32,
    /// `.max_flat_workgroup_size`: the launch bound the kernel was compiled for.
    pub max_flat_workgroup_size: u32,
}

impl KernelResources {
    /// Any register spill or scratch use at all?
    pub fn spills(&self) -> bool {
        self.vgpr_spill_count > 0 || self.sgpr_spill_count > 0 || self.scratch_bytes > 0
    }
}

/// The metadata of one code object.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Metadata {
    /// `amdhsa.target`: `amdgcn-amd-amdhsa--gfx90a`.
    pub target: String,
    pub kernels: Vec<KernelResources>,
}

impl Metadata {
    pub fn kernel(&self, name: &str) -> Option<&KernelResources> {
        self.kernels.iter().find(|k| k.name == name)
    }
}

/// Matrix-core instructions in a disassembly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MatrixCounts {
    /// Lines whose mnemonic starts with `v_mfma`.
    pub mfma: u32,
    /// Lines whose mnemonic starts with `v_wmma`.
    pub wmma: u32,
}

/// Everything known about a code object without running it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CodeObjectReport {
    pub arch: String,
    pub target: String,
    pub kernels: Vec<KernelResources>,
    pub matrix: MatrixCounts,
}

impl CodeObjectReport {
    pub fn kernel(&self, name: &str) -> Option<&KernelResources> {
        self.kernels.iter().find(|k| k.name == name)
    }
}

/// Reads the `NT_AMDGPU_METADATA` note of an AMDGPU ELF code object.
pub fn read_metadata(code: &[u8]) -> Result<Metadata> {
    let bad = |what: String| HipError::BadCodeObject(what);
    let header = FileHeader64::<Endianness>::parse(code).map_err(|e| bad(format!("not a 64-bit ELF: {e}")))?;
    let endian = header.endian().map_err(|e| bad(e.to_string()))?;
    if header.e_machine(endian) != EM_AMDGPU {
        return Err(bad(format!("ELF machine {} is not EM_AMDGPU ({EM_AMDGPU})", header.e_machine(endian))));
    }
    let sections = header.sections(endian, code).map_err(|e| bad(format!("section table: {e}")))?;
    for section in sections.iter() {
        let Some(mut notes) = section.notes(endian, code).map_err(|e| bad(format!("note section: {e}")))? else { continue };
        while let Some(note) = notes.next().map_err(|e| bad(format!("note: {e}")))? {
            if note.name() == b"AMDGPU" && note.n_type(endian) == object::elf::NoteType(NT_AMDGPU_METADATA) {
                return parse_metadata(note.desc());
            }
        }
    }
    Err(bad("no NT_AMDGPU_METADATA note (code object v2 or older, or stripped)".into()))
}

/// Decodes the MessagePack payload of the metadata note.
pub fn parse_metadata(msgpack: &[u8]) -> Result<Metadata> {
    let bad = |what: String| HipError::BadCodeObject(format!("AMDGPU metadata: {what}"));
    let mut rd = msgpack;
    let root = rmpv::decode::read_value(&mut rd).map_err(|e| bad(format!("not MessagePack: {e}")))?;
    let target = lookup(&root, "amdhsa.target").and_then(Value::as_str).unwrap_or_default().to_string();
    let list = lookup(&root, "amdhsa.kernels").and_then(Value::as_array).ok_or_else(|| bad("no amdhsa.kernels list".into()))?;
    let mut kernels = Vec::with_capacity(list.len());
    for k in list {
        let num = |key: &str| lookup(k, key).and_then(Value::as_u64).map(|v| v as u32);
        let need = |key: &'static str| num(key).ok_or_else(|| bad(format!("kernel without {key}")));
        kernels.push(KernelResources {
            name: lookup(k, ".name").and_then(Value::as_str).ok_or_else(|| bad("kernel without .name".into()))?.to_string(),
            vgpr_count: need(".vgpr_count")?,
            agpr_count: num(".agpr_count").unwrap_or(0),
            sgpr_count: need(".sgpr_count")?,
            lds_bytes: need(".group_segment_fixed_size")?,
            scratch_bytes: need(".private_segment_fixed_size")?,
            vgpr_spill_count: num(".vgpr_spill_count").unwrap_or(0),
            sgpr_spill_count: num(".sgpr_spill_count").unwrap_or(0),
            wavefront_size: need(".wavefront_size")?,
            max_flat_workgroup_size: num(".max_flat_workgroup_size").unwrap_or(0),
        });
    }
    Ok(Metadata { target, kernels })
}

/// The value under string key `key` of a MessagePack map.
fn lookup<'v>(map: &'v Value, key: &str) -> Option<&'v Value> {
    map.as_map()?.iter().find(|(k, _)| k.as_str() == Some(key)).map(|(_, v)| v)
}

/// Counts matrix-core instructions in `llvm-objdump -d` output; `None` when the output holds no
/// AMDGPU instruction at all (every kernel has at least `s_endpgm`): then it is not a
/// disassembly (a wrong tool, a changed format), and a count of 0 would be a false statement.
pub fn count_matrix_instructions(disassembly: &str) -> Option<MatrixCounts> {
    let mut counts = MatrixCounts::default();
    let mut instructions = 0u32;
    for line in disassembly.lines() {
        let mnemonic = line.trim_start();
        if mnemonic.starts_with("s_") || mnemonic.starts_with("v_") {
            instructions += 1;
        }
        if mnemonic.starts_with("v_mfma") {
            counts.mfma += 1;
        } else if mnemonic.starts_with("v_wmma") {
            counts.wmma += 1;
        }
    }
    (instructions > 0).then_some(counts)
}

/// The note for a disassembly [`count_matrix_instructions`] does not understand.
pub const MATRIX_NOT_UNDERSTOOD: &str = "not counted: llvm-objdump output not understood (no AMDGPU instructions in it)";

/// The environment variable that names the llvm-objdump to use.
pub const OBJDUMP_ENV: &str = "MRA_LLVM_OBJDUMP";

/// Where llvm-objdump is looked for, in order, when `$MRA_LLVM_OBJDUMP` is not set.
pub const OBJDUMP_CANDIDATES: &[&str] = &["llvm-objdump-19", "llvm-objdump-20", "llvm-objdump-18", "llvm-objdump", "/opt/rocm/llvm/bin/llvm-objdump"];

/// An llvm-objdump that can disassemble AMDGPU code.
#[derive(Clone, Debug)]
pub struct Objdump {
    pub path: PathBuf,
}

impl Objdump {
    pub fn find() -> Result<Objdump> {
        find_tool(OBJDUMP_ENV, OBJDUMP_CANDIDATES, |_| true)
            .map(|path| Objdump { path })
            .map_err(|tried| HipError::ToolNotFound { tool: "llvm-objdump", tried, hint: " or point MRA_LLVM_OBJDUMP at one" })
    }

    /// `llvm-objdump -d --mcpu=<arch>` of a code object.
    pub fn disassemble(&self, code: &[u8], arch: &str) -> Result<String> {
        let dir = ScratchDir::new("objdump")?;
        let file = dir.write("kernel.co", code)?;
        let out = crate::process::output(Command::new(&self.path).arg("-d").arg(format!("--mcpu={arch}")).arg(&file))
            .map_err(|source| HipError::Io { what: "running llvm-objdump", path: self.path.clone(), source })?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            return Err(HipError::DisassemblerFailed {
                tool: format!("{} -d --mcpu={arch}", self.path.display()),
                arch: arch.to_string(),
                status: out.status.to_string(),
                message: stderr.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("no message").to_string(),
            });
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

/// The full report of a code object: metadata and matrix-instruction counts.
pub fn report(code: &CodeObject, objdump: &Objdump) -> Result<CodeObjectReport> {
    let meta = read_metadata(&code.bytes)?;
    let matrix = count_matrix_instructions(&objdump.disassemble(&code.bytes, &code.arch)?)
        .ok_or_else(|| HipError::BadCodeObject(format!("{}: MFMA/WMMA {MATRIX_NOT_UNDERSTOOD}", objdump.path.display())))?;
    Ok(CodeObjectReport { arch: code.arch.clone(), target: meta.target, kernels: meta.kernels, matrix })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three small kernels compiled by clang-19 for gfx90a (source and command in
    /// testdata/fixture.hip); the numbers below are what `llvm-readobj-19 --notes` prints.
    const FIXTURE: &[u8] = include_bytes!("testdata/fixture_gfx90a.co");

    #[test]
    fn reads_the_metadata_of_a_captured_code_object() {
        let meta = read_metadata(FIXTURE).unwrap();
        assert_eq!(meta.target, "amdgcn-amd-amdhsa--gfx90a");
        assert_eq!(meta.kernels.len(), 3);
        let lds = meta.kernel("fixture_lds").unwrap();
        assert_eq!(
            *lds,
            KernelResources {
                name: "fixture_lds".into(),
                vgpr_count: 4,
                agpr_count: 0,
                sgpr_count: 10,
                lds_bytes: 512,
                scratch_bytes: 0,
                vgpr_spill_count: 0,
                sgpr_spill_count: 0,
                wavefront_size: 64,
                max_flat_workgroup_size: 64,
            }
        );
        assert!(!lds.spills());
        let spill = meta.kernel("fixture_spill").unwrap();
        assert_eq!(
            (spill.vgpr_count, spill.sgpr_count, spill.scratch_bytes, spill.vgpr_spill_count, spill.sgpr_spill_count, spill.lds_bytes),
            (64, 104, 284, 160, 84, 0)
        );
        assert_eq!(spill.max_flat_workgroup_size, 256);
        assert!(spill.spills());
        let mfma = meta.kernel("fixture_mfma").unwrap();
        assert_eq!((mfma.vgpr_count, mfma.agpr_count, mfma.sgpr_count), (20, 8, 10));
    }

    #[test]
    fn rejects_what_is_not_an_amdgpu_code_object() {
        assert!(read_metadata(b"not an elf").is_err());
        let mut x86 = FIXTURE.to_vec();
        x86[18..20].copy_from_slice(&62u16.to_le_bytes()); // EM_X86_64
        let err = read_metadata(&x86).unwrap_err().to_string();
        assert!(err.contains("not EM_AMDGPU"), "{err}");
    }

    #[test]
    fn parses_metadata_without_the_optional_keys() {
        // An RDNA kernel: no .agpr_count; spill counts absent as in older compilers.
        let kernel = Value::Map(vec![
            (".name".into(), "k".into()),
            (".vgpr_count".into(), 187.into()),
            (".sgpr_count".into(), 18.into()),
            (".group_segment_fixed_size".into(), 2048.into()),
            (".private_segment_fixed_size".into(), 0.into()),
            (".wavefront_size".into(), 32.into()),
        ]);
        let root = Value::Map(vec![
            ("amdhsa.kernels".into(), Value::Array(vec![kernel])),
            ("amdhsa.target".into(), "amdgcn-amd-amdhsa--gfx1100".into()),
        ]);
        let mut bytes = Vec::new();
        rmpv::encode::write_value(&mut bytes, &root).unwrap();
        let meta = parse_metadata(&bytes).unwrap();
        assert_eq!(meta.target, "amdgcn-amd-amdhsa--gfx1100");
        let k = &meta.kernels[0];
        assert_eq!((k.vgpr_count, k.agpr_count, k.sgpr_count, k.lds_bytes, k.wavefront_size), (187, 0, 18, 2048, 32));
        assert!(!k.spills());
        assert!(parse_metadata(&[0xc1]).is_err());
    }

    #[test]
    fn counts_matrix_instructions() {
        let dis = "\tv_mfma_f64_16x16x4f64 a[0:7], v[0:1], v[2:3], 0            // 000000003C34: D3EE8000 02020500\n\
                   \tv_mfma_f64_16x16x4f64 a[0:7], v[4:5], v[6:7], a[0:7]       // 000000003C40: D3EE8000 04020D04\n\
                   \tv_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]\n\
                   \tv_fma_f64 v[0:1], v[2:3], v[4:5], v[0:1]\n\
                   0000000000001900 <mra_l4_mfma_k16_f64>:\n";
        assert_eq!(count_matrix_instructions(dis), Some(MatrixCounts { mfma: 2, wmma: 1 }));
        // A kernel without matrix instructions is a count of 0, not "not understood".
        assert_eq!(count_matrix_instructions("\ts_load_dword s0, s[4:5], 0x0\n\ts_endpgm\n"), Some(MatrixCounts::default()));
    }

    #[test]
    fn output_without_instructions_is_not_a_count_of_zero() {
        // What a wrong tool or a changed format prints: no line is an AMDGPU instruction.
        for garbage in ["", "hello world\nthis is not a disassembly\n", "kernel.co:\tfile format elf64-amdgpu\n\nDisassembly of section .text:\n"] {
            assert_eq!(count_matrix_instructions(garbage), None, "{garbage:?}");
        }
    }

    /// With llvm-objdump present, the fixture's two MFMAs are found. Ignored like every
    /// toolchain test; run with --include-ignored it skips without llvm-objdump unless
    /// MRA_REQUIRE_TOOLCHAINS=1 (the convention of tests/src/lib.rs, which this crate cannot use).
    #[test]
    #[ignore = "needs llvm-objdump (run with --include-ignored; .ci/run does)"]
    fn disassembles_the_fixture_when_llvm_objdump_is_present() {
        let objdump = match Objdump::find() {
            Ok(o) => o,
            Err(e) if std::env::var("MRA_REQUIRE_TOOLCHAINS").is_ok_and(|v| v == "1") => {
                panic!("llvm-objdump is required (MRA_REQUIRE_TOOLCHAINS=1) but not available: {e}")
            }
            Err(e) => {
                println!("SKIPPED: llvm-objdump not available: {e}");
                return;
            }
        };
        let code = CodeObject { bytes: FIXTURE.to_vec(), arch: "gfx90a".into(), compiler: "fixture".into(), log: String::new(), seconds: 0.0 };
        let r = report(&code, &objdump).unwrap();
        assert_eq!(r.matrix, MatrixCounts { mfma: 2, wmma: 0 });
        assert_eq!(r.kernels.len(), 3);
    }
}
