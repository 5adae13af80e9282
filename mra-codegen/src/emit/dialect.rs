//! The two C++ dialects. They differ only where the hardware or toolchain does: thread and
//! block indices, the block barrier, launch bounds, fused multiply-add and vector types.
//! HIP source carries its own small prelude instead of HIP headers, so the same text compiles
//! under hiprtc and under a bare `clang -x hip -nogpuinc -nogpulib`.

use crate::arch::{Arch, MatrixInstr, Vendor};
use crate::dtype::DType;
use crate::fragment::{Fragment, StepOperands};

/// 32-bit registers of one NVIDIA SM (sm_80 to sm_90), which one block's threads share at most.
const REGISTERS_PER_SM: u32 = 65536;
/// The SM's sub-partitions (warp schedulers), each with a quarter of the registers.
const SUB_PARTITIONS: u32 = 4;

/// The most registers a thread may have for one block of `threads` to launch on an NVIDIA SM,
/// in whole multiples of 8 (a warp's registers are allocated in units of 256). The hardware
/// checks a block as if its warps were spread evenly over the sub-partitions, so the warp count
/// rounds up to a multiple of 4 (cuda_occupancy.h): 416 threads (13 warps) get 128, not 152.
fn max_registers_for_one_block(threads: u32) -> u32 {
    let warps_checked = threads.div_ceil(32).div_ceil(SUB_PARTITIONS) * SUB_PARTITIONS;
    REGISTERS_PER_SM / (warps_checked * 32) / 8 * 8
}

pub trait Dialect {
    fn vendor(&self) -> Vendor;
    /// Language name for the header comment.
    fn language(&self) -> &'static str;
    /// Declarations every kernel of this dialect needs before its own code.
    fn prelude(&self) -> &'static str;
    /// Prelude definitions for one matrix instruction (types and the named function the kernel
    /// calls), placed with [`Dialect::prelude`] so a CPU emulator can replace both together.
    fn matrix_prelude(&self, f: &Fragment, dtype: DType) -> String {
        let _ = (f, dtype);
        String::new()
    }
    fn thread_index(&self) -> &'static str;
    fn block_index(&self) -> &'static str;
    /// A statement: block-wide barrier that also makes shared and global writes visible.
    fn barrier(&self) -> &'static str;
    /// Attribute placed between `__global__ void` and the kernel name, if the dialect wants one;
    /// `min_blocks`: `launch_bounds(min_blocks = N)` with N > 1.
    fn launch_bounds(&self, threads: u32, min_blocks: Option<u32>, arch: &Arch) -> Option<String>;
    /// Launch bounds that also promise `min_blocks` resident blocks per multiprocessor, so the
    /// compiler caps registers to what that occupancy leaves (in-place passes hold whole
    /// output tiles in registers and would otherwise take more than a block may have).
    fn launch_bounds_min_blocks(&self, threads: u32, min_blocks: u32, arch: &Arch) -> Option<String> {
        let _ = min_blocks;
        self.launch_bounds(threads, None, arch)
    }
    /// Qualifier for small helpers that must inline.
    fn inline_device(&self) -> &'static str;
    /// Alignment attribute for shared arrays: 32 bytes, which matrix-fragment loads need.
    fn align32(&self) -> &'static str;
    /// A statement the compiler may not move memory accesses across (emits no instruction).
    fn compiler_fence(&self) -> &'static str {
        "asm volatile(\"\" ::: \"memory\");"
    }
    /// Fused multiply-add function for `dtype`.
    fn fma(&self, dtype: DType) -> &'static str;
    /// Name of a `width`-element vector of `dtype`, and the declaration it needs, if any.
    fn vector_type(&self, dtype: DType, width: u32) -> (String, Option<String>);
    /// Definitions a matrix instruction needs (helper function, vector types).
    fn mma_prelude(&self, f: &Fragment, dtype: DType) -> String;
    /// Declaration of `count` accumulators named `name`; `name[i][r]` is register r of the i-th.
    fn mma_acc_decl(&self, f: &Fragment, name: &str, count: &str) -> String;
    /// One instruction: `acc += a · b` on one wave's fragments.
    fn mma_call(&self, f: &Fragment, dtype: DType, acc: &str, a: &str, b: &str) -> String;
    /// `fuse_k(N)`: the helper running `deep` on the A and B fragments of `map.depth`
    /// consecutive k-steps of `base` (arrays `a[s]`, `b[s]`), its registers taken as `map` says,
    /// and its name. Planned only where the arch has such instructions (NVIDIA sm_90).
    fn mma_steps_prelude(&self, base: &Fragment, deep: &Fragment, map: &StepOperands, note: &str) -> (String, String) {
        let _ = (base, deep, map, note);
        unreachable!("fuse_k(N > 1) is planned only for NVIDIA sm_90 f64")
    }
    /// The type of one lane's A (or B) operand: a scalar for a one-register fragment, else a
    /// vector of `regs` elements.
    fn mma_operand_type(&self, f: &Fragment, dtype: DType, regs: u32) -> String {
        let _ = (f, regs);
        dtype.cpp().to_string()
    }
    /// One operand element from a storage element (bf16 bits go in as 16-bit integers).
    fn mma_operand_elem(&self, dtype: DType, expr: &str) -> String {
        let _ = dtype;
        expr.to_string()
    }
    /// An accumulator element (f64 or f32) converted to the storage type.
    fn mma_store_value(&self, dtype: DType, expr: &str) -> String {
        let _ = dtype;
        expr.to_string()
    }
}

