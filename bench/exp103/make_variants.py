#!/usr/bin/env python3
"""Run 103: fused-split K = 32 variants made from mra-bench's generated source (argv[1]), written
next to it as <stem>-<variant>.cu. Each is one edit of phase 1's slice loop:
  peel    pass 0 of slice 0 before the loop, pass 1 of the last slice after it, so the loop body has
          no `if (i > 0)`: pass 0 of slice i and pass 1 of slice i - 1 are one basic block and ptxas
          can interleave their eight DMMA chains (the generated loop ends pass 0's four chains
          before the branch to pass 1's).
  unroll  the slice loop fully unrolled (the same interleaving; ptxas spills 72 bytes).
  bad     peel with pass 1 given this slice's pass 0 instead of the previous one (wrong on purpose:
          validation must fail).
  w12     12 warps (384 threads, __launch_bounds__(384, 1): at most 168 registers) instead of 8:
          warp w takes the slices a = w + 12 i < 32 (3 or 2) and the last pass's rounds of four
          column fragments r = w + 12 j < 16 (2 or 1); 12 slots, 229 984 B of shared memory.
  w12bad  w12 with the second-last slice's pass 1 stored into the last slice's row of T2.
Upper bounds (results wrong on purpose, the same work otherwise; timed, never validated):
  noslice only each tensor's first slice is copied and waited for; slices 1-3 compute on the
          data already in the slot: what hiding the slice copies' latency completely could give.
  nobar   without the block barrier at the end of each tensor (T2 read before the next tensor's
          phase 1 writes it): what moving that wait later could give at most."""
import sys, pathlib
src_path = pathlib.Path(sys.argv[1])
s = src_path.read_text()
loop_head = "        #pragma unroll 1\n        for (int i = 0; i < SLICES; ++i) {\n            mra_mbar_wait"
tail = "        pass1_store(bt, d1o, t2, w + WARPS * (SLICES - 1), g, t);\n"
assert s.count(loop_head) == 1 and s.count(tail) == 1
start, end = s.index(loop_head), s.index(tail)
body = s[start:end]
p0 = body[body.index("            mra_mbar_wait"):body.index("            // Pass 1 of the previous slice")]
assert "            double d1[KS][4];\n" in p0
p0 = p0.replace("            double d1[KS][4];\n", "")

def peeled(pass1_arg):
    return ("        // [run 103] pass 0 of slice i as a function of i, writing d1.\n"
            "        auto pass0 = [&](int i, double (&d1)[KS][4]) {\n" + p0 + "        };\n"
            "        pass0(0, d1o);\n"
            "        #pragma unroll 1\n"
            "        for (int i = 1; i < SLICES; ++i) {\n"
            "            double d1n[KS][4];\n"
            "            pass0(i, d1n);\n"
            f"            pass1_store(bt, {pass1_arg}, t2, w + WARPS * (i - 1), g, t);\n"
            "            #pragma unroll\n"
            "            for (int nf = 0; nf < KS; ++nf)\n"
            "            #pragma unroll\n"
            "            for (int r = 0; r < 4; ++r) d1o[nf][r] = d1n[nf][r];\n"
            "        }\n")

variants = {
    "peel": s[:start] + peeled("d1o") + s[end:],
    "bad": s[:start] + peeled("d1n") + s[end:],
    "unroll": s.replace(loop_head, loop_head.replace("#pragma unroll 1", "#pragma unroll")),
}
def w12(text):
    edits = [
        ("constexpr int THREADS = 256;", "constexpr int THREADS = 384;"),
        ("    const int first = blockIdx.x >> 1, stride = gridDim.x >> 1;\n",
         "    const int first = blockIdx.x >> 1, stride = gridDim.x >> 1;\n"
         "    const int SLICES_W = (K - w + WARPS - 1) / WARPS;  // [run 103] this warp's slices: a = w + WARPS i < K\n"),
        ("        while (i >= SLICES) { i -= SLICES; n += stride; }", "        while (i >= SLICES_W) { i -= SLICES_W; n += stride; }"),
        ("        for (int i = 0; i < SLICES; ++i) {", "        for (int i = 0; i < SLICES_W; ++i) {"),
        ("        pass1_store(bt, d1o, t2, w + WARPS * (SLICES - 1), g, t);", "        pass1_store(bt, d1o, t2, w + WARPS * (SLICES_W - 1), g, t);"),
        ("        for (int round = 0; round < LAST_FRAGS / 4; ++round) {\n            const int f0 = LAST_FRAGS * w + 4 * round;",
         "        for (int round = w; round < K * ZH / 8 / 4; round += WARPS) {  // [run 103] rounds of four fragments over the warps\n            const int f0 = 4 * round;"),
        ('extern "C" __global__ void mra_fused_split_k32_f64(', 'extern "C" __global__ void __launch_bounds__(384, 1) mra_fused_split_k32_f64('),
    ]
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text

variants["w12"] = w12(s)
variants["w12bad"] = variants["w12"].replace("if (i > 0) pass1_store(bt, d1o, t2, w + WARPS * (i - 1), g, t);", "if (i > 0) pass1_store(bt, d1o, t2, w + WARPS * i, g, t);")
assert variants["w12bad"] != variants["w12"]

def edit(text, old, new):
    assert text.count(old) == 1, old
    return text.replace(old, new)

variants["noslice"] = edit(edit(s,
    "            mra_mbar_wait(bar, phase);\n            phase ^= 1;\n",
    "            if (i == 0) { mra_mbar_wait(bar, phase); phase ^= 1; }  // [run 103 upper bound] slices 1-3 reuse slice 0\n"),
    "            if (const double* p = slice(n, i, 1)) load_slice(p);",
    "            if (i == SLICES - 1) if (const double* p = slice(n, i, 1)) load_slice(p);  // [run 103 upper bound]")
variants["nobar"] = edit(s, "        __syncthreads();  // T2 read before the next tensor's phase 1 writes it",
    "        // [run 103 upper bound] no barrier: T2 read before the next tensor's phase 1 writes it")

for name, text in variants.items():
    out = src_path.with_name(f"{src_path.stem}-{name}.cu")
    out.write_text(text)
    print(out)
