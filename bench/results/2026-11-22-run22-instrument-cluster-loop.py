# Instruments the batch loop of a generated fused-cluster kernel: the time of every top-level
# statement of the loop body (thread 0 of each warp, clock64), summed over the tensors.
import sys, re
src = open(sys.argv[1]).read(); smem = int(sys.argv[2]); K = int(sys.argv[3]); entry = sys.argv[4]; threads = int(sys.argv[5]); grid = int(sys.argv[6])
lines = src.split('\n')
i = next(n for n, l in enumerate(lines) if l.startswith('    for (int n = first; n < nfuncs; n += stride) {'))
out = lines[:i] + ['    long long acc_t[40] = {0}; int iters = 0; long long t_prev, t_now;', lines[i], '        t_prev = clock64(); iters++;']
labels = []
depth = 0
j = i + 1
while True:
    l = lines[j]
    if l == '    }' and depth == 0:
        break
    out.append(l)
    depth += l.count('{') - l.count('}')
    if depth == 0 and l.startswith('        ') and not l.strip().startswith('//') and (l.rstrip().endswith(';') or l.strip() == '}' or '; ' in l):
        k = len(labels)
        labels.append(re.sub(r'\s+', ' ', l.strip())[:60].replace('"', "'"))
        out.append(f'        t_now = clock64(); acc_t[{k}] += t_now - t_prev; t_prev = t_now;')
    j += 1
n = len(labels)
out.append(lines[j])
out.append(f'    if (threadIdx.x % 32 == 0) {{ for (int p = 0; p < {n}; ++p) prof[(blockIdx.x * {threads // 32} + threadIdx.x / 32) * 41 + p] = acc_t[p]; prof[(blockIdx.x * {threads // 32} + threadIdx.x / 32) * 41 + 40] = iters; }}')
out += lines[j + 1:]
s = '\n'.join(out)
s = s.replace('double* workspace, int nfuncs, int nblocks) {', 'double* workspace, int nfuncs, int nblocks, long long* prof) {')
s = '#include <cstdio>\n#include <vector>\n#include <cuda_runtime.h>\n' + s
names = ', '.join(f'"{x}"' for x in labels)
W = threads // 32
s += f'''
int main() {{
    const int K = {K}, N = 2048, GRID = {grid}, THR = {threads}; const size_t K3 = (size_t)K*K*K;
    double *a, *b, *c; long long* prof;
    cudaMalloc(&a, N*K3*8); cudaMalloc(&c, N*K3*8); cudaMalloc(&b, K*K*8); cudaMalloc(&prof, GRID*{W}*41*8);
    cudaMemset(a, 0, N*K3*8); cudaMemset(b, 0, K*K*8);
    int smem = {smem};
    cudaFuncSetAttribute({entry}, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    for (int r = 0; r < 5; ++r) {entry}<<<GRID, THR, smem>>>(a, b, c, nullptr, N, GRID, prof);
    cudaEventRecord(e0);
    for (int r = 0; r < 20; ++r) {entry}<<<GRID, THR, smem>>>(a, b, c, nullptr, N, GRID, prof);
    cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1);
    printf("err=%s  %.1f us per launch (single stream)\\n", cudaGetErrorString(cudaGetLastError()), ms * 1000 / 20);
    std::vector<long long> h(GRID*{W}*41); cudaMemcpy(h.data(), prof, h.size()*8, cudaMemcpyDeviceToHost);
    const char* names[{n}] = {{{names}}};
    double tot = 0, sum[{n}] = {{0}}; long long its = 0;
    for (int w = 0; w < GRID*{W}; ++w) {{ for (int p = 0; p < {n}; ++p) sum[p] += h[w*41+p]; its += h[w*41+40]; }}
    for (int p = 0; p < {n}; ++p) tot += sum[p];
    for (int p = 0; p < {n}; ++p) printf("%8.0f cycles %5.1f%%  %s\\n", sum[p] / its, 100 * sum[p] / tot, names[p]);
    printf("total %8.0f cycles per tensor per warp, %lld warp-iterations\\n", tot / its, its);
}}
'''
open(sys.argv[7], 'w').write(s)