pub struct Cuda;
pub struct Hip;

impl Dialect for Cuda {
    fn vendor(&self) -> Vendor {
        Vendor::Nvidia
    }
    fn language(&self) -> &'static str {
        "CUDA C++ (NVRTC)"
    }
    fn prelude(&self) -> &'static str {
        // NVRTC provides the CUDA built-ins (threadIdx, __syncthreads, fma, double2) itself.
        ""
    }
    fn thread_index(&self) -> &'static str {
        "(int)threadIdx.x"
    }
    fn align32(&self) -> &'static str {
        "__align__(32)"
    }
    fn block_index(&self) -> &'static str {
        "(int)blockIdx.x"
    }
    fn barrier(&self) -> &'static str {
        "__syncthreads();"
    }
    fn launch_bounds(&self, threads: u32, min_blocks: Option<u32>, arch: &Arch) -> Option<String> {
        // None without launch_bounds(..) on purpose: given only a thread count, ptxas (CUDA 13)
        // aims at full occupancy, caps the kernel at 32 registers and spills (seen for L2 and
        // L3 at K = 16, sm_90). With a minimum of blocks per SM it caps registers at
        // 65536 / (THREADS * MIN) instead: what the schedule asked for.
        // The number, not THREADS: the kernel's signature is outside the namespace of its
        // constants.
        match min_blocks {
            Some(m) => Some(format!("__launch_bounds__({threads}, {m})")),
            // Above 256 threads the compiler's own ceiling of 255 registers a thread no longer
            // fits one block in the SM's 65536, and ptxas, told nothing, may take more than a
            // block can have: a kernel that compiles and never launches (fused at K = 23 on
            // sm_90: 130 registers at 512 threads). `__maxnreg__` caps the registers at what one
            // block may have (whole multiples of 8, the allocation unit) and nothing else:
            // `__launch_bounds__(THREADS, 1)` did too, but changed ptxas's choices where the cap
            // does not bind (fused-cluster K = 28: local-memory loads, 46% slower). Where the
            // cap does not bind, `__maxnreg__` leaves ptxas's choices alone, so the capped
            // default kernels time as the uncapped ones do.
            None if max_registers_for_one_block(threads) < arch.max_registers_per_thread => Some(format!("__maxnreg__({})", max_registers_for_one_block(threads))),
            None => None,
        }
    }
    fn launch_bounds_min_blocks(&self, threads: u32, min_blocks: u32, _arch: &Arch) -> Option<String> {
        Some(format!("__launch_bounds__({threads}, {min_blocks})"))
    }
    fn inline_device(&self) -> &'static str {
        "__device__ __forceinline__"
    }
    fn fma(&self, dtype: DType) -> &'static str {
        match dtype {
            DType::F64 => "fma",
            DType::F32 => "fmaf",
            DType::F16 | DType::Bf16 => unreachable!("the planner gives {dtype} to matrix-core levels only"),
        }
    }
    fn vector_type(&self, dtype: DType, width: u32) -> (String, Option<String>) {
        (format!("{}{width}", dtype.cpp()), None)
    }
    fn mma_prelude(&self, f: &Fragment, _dtype: DType) -> String {
        match f.instr {
            MatrixInstr::MmaSyncM8n8k4F64 => "// One warp: D(8x8) += A(8x4) B(4x8) in FP64 (PTX mma.sync.aligned.m8n8k4, sm_80+).\n\
                 __device__ __forceinline__ void mma_m8n8k4(double (&d)[2], double a, double b) {\n\
                 \x20   asm(\"mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\"\n\
                 \x20       : \"+d\"(d[0]), \"+d\"(d[1]) : \"d\"(a), \"d\"(b));\n\
                 }"
                .to_string(),
            MatrixInstr::MmaSyncM16n8k4F64 | MatrixInstr::MmaSyncM16n8k8F64 => nvidia_m16n8_prelude(f),
            MatrixInstr::WmmaM8n8k4F64 => "// One warp: wmma f64 8x8x4 fragments (sm_80+), through the __dmma_m8n8k4 built-ins\n\
                 // that nvcuda::wmma calls; NVRTC provides them without headers."
                .to_string(),
            other => unreachable!("{other:?} is not an NVIDIA matrix instruction"),
        }
    }
    fn mma_acc_decl(&self, f: &Fragment, name: &str, count: &str) -> String {
        format!("double {name}[{count}][{}];", f.c.regs)
    }
    fn mma_call(&self, f: &Fragment, _dtype: DType, acc: &str, a: &str, b: &str) -> String {
        format!("mma_m{}n{}k{}({acc}, {a}, {b});", f.m, f.n, f.k)
    }
    fn mma_operand_type(&self, _f: &Fragment, dtype: DType, regs: u32) -> String {
        if regs == 1 { dtype.cpp().to_string() } else { format!("mra_f64x{regs}") }
    }
    fn mma_steps_prelude(&self, base: &Fragment, deep: &Fragment, map: &StepOperands, note: &str) -> (String, String) {
        let name = format!("mma_m{}n{}k{}_steps", deep.m, deep.n, deep.k);
        let d = map.depth;
        let ty = |regs: u32| if regs == 1 { "double".to_string() } else { format!("mra_f64x{regs}") };
        let reg = |op: &str, regs: u32, (s, q): (u32, u32)| if regs == 1 { format!("\"d\"({op}[{s}])") } else { format!("\"d\"({op}[{s}][{q}])") };
        let mut n = 0;
        let mut ops = |regs: u32| {
            let v: Vec<String> = (0..regs).map(|i| format!("%{}", n + i)).collect();
            n += regs;
            format!("{{{}}}", v.join(", "))
        };
        let (d_ops, a_ops, b_ops) = (ops(deep.c.regs), ops(deep.a.regs), ops(deep.b.regs));
        let ins: Vec<String> = map.a.iter().map(|&at| reg("a", base.a.regs, at)).chain(map.b.iter().map(|&at| reg("b", base.b.regs, at))).collect();
        let outs: Vec<String> = (0..deep.c.regs).map(|i| format!("\"+d\"(d[{i}])")).collect();
        let text = format!(
            "{note}: {d} k-steps as one mma.sync.aligned.m{m}n{nn}k{k}, whose A and B\n\
             // registers are the {d} steps' m{m}n{nn}k{bk} fragments side by side (PTX ISA, m{m}n{nn}k{k} .f64\n\
             // fragments): the same products, one instruction and one accumulator update.\n\
             __device__ __forceinline__ void {name}(double (&d)[{cr}], const {at} (&a)[{d}], const {bt} (&b)[{d}]) {{\n\
             \x20   asm(\"mma.sync.aligned.m{m}n{nn}k{k}.row.col.f64.f64.f64.f64 {d_ops}, {a_ops}, {b_ops}, {d_ops};\"\n\
             \x20       : {outs}\n\
             \x20       : {ins});\n\
             }}",
            m = deep.m,
            nn = deep.n,
            k = deep.k,
            bk = base.k,
            cr = deep.c.regs,
            at = ty(base.a.regs),
            bt = ty(base.b.regs),
            outs = outs.join(", "),
            ins = ins.join(", "),
        );
        (text, name)
    }
}

