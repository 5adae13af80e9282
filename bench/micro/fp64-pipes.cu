// Do FP64 DMMA (mma.sync m16n8k4 f64) and DFMA share one pipe on sm_90? (NOTES.md run 69)
// Build and run on the GPU: nvcc -O3 -arch=sm_90 -o fp64-pipes bench/micro/fp64-pipes.cu && ./fp64-pipes
// Half the warps of every block run DMMA, half DFMA, each kind on all four sub-partitions
// (warp w issues on sub-partition w % 4); the DFMA count is calibrated so that each kind
// alone takes the same time. Together: about that time if the pipes are separate, twice it
// if they are one.
#include <cstdio>
#include <cuda_runtime.h>
__device__ __forceinline__ void dmma(double (&d)[4], double a0, double a1, double b0) {
  asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
               : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3]) : "d"(a0), "d"(a1), "d"(b0));
}
// mode bit0: warps 0-3, 8-11 run DMMA; bit1: warps 4-7, 12-15 run DFMA
__global__ void __launch_bounds__(512) k(int mode, int im, int jf, double x, double *out) {
  int warp = threadIdx.x / 32;
  double acc[8][4];
  for (int c = 0; c < 8; ++c) for (int e = 0; e < 4; ++e) acc[c][e] = x * (c + e + threadIdx.x);
  if (((warp >> 2) & 1) == 0) {  // warp w issues on sub-partition w % 4: both kinds on every one
    if (mode & 1) {
      double a0 = x + threadIdx.x, a1 = x - threadIdx.x, b0 = x * 0.5;
      for (int i = 0; i < im; ++i) {
#pragma unroll
        for (int c = 0; c < 8; ++c) dmma(acc[c], a0, a1, b0);
      }
    }
  } else {
    if (mode & 2) {
      double y = x * 1e-3, z = 1.0 - 1e-9;
      for (int i = 0; i < jf; ++i) {
#pragma unroll
        for (int c = 0; c < 8; ++c)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[c][e] = fma(acc[c][e], z, y);
      }
    }
  }
  double s = 0; for (int c = 0; c < 8; ++c) for (int e = 0; e < 4; ++e) s += acc[c][e];
  if (s == 12345.678) out[threadIdx.x] = s;
}
int main() {
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  double *out; cudaMalloc(&out, 4096);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  int grid = sms * 2; // 2 blocks of 16 warps per SM: 16 DMMA warps + 16 DFMA warps
  auto time = [&](int mode, int im, int jf) {
    float best = 1e30f;
    for (int r = 0; r < 7; ++r) {
      cudaEventRecord(e0); k<<<grid, 512>>>(mode, im, jf, 1.0001, out); cudaEventRecord(e1);
      cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms, e0, e1); if (r && ms < best) best = ms;
    }
    return best;
  };
  int im = 4000;
  float tm = time(1, im, 0);
  double dmma_flops = 2.0 * 16 * 8 * 4 * 8.0 * im * (grid * 8.0); // 8 DMMA warps per block
  printf("DMMA alone (16 warps/SM): %.3f ms, %.1f TFLOP/s\n", tm, dmma_flops / tm / 1e9);
  // calibrate DFMA count to the same time
  int jf = 4000; float tf = time(2, 0, jf);
  jf = (int)(jf * tm / tf); tf = time(2, 0, jf);
  double dfma_flops = 2.0 * 32 * 32.0 * jf * (grid * 8.0);
  printf("DFMA alone (16 warps/SM): %.3f ms, %.1f TFLOP/s (jf %d)\n", tf, dfma_flops / tf / 1e9, jf);
  float tb = time(3, im, jf);
  printf("both, in different warps: %.3f ms (alone %.3f / %.3f): %.2fx of max, %.2fx of sum\n",
         tb, tm, tf, tb / (tm > tf ? tm : tf), tb / (tm + tf));
  // half the DFMA work: is the combined time max or sum?
  float tb2 = time(3, im, jf / 2);
  printf("DMMA + half DFMA: %.3f ms (%.2fx of DMMA alone; sum model %.2f)\n", tb2, tb2 / tm, 1.5);
  cudaError_t err = cudaGetLastError(); printf("%s\n", cudaGetErrorString(err));
  return 0;
}
