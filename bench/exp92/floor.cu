// Run 92: a lower bound on any sm_90 FP64-tensor implementation of the transform at K, in the
// seed's harness. One kernel moves each tensor as the copy level does (N tensors of K^3 doubles,
// in -> out, 16-byte accesses) and also issues, per tensor, the fewest m16n8k4 f64 DMMAs a
// tensorized transform needs at K (3 passes, padded to whole fragments in the mapping that pads
// least). Its operands are random doubles from the tensor, held in registers: no shared memory,
// no barriers, no dependency of the DMMAs on the data's arrival. A real kernel does at least
// this work plus more, so its time per task is at least what this measures, power cap included.
//
// Modes: copy (no DMMA), dmma (no memory traffic), both (each warp interleaves the two), split
// (warp-specialized: half the warps copy, half compute), pair (the copy level's own kernel beside a
// DMMA-only launch on a second stream of each pair). Harness as mra-bench's: -M blocks per
// launch at most, tasks round-robin over streams sharing one A and one C, events from a start on
// stream 0 to the joined end, warm-up, median of reps. Output: one line per mode.
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

__device__ __forceinline__ void dmma(double (&d)[4], double a0, double a1, double b0) {
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a0), "d"(a1), "d"(b0));
}

// `count` DMMAs on CHAINS independent accumulator chains, operands rotating over 4 registers.
template <int CHAINS>
__device__ __forceinline__ void dmma_run(double (&acc)[CHAINS][4], const double (&r)[4], int count) {
    int i = 0;
    for (; i + 8 <= count; i += 8) {
#pragma unroll
        for (int u = 0; u < 8; ++u) dmma(acc[u % CHAINS], r[u & 3], r[(u + 1) & 3], r[(u + 2) & 3]);
    }
    // the rest on chain 0: a register index known at compile time (a runtime one, acc[i & 3],
    // put acc in local memory and made call 2's kernels slower the more threads they had)
    for (; i < count; ++i) dmma(acc[0], r[1], r[2], r[3]);
}

// DFMA instead (call 7): `count` warp-wide fma.rn.f64 (32 FMAs each) on CHAINS x 4 independent
// accumulators; the same register operands. A transform by DFMA needs no padding: 3 K^4 FMAs per tensor.
template <int CHAINS>
__device__ __forceinline__ void dfma_run(double (&acc)[CHAINS][4], const double (&r)[4], int count) {
    int i = 0;
    for (; i + 8 <= count; i += 8) {
#pragma unroll
        for (int u = 0; u < 8; ++u)
            asm volatile("fma.rn.f64 %0, %1, %2, %0;" : "+d"(acc[(u / 4) % CHAINS][u & 3]) : "d"(r[u & 3]), "d"(r[(u + 1) & 3]));
    }
    for (; i < count; ++i) asm volatile("fma.rn.f64 %0, %1, %2, %0;" : "+d"(acc[0][0]) : "d"(r[1]), "d"(r[2]));
}

template <int OP, int CHAINS>
__device__ __forceinline__ void work_run(double (&acc)[CHAINS][4], const double (&r)[4], int count) {
    if (OP == 0) dmma_run(acc, r, count);
    else dfma_run(acc, r, count);
}

static double now_s() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

enum Mode { COPY = 0, DMMA = 1, BOTH = 2, SPLIT = 3, PAIR = 4 };

// `pair` (run 92, call 6): the copy level's kernel itself (128 threads, few registers: as many
// blocks per SM as the copy level gets), launched beside a DMMA-only launch on a second stream
// of each pair, so the copy is not held to floor_kernel's 92-116 registers.
__global__ void __launch_bounds__(128) copy_level(const double* __restrict__ in, double* __restrict__ out, long long total) {
    const long long stride = (long long)gridDim.x * 128;
    const long long nvec = total / 2;
    const double2* a = reinterpret_cast<const double2*>(in);
    double2* c = reinterpret_cast<double2*>(out);
#pragma unroll 4
    for (long long v = (long long)blockIdx.x * 128 + threadIdx.x; v < nvec; v += stride) c[v] = a[v];
}