/// The helper for a sm_90 `mma.sync.m16n8k*` f64 instruction: operands of several registers
/// are small structs indexed by constants (they stay in registers after unrolling).
fn nvidia_m16n8_prelude(f: &Fragment) -> String {
    let (ar, br, cr) = (f.a.regs, f.b.regs, f.c.regs);
    let mut s = format!(
        "// One warp: D({m}x{n}) += A({m}x{k}) B({k}x{n}) in FP64 (PTX mma.sync.aligned.m{m}n{n}k{k}, sm_90+;\n\
         // one full-rate DMMA on Hopper, twice the rate of m8n8k4).\n",
        m = f.m,
        n = f.n,
        k = f.k
    );
    for regs in [ar, br] {
        if regs > 1 && !s.contains(&format!("struct mra_f64x{regs} ")) {
            s += &format!(
                "struct mra_f64x{regs} {{\n\
                 \x20   double v[{regs}];\n\
                 \x20   __device__ __forceinline__ double& operator[](int i) {{ return v[i]; }}\n\
                 \x20   __device__ __forceinline__ const double& operator[](int i) const {{ return v[i]; }}\n\
                 }};\n"
            );
        }
    }
    let ty = |regs: u32| if regs == 1 { "double".to_string() } else { format!("const mra_f64x{regs}&") };
    let mut n = 0;
    let mut ops = |regs: u32| {
        let v: Vec<String> = (0..regs).map(|i| format!("%{}", n + i)).collect();
        n += regs;
        format!("{{{}}}", v.join(", "))
    };
    let (d_ops, a_ops, b_ops) = (ops(cr), ops(ar), ops(br));
    let elems = |name: &str, regs: u32, c: &str| -> Vec<String> {
        (0..regs).map(|i| if regs == 1 { format!("\"{c}\"({name})") } else { format!("\"{c}\"({name}[{i}])") }).collect()
    };
    s += &format!(
        "__device__ __forceinline__ void mma_m{m}n{nn}k{k}(double (&d)[{cr}], {at} a, {bt} b) {{\n\
         \x20   asm(\"mma.sync.aligned.m{m}n{nn}k{k}.row.col.f64.f64.f64.f64 {d_ops}, {a_ops}, {b_ops}, {d_ops};\"\n\
         \x20       : {outs}\n\
         \x20       : {ins});\n\
         }}",
        m = f.m,
        nn = f.n,
        k = f.k,
        at = ty(ar),
        bt = ty(br),
        outs = elems("d", cr, "+d").join(", "),
        ins = [elems("a", ar, "d"), elems("b", br, "d")].concat().join(", "),
    );
    s
}

