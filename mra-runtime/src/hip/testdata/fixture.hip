// Test fixture for hip/report.rs: two small kernels whose resource numbers are known.
// Regenerate fixture_gfx90a.co with:
//   clang++-19 -x hip --offload-arch=gfx90a --cuda-device-only -nogpulib -nogpuinc -O3 \
//     --no-gpu-bundle-output -o fixture_gfx90a.co fixture.hip
// and check the expectations in report.rs against `llvm-readobj-19 --notes fixture_gfx90a.co`.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))

// 512 bytes of LDS, no spills.
extern "C" __global__ void __attribute__((amdgpu_flat_work_group_size(1, 64))) fixture_lds(const double* a, double* c) {
    __shared__ double s[64];
    int t = (int)__builtin_amdgcn_workitem_id_x();
    s[t] = a[t];
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    c[t] = s[63 - t];
}

// Too few VGPRs allowed for 48 live doubles: spills to scratch.
extern "C" __global__ void __attribute__((amdgpu_flat_work_group_size(1, 256), amdgpu_num_vgpr(32))) fixture_spill(const double* a, double* c) {
    int t = (int)__builtin_amdgcn_workitem_id_x();
    double acc[48];
    #pragma unroll
    for (int j = 0; j < 48; ++j) acc[j] = a[j * 256 + t];
    #pragma unroll
    for (int k = 0; k < 4; ++k) {
        #pragma unroll
        for (int j = 0; j < 48; ++j) acc[j] = __builtin_fma(acc[(j + k + 1) % 48], a[j], acc[j]);
    }
    #pragma unroll
    for (int j = 0; j < 48; ++j) c[j * 256 + t] = acc[j];
}

// Two matrix-core instructions (v_mfma_f64_16x16x4f64), for the disassembly count.
typedef double fixture_double4 __attribute__((ext_vector_type(4)));
extern "C" __global__ void __attribute__((amdgpu_flat_work_group_size(1, 64))) fixture_mfma(const double* a, double* c) {
    int t = (int)__builtin_amdgcn_workitem_id_x();
    fixture_double4 acc = {0.0, 0.0, 0.0, 0.0};
    acc = __builtin_amdgcn_mfma_f64_16x16x4f64(a[t], a[t + 64], acc, 0, 0, 0);
    acc = __builtin_amdgcn_mfma_f64_16x16x4f64(a[t + 128], a[t + 192], acc, 0, 0, 0);
    c[t] = acc.x + acc.y + acc.z + acc.w;
}