// The copy is the copy level's (mra-bench --emit-src -l copy): one flat grid-stride loop over the
// launch's N * K^3 values in 16-byte pieces, not tensor by tensor, so a tensor's size does not
// set its latency. The DMMAs of the launch (N * dmma_per_tensor) are spread evenly over the
// computing warps; in `both` each warp interleaves its share with its copy iterations.
template <int OP, int CHAINS>
__global__ void floor_kernel(const double* __restrict__ in, double* __restrict__ out, long long total, long long total_dmma, int mode, int sink) {
    const int warp = threadIdx.x / 32, warps = blockDim.x / 32;
    const bool split = mode == SPLIT;
    const int cwarps = split ? warps / 2 : warps;                 // copying warps per block
    const int dwarps = split ? warps - warps / 2 : warps;         // computing warps per block
    const bool copies = mode == COPY || mode == BOTH || (split && warp < cwarps);
    const bool computes = mode == DMMA || mode == BOTH || (split && warp >= cwarps);
    double acc[CHAINS][4] = {};
    double r[4];  // random operands from the first 8 KB of A (cached: no extra DRAM or L2 traffic)
#pragma unroll
    for (int u = 0; u < 4; ++u) r[u] = __ldg(in + ((threadIdx.x * 4 + u) & 1023));
    // this warp's DMMAs
    long long dw = computes ? (long long)gridDim.x * dwarps : 1;
    long long dindex = (long long)blockIdx.x * dwarps + (split ? warp - cwarps : warp);
    long long mine = computes ? total_dmma / dw + (dindex < total_dmma % dw ? 1 : 0) : 0;
    const long long nvec = total / 2;
    const double2* a = reinterpret_cast<const double2*>(in);
    double2* c = reinterpret_cast<double2*>(out);
    if (copies) {
        const long long threads = (long long)gridDim.x * cwarps * 32;
        const long long first = (long long)blockIdx.x * cwarps * 32 + (threadIdx.x % (cwarps * 32));
        long long iters = (nvec - first + threads - 1) / threads;
        long long per = mode == BOTH && iters > 0 ? mine / iters : 0;  // DMMAs per copy iteration
        long long v = first;
        for (; v + 3 * threads < nvec; v += 4 * threads) {
            double2 x0 = a[v], x1 = a[v + threads], x2 = a[v + 2 * threads], x3 = a[v + 3 * threads];
            c[v] = x0; c[v + threads] = x1; c[v + 2 * threads] = x2; c[v + 3 * threads] = x3;
            if (per) { work_run<OP>(acc, r, (int)(4 * per)); mine -= 4 * per; }
        }
        for (; v < nvec; v += threads) {
            c[v] = a[v];
            if (per) { work_run<OP>(acc, r, (int)per); mine -= per; }
        }
    }
    if (computes) work_run<OP>(acc, r, (int)mine);
    if (sink) {  // never at run time: keeps the DMMAs alive
        double s = 0;
        for (int q = 0; q < CHAINS; ++q) for (int j = 0; j < 4; ++j) s += acc[q][j];
        out[threadIdx.x] = s;
    }
}

// The fewest m16n8k4 per pass at K: rows (K^2) on M = 16 and columns (K) on N = 8, or swapped.
static long min_dmma_per_pass(int K) {
    auto up = [](long a, long b) { return (a + b - 1) / b; };
    long ks = up(K, 4);
    long normal = up((long)K * K, 16) * up(K, 8) * ks;
    long swapped = up(K, 16) * up((long)K * K, 8) * ks;
    return std::min(normal, swapped);
}