impl Dialect for Hip {
    fn vendor(&self) -> Vendor {
        Vendor::Amd
    }
    fn language(&self) -> &'static str {
        "HIP C++ (hiprtc or clang -x hip -nogpuinc)"
    }
    fn prelude(&self) -> &'static str {
        r#"// Self-contained HIP prelude: no HIP headers, so this text compiles under hiprtc and
// under a bare `clang -x hip -nogpuinc -nogpulib` alike. hiprtc predefines these macros.
#ifndef __global__
#define __global__ __attribute__((global))
#endif
#ifndef __device__
#define __device__ __attribute__((device))
#endif
#ifndef __shared__
#define __shared__ __attribute__((shared))
#endif

// The kernel body reaches the hardware only through the mra_* functions of this prelude
// (ids, barrier, matrix instructions), so an emulator can swap the prelude alone.
#ifndef MRA_IDS_DEFINED
#define MRA_IDS_DEFINED
__device__ __attribute__((always_inline)) inline int mra_thread_id() {
    return (int)__builtin_amdgcn_workitem_id_x();
}
__device__ __attribute__((always_inline)) inline int mra_block_id() {
    return (int)__builtin_amdgcn_workgroup_id_x();
}
#endif

// Block barrier: workgroup-scope release/acquire fences around s_barrier make shared (LDS)
// and global writes of every thread in the block visible to all of them afterwards.
// Guarded: several generated kernels may be included into one translation unit.
#ifndef MRA_SYNC_BLOCK_DEFINED
#define MRA_SYNC_BLOCK_DEFINED
__device__ __attribute__((always_inline)) inline void mra_sync_block() {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
#endif
"#
    }
    fn matrix_prelude(&self, f: &Fragment, dtype: DType) -> String {
        let ty = matrix_types(f, dtype);
        let (name, params) = (matrix_function(f, dtype), matrix_params(f, dtype));
        let (acc_t, builtin) = match f.instr {
            MatrixInstr::MfmaF64_16x16x4 => ("mra_double4", "__builtin_amdgcn_mfma_f64_16x16x4f64(a, b, acc, 0, 0, 0)".to_string()),
            MatrixInstr::WmmaF32_16x16x16Gfx11 => ("mra_float8", format!("__builtin_amdgcn_wmma_f32_16x16x16_{dtype}_w32(a, b, acc)")),
            MatrixInstr::WmmaF32_16x16x16Gfx12 => ("mra_float8", format!("__builtin_amdgcn_wmma_f32_16x16x16_{dtype}_w32_gfx12(a, b, acc)")),
            other => unreachable!("{other:?} is not an AMD matrix instruction"),
        };
        // Guarded like mra_sync_block: several kernels may share a translation unit.
        let guard = format!("{}_DEFINED", name.to_uppercase());
        format!(
            "\n// {}: one wave computes acc += a * b; each lane passes its own registers.\n\
             #ifndef {guard}\n#define {guard}\n{ty}\n\
             __device__ __attribute__((always_inline)) inline {acc_t} {name}({params}) {{\n    return {builtin};\n}}\n#endif\n",
            f.instr.name()
        )
    }
    fn thread_index(&self) -> &'static str {
        "mra_thread_id()"
    }
    fn align32(&self) -> &'static str {
        "__attribute__((aligned(32)))"
    }
    fn block_index(&self) -> &'static str {
        "mra_block_id()"
    }
    fn barrier(&self) -> &'static str {
        "mra_sync_block();"
    }
    fn launch_bounds(&self, threads: u32, min_blocks: Option<u32>, arch: &Arch) -> Option<String> {
        // Without it the compiler budgets registers for 1024-thread workgroups.
        let flat = format!("amdgpu_flat_work_group_size(1, {threads})");
        Some(match min_blocks {
            // N workgroups per CU are N * waves-per-workgroup waves over the CU's 4 SIMDs (EUs):
            // what hip-clang's __launch_bounds__(THREADS, N) asks of the compiler too.
            Some(m) => {
                let waves_per_eu = (m * threads.div_ceil(arch.wave_size)).div_ceil(4).max(1);
                format!("__attribute__(({flat}, amdgpu_waves_per_eu({waves_per_eu})))")
            }
            None => format!("__attribute__(({flat}))"),
        })
    }
    fn inline_device(&self) -> &'static str {
        "__device__ __attribute__((always_inline)) inline"
    }
    fn fma(&self, dtype: DType) -> &'static str {
        match dtype {
            DType::F64 => "__builtin_fma",
            DType::F32 => "__builtin_fmaf",
            DType::F16 | DType::Bf16 => unreachable!("the planner gives {dtype} to matrix-core levels only"),
        }
    }
    fn vector_type(&self, dtype: DType, width: u32) -> (String, Option<String>) {
        let name = format!("mra_{}{width}", dtype.name());
        let decl = format!("typedef {} {name} __attribute__((ext_vector_type({width})));", dtype.cpp());
        (name, Some(decl))
    }
    fn mma_prelude(&self, f: &Fragment, dtype: DType) -> String {
        let mut s = format!("// The matrix instruction is {}(...) of the prelude ({}).", matrix_function(f, dtype), f.instr.name());
        if dtype == DType::Bf16 && f.instr != MatrixInstr::MfmaF64_16x16x4 {
            s += "\n// f32 -> bf16 bits, rounding to nearest even.\n\
                  __device__ __attribute__((always_inline)) inline unsigned short mra_f32_to_bf16(float x) {\n\
                  \x20   const unsigned u = __builtin_bit_cast(unsigned, x);\n\
                  \x20   return (unsigned short)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);\n\
                  }";
        }
        s
    }
    fn mma_acc_decl(&self, f: &Fragment, name: &str, count: &str) -> String {
        match f.instr {
            MatrixInstr::MfmaF64_16x16x4 => format!("mra_double4 {name}[{count}];"),
            _ => format!("mra_float8 {name}[{count}];"),
        }
    }
    fn mma_call(&self, f: &Fragment, dtype: DType, acc: &str, a: &str, b: &str) -> String {
        format!("{acc} = {}({a}, {b}, {acc});", matrix_function(f, dtype))
    }
    fn mma_operand_type(&self, _f: &Fragment, dtype: DType, regs: u32) -> String {
        if regs == 1 { dtype.cpp().to_string() } else { format!("mra_{dtype}x{regs}") }
    }
    fn mma_operand_elem(&self, dtype: DType, expr: &str) -> String {
        if dtype == DType::Bf16 { format!("(short){expr}") } else { expr.to_string() }
    }
    fn mma_store_value(&self, dtype: DType, expr: &str) -> String {
        match dtype {
            DType::F16 => format!("(_Float16){expr}"),
            DType::Bf16 => format!("mra_f32_to_bf16({expr})"),
            _ => expr.to_string(),
        }
    }
}

