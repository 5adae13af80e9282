//! The two C++ dialects. They differ only where the hardware or toolchain does: thread and
//! block indices, the block barrier, launch bounds, fused multiply-add and vector types.
//! HIP source carries its own small prelude instead of HIP headers, so the same text compiles
//! under hiprtc and under a bare `clang -x hip -nogpuinc -nogpulib`.

use crate::arch::Vendor;
use crate::dtype::DType;

pub trait Dialect {
    fn vendor(&self) -> Vendor;
    /// Language name for the header comment.
    fn language(&self) -> &'static str;
    /// Declarations every kernel of this dialect needs before its own code.
    fn prelude(&self) -> &'static str;
    fn thread_index(&self) -> &'static str;
    fn block_index(&self) -> &'static str;
    /// A statement: block-wide barrier that also makes shared and global writes visible.
    fn barrier(&self) -> &'static str;
    /// Attribute placed between `__global__ void` and the kernel name, if the dialect wants one.
    fn launch_bounds(&self, threads: u32) -> Option<String>;
    /// Qualifier for small helpers that must inline.
    fn inline_device(&self) -> &'static str;
    /// A statement the compiler may not move memory accesses across (emits no instruction).
    fn compiler_fence(&self) -> &'static str {
        "asm volatile(\"\" ::: \"memory\");"
    }
    /// Fused multiply-add function for `dtype`.
    fn fma(&self, dtype: DType) -> &'static str;
    /// Name of a `width`-element vector of `dtype`, and the declaration it needs, if any.
    fn vector_type(&self, dtype: DType, width: u32) -> (String, Option<String>);
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
    fn block_index(&self) -> &'static str {
        "(int)blockIdx.x"
    }
    fn barrier(&self) -> &'static str {
        "__syncthreads();"
    }
    fn launch_bounds(&self, _threads: u32) -> Option<String> {
        // None on purpose: given only a thread count, ptxas (CUDA 13) aims at full occupancy,
        // caps the kernel at 32 registers and spills (seen for L2 and L3 at K = 16, sm_90).
        None
    }
    fn inline_device(&self) -> &'static str {
        "__device__ __forceinline__"
    }
    fn fma(&self, dtype: DType) -> &'static str {
        match dtype {
            DType::F64 => "fma",
            DType::F32 => "fmaf",
        }
    }
    fn vector_type(&self, dtype: DType, width: u32) -> (String, Option<String>) {
        (format!("{}{width}", dtype.cpp()), None)
    }
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

// Block barrier: workgroup-scope release/acquire fences around s_barrier make shared (LDS)
// and global writes of every thread in the block visible to all of them afterwards.
__device__ __attribute__((always_inline)) inline void mra_sync_block() {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
"#
    }
    fn thread_index(&self) -> &'static str {
        "(int)__builtin_amdgcn_workitem_id_x()"
    }
    fn block_index(&self) -> &'static str {
        "(int)__builtin_amdgcn_workgroup_id_x()"
    }
    fn barrier(&self) -> &'static str {
        "mra_sync_block();"
    }
    fn launch_bounds(&self, threads: u32) -> Option<String> {
        // Without it the compiler budgets registers for 1024-thread workgroups.
        Some(format!("__attribute__((amdgpu_flat_work_group_size(1, {threads})))"))
    }
    fn inline_device(&self) -> &'static str {
        "__device__ __attribute__((always_inline)) inline"
    }
    fn fma(&self, dtype: DType) -> &'static str {
        match dtype {
            DType::F64 => "__builtin_fma",
            DType::F32 => "__builtin_fmaf",
        }
    }
    fn vector_type(&self, dtype: DType, width: u32) -> (String, Option<String>) {
        let name = format!("mra_{}{width}", dtype.cpp());
        let decl = format!("typedef {} {name} __attribute__((ext_vector_type({width})));", dtype.cpp());
        (name, Some(decl))
    }
}

/// The dialect for a vendor.
pub fn for_vendor(vendor: Vendor) -> &'static dyn Dialect {
    match vendor {
        Vendor::Nvidia => &Cuda,
        Vendor::Amd => &Hip,
    }
}