int main(int argc, char** argv) {
    int K = argc > 1 ? atoi(argv[1]) : 32;
    int N = 2048, M = 512, tasks = 100, streams = 4, reps = 5, threads = argc > 2 ? atoi(argv[2]) : 256;
    // Sustained (the default): 1 s of warm-up and >= 1 s timed, long enough for the power readings.
    // As mra-bench's default harness (argv[6] = 200, argv[7] = 0): 200 ms of warm-up, then 5
    // repetitions, after 1 s idle so that no mode inherits the previous one's lowered clock; the
    // issue's targets are measured this way, and the power controller lets the first second run
    // faster than the sustained rate (README "The first second is not the sustained rate").
    double warm_ms = argc > 6 ? atof(argv[6]) : 1000, timed_ms = argc > 7 ? atof(argv[7]) : 1000;
    bool rest = argc > 6;
    long per_tensor = 3 * min_dmma_per_pass(K);
    if (argc > 3 && atol(argv[3]) > 0) per_tensor = atol(argv[3]);
    int chains = argc > 4 ? atoi(argv[4]) : 4;
    int op = argc > 5 && !strcmp(argv[5], "dfma") ? 1 : 0;  // dfma: 3 K^4 FMAs per tensor, 32 per instruction
    if (op == 1 && !(argc > 3 && atol(argv[3]) > 0)) per_tensor = (3L * K * K * K * K + 31) / 32;
    if (chains != 2 && chains != 4) { fprintf(stderr, "chains: 2 or 4\n"); return 1; }
    int elems = K * K * K;
    if (elems % 2) { fprintf(stderr, "K^3 must be even\n"); return 1; }
    size_t bytes = (size_t)N * elems * sizeof(double);
    double *in, *out;
    CK(cudaMalloc(&in, bytes));
    CK(cudaMalloc(&out, bytes));
    {
        std::vector<double> h((size_t)N * elems);
        std::mt19937_64 g(std::random_device{}());
        std::uniform_real_distribution<double> d(-1, 1);
        for (auto& x : h) x = d(g);
        CK(cudaMemcpy(in, h.data(), bytes, cudaMemcpyHostToDevice));
    }
    std::vector<cudaStream_t> s(2 * streams);  // the second half: `pair`'s DMMA launches
    for (auto& x : s) CK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
    cudaEvent_t start, end;
    std::vector<cudaEvent_t> joins(2 * streams);
    CK(cudaEventCreate(&start)); CK(cudaEventCreate(&end));
    for (auto& j : joins) CK(cudaEventCreateWithFlags(&j, cudaEventDisableTiming));
    int grid = std::min(N, M);
    auto launch = [&](cudaStream_t st, long long total, int mode) {
        long long work = (long long)N * per_tensor;
        if (op == 0 && chains == 2) floor_kernel<0, 2><<<grid, threads, 0, st>>>(in, out, total, work, mode, 0);
        else if (op == 0) floor_kernel<0, 4><<<grid, threads, 0, st>>>(in, out, total, work, mode, 0);
        else if (chains == 2) floor_kernel<1, 2><<<grid, threads, 0, st>>>(in, out, total, work, mode, 0);
        else floor_kernel<1, 4><<<grid, threads, 0, st>>>(in, out, total, work, mode, 0);
    };
    auto rep = [&](int mode) {
        int used = mode == PAIR ? 2 * streams : streams;
        CK(cudaEventRecord(start, s[0]));
        for (int i = 1; i < used; ++i) CK(cudaStreamWaitEvent(s[i], start));
        for (int t = 0; t < tasks; ++t)
            if (mode == PAIR) {
                copy_level<<<grid, 128, 0, s[t % streams]>>>(in, out, (long long)N * elems);
                launch(s[streams + t % streams], 0, DMMA);
            } else launch(s[t % streams], (long long)N * elems, mode);
        CK(cudaGetLastError());
        for (int i = 1; i < used; ++i) { CK(cudaEventRecord(joins[i], s[i])); CK(cudaStreamWaitEvent(s[0], joins[i])); }
        CK(cudaEventRecord(end, s[0]));
        CK(cudaEventSynchronize(end));
        float ms; CK(cudaEventElapsedTime(&ms, start, end));
        return ms * 1000.0 / tasks;  // µs per task
    };
    const char* names[] = {"copy", "dmma", "both", "split", "pair"};
    int order[] = {COPY, DMMA, BOTH, SPLIT, PAIR, COPY};
    int min_reps = reps;
    double tflop_task = per_tensor * (op == 0 ? 1024.0 : 64.0) * N / 1e12;
    printf("# K=%d N=%d M=%d tasks=%d streams=%d threads=%d chains=%d %s/tensor=%ld (%.1f MFLOP/task) warm-up %.0f ms, timed >= %.0f ms%s\n", K, N, M, tasks, streams, threads, chains, op == 0 ? "dmma" : "dfma-warp-instr", per_tensor, tflop_task * 1e6, warm_ms, timed_ms, rest ? ", 1 s idle before each mode" : "");
    std::vector<double> hin((size_t)N * elems), hout((size_t)N * elems);
    CK(cudaMemcpy(hin.data(), in, bytes, cudaMemcpyDeviceToHost));
    for (int mode : order) {
        CK(cudaMemset(out, 0xff, bytes));  // NaN before the run: a copy that misses a value shows
        if (rest) std::this_thread::sleep_for(std::chrono::seconds(1));
        // warm-up: repetitions for at least warm_ms of device time
        double spent = 0;
        reps = min_reps;
        while (spent < warm_ms * 1000) spent += rep(mode) * tasks;
        std::vector<double> v;
        double t0 = now_s();
        for (spent = 0; (int)v.size() < reps || spent < timed_ms * 1000;) { v.push_back(rep(mode)); spent += v.back() * tasks; }
        double t1 = now_s();
        reps = (int)v.size();
        if (mode != DMMA) {
            CK(cudaMemcpy(hout.data(), out, bytes, cudaMemcpyDeviceToHost));
            if (memcmp(hin.data(), hout.data(), bytes) != 0) { fprintf(stderr, "%s: the copy is wrong\n", names[mode]); return 1; }
        }
        std::sort(v.begin(), v.end());
        double med = v[reps / 2];
        printf("%-5s K=%2d %9.2f us/task  (min %.2f max %.2f, %d reps, wall %.3f-%.3f)  %.1f TFLOP/s  %.2f TB/s\n", names[mode], K, med, v[0], v[reps - 1], reps, t0, t1,
               mode == COPY ? 0.0 : tflop_task / (med * 1e-6), mode == DMMA ? 0.0 : 2.0 * bytes / (med * 1e-6) / 1e12);
        fflush(stdout);
    }
    return 0;
}
