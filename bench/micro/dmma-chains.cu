// How many independent DMMA chains does one sub-partition need to keep the FP64 tensor pipe
// busy on sm_90? (NOTES.md run 105.) One block per SM (forced by 200 KB of dynamic shared
// memory), W warps per block (W / 4 per sub-partition), each warp C independent accumulator
// chains of mma.sync.aligned.m16n8k{4,8,16}.f64, ITER rounds of one instruction per chain.
// Prints TFLOP/s per (shape, W, C) and the latency of one dependent instruction (W = 1, C = 1).
// Build and run on the GPU: nvcc -O3 -arch=sm_90 -o dmma-chains bench/micro/dmma-chains.cu && ./dmma-chains
#include <cstdio>
#include <cuda_runtime.h>
template <int KD> struct Mma;
template <> struct Mma<4> {
  static __device__ __forceinline__ void run(double (&d)[4], const double* a, const double* b) {
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3]) : "d"(a[0]), "d"(a[1]), "d"(b[0]));
  }
};
template <> struct Mma<8> {
  static __device__ __forceinline__ void run(double (&d)[4], const double* a, const double* b) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3]) : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
  }
};
template <> struct Mma<16> {
  static __device__ __forceinline__ void run(double (&d)[4], const double* a, const double* b) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
  }
};
template <int KD, int C>
__global__ void chains(int iters, double x, double* out) {
  double a[8], b[4], acc[C][4];
  for (int i = 0; i < 8; ++i) a[i] = x + i * threadIdx.x;
  for (int i = 0; i < 4; ++i) b[i] = x - i;
  for (int c = 0; c < C; ++c) for (int e = 0; e < 4; ++e) acc[c][e] = x * (c + e);
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int c = 0; c < C; ++c) Mma<KD>::run(acc[c], a, b);
  }
  double s = 0; for (int c = 0; c < C; ++c) for (int e = 0; e < 4; ++e) s += acc[c][e];
  if (s == 12345.678) out[threadIdx.x] = s;
}
template <int KD, int C>
static void measure(int sms, int warps, double* out, cudaEvent_t e0, cudaEvent_t e1) {
  const int smem = 200 * 1024;
  cudaFuncSetAttribute(chains<KD, C>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  const int iters = 20000 / C * 4;
  float best = 1e30f;
  for (int r = 0; r < 5; ++r) {
    cudaEventRecord(e0); chains<KD, C><<<sms, 32 * warps, smem>>>(iters, 1.0001, out); cudaEventRecord(e1);
    cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms, e0, e1); if (r && ms < best) best = ms;
  }
  // A configuration whose block needs more registers than an SM has does not launch: say so
  // (the first version printed the empty timings of such launches as absurd rates).
  if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) {
    printf("m16n8k%-2d warps/SM %2d chains %2d: cannot launch (%s)\n", KD, warps, C, cudaGetErrorString(err));
    return;
  }
  const double flops = 2.0 * 16 * 8 * KD * (double)iters * C * warps * sms;
  const double per_instr_cycles = best * 1e-3 * 1.98e9 / ((double)iters);  // one warp's dependent step, at 1980 MHz
  printf("m16n8k%-2d warps/SM %2d chains %2d: %6.1f TFLOP/s   (%.0f cycles per round of C instructions at 1.98 GHz)\n",
         KD, warps, C, flops / (best * 1e-3) / 1e12, per_instr_cycles);
}
template <int KD>
static void shape(int sms, double* out, cudaEvent_t e0, cudaEvent_t e1) {
  for (int w : {1, 4, 8, 12, 16, 32}) {
    measure<KD, 1>(sms, w, out, e0, e1);
    measure<KD, 2>(sms, w, out, e0, e1);
    measure<KD, 4>(sms, w, out, e0, e1);
    measure<KD, 8>(sms, w, out, e0, e1);
  }
}
int main() {
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceProp p; cudaGetDeviceProperties(&p, 0);
  printf("%s, %d SMs\n", p.name, sms);
  double* out; cudaMalloc(&out, 4096);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  shape<8>(sms, out, e0, e1);
  shape<4>(sms, out, e0, e1);
  shape<16>(sms, out, e0, e1);
  return 0;
}