/// The dialect for a vendor.
pub fn for_vendor(vendor: Vendor) -> &'static dyn Dialect {
    match vendor {
        Vendor::Nvidia => &Cuda,
        Vendor::Amd => &Hip,
    }
}

/// The name of the prelude function that runs one AMD matrix instruction for a wave:
/// `mra_mfma_f64_16x16x4`, `mra_wmma_f32_16x16x16_f16_gfx11`, ...
pub fn matrix_function(f: &Fragment, dtype: DType) -> String {
    match f.instr {
        MatrixInstr::MfmaF64_16x16x4 => "mra_mfma_f64_16x16x4".to_string(),
        MatrixInstr::WmmaF32_16x16x16Gfx11 => format!("mra_wmma_f32_16x16x16_{dtype}_gfx11"),
        MatrixInstr::WmmaF32_16x16x16Gfx12 => format!("mra_wmma_f32_16x16x16_{dtype}_gfx12"),
        other => unreachable!("{other:?} is not an AMD matrix instruction"),
    }
}

/// The parameter list of [`matrix_function`]: one lane's A and B registers and accumulator.
pub fn matrix_params(f: &Fragment, dtype: DType) -> String {
    match f.instr {
        MatrixInstr::MfmaF64_16x16x4 => "double a, double b, mra_double4 acc".to_string(),
        _ => format!("mra_{dtype}x{r} a, mra_{dtype}x{r} b, mra_float8 acc", r = f.a.regs),
    }
}

