// Run 83 debug: how many tiles and store statements the generated stack(2) pass functions execute.
#include <cstdio>
#include <cuda_runtime.h>
#include "base_k10.cu"
#include "dbg_k10.cu"
int main() {
    const int N = 2048, M = 512, K3 = 1000;
    double *a, *b, *c;
    cudaMalloc(&a, N * K3 * 8); cudaMalloc(&b, 100 * 8); cudaMalloc(&c, N * K3 * 8);
    cudaMemset(a, 0, N * K3 * 8); cudaMemset(b, 0, 800);
    unsigned long long z[4] = {0, 0, 0, 0};
    cudaMemcpyToSymbol(mra_dbg, z, sizeof z);
    mra_fused_pipe_dbg_k10_f64<<<512, 128>>>(a, b, c, nullptr, N, M);
    cudaError_t e = cudaDeviceSynchronize();
    cudaMemcpyFromSymbol(z, mra_dbg, sizeof z);
    printf("%s: tiles %llu (expected 1024 groups x 3 passes x 13 = 39936), store statements %llu (expected 1024 x 2 x 13 x 4 = 106496)\n", cudaGetErrorString(e), z[0], z[1]);
    return 0;
}