/// The vector types an AMD matrix instruction's operands use (the same on the GPU and in the
/// CPU emulator's prelude: clang's `ext_vector_type` exists for both).
pub fn matrix_types(f: &Fragment, dtype: DType) -> String {
    match f.instr {
        MatrixInstr::MfmaF64_16x16x4 => "typedef double mra_double4 __attribute__((ext_vector_type(4)));".to_string(),
        _ => {
            let regs = f.a.regs;
            format!(
                "typedef {} mra_{dtype}x{regs} __attribute__((ext_vector_type({regs})));\n\
                 typedef float mra_float8 __attribute__((ext_vector_type(8)));",
                wmma_elem(dtype)
            )
        }
    }
}

/// The element type RDNA's WMMA built-ins take for `dtype` (bf16 as 16-bit integers).
fn wmma_elem(dtype: DType) -> &'static str {
    match dtype {
        DType::Bf16 => "short",
        _ => "_Float16",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected caps worked by hand from cuda_occupancy.h's per-block register check (warps
    /// rounded up to the 4 sub-partitions, 256-register allocation per warp, 65536 per block),
    /// not from the function under test.
    #[test]
    fn the_register_cap_lets_one_block_launch() {
        let sm90 = crate::arch::find("sm_90").unwrap();
        // 8 warps: 65536 / 256 = 256 a thread, above the ISA's 255: no cap needed.
        assert_eq!(Cuda.launch_bounds(256, None, sm90), None);
        assert_eq!(Cuda.launch_bounds(128, None, sm90), None);
        // 9 and 12 warps are checked as 12: 65536 / 384 = 170, down to 168.
        assert_eq!(Cuda.launch_bounds(288, None, sm90).as_deref(), Some("__maxnreg__(168)"));
        assert_eq!(Cuda.launch_bounds(384, None, sm90).as_deref(), Some("__maxnreg__(168)"));
        // 13 warps (fused-pipe K = 20) are checked as 16: 65536 / 512 = 128, not 65536 / 416 = 157.
        assert_eq!(Cuda.launch_bounds(416, None, sm90).as_deref(), Some("__maxnreg__(128)"));
        assert_eq!(Cuda.launch_bounds(512, None, sm90).as_deref(), Some("__maxnreg__(128)"));
        assert_eq!(Cuda.launch_bounds(1024, None, sm90).as_deref(), Some("__maxnreg__(64)"));
        // A minimum of blocks named by the schedule is the launch bound, as before.
        assert_eq!(Cuda.launch_bounds(512, Some(1), sm90).as_deref(), Some("__launch_bounds__(512, 1)"));
        assert_eq!(Cuda.launch_bounds(256, Some(2), sm90).as_deref(), Some("__launch_bounds__(256, 2)"));
    }
}
