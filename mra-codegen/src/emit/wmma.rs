//! `tensorize(wmma)`: a tile through NVIDIA's warp-level matrix API instead of lane indexing.

use super::writer::Writer;

/// A tile through NVIDIA's WMMA API (f64 8×8×4, sm_80+): A fragments from the staged chunk
/// (column-major, ld A_STRIDE), B from the padded B in shared memory (row-major, ld B_STRIDE),
/// D stored row-major straight to `out` when K is a multiple of 8, else through `c_stage`.
/// The `__dmma_m8n8k4_*` built-ins are what `nvcuda::wmma::load_matrix_sync`, `mma_sync` and
/// `store_matrix_sync` call for these fragment types (CUDA's crt/mma.hpp); NVRTC provides them
/// without headers.
pub(super) fn wmma_body(k: u32, stage_c: bool, unroll: String, zero: &'static str) -> impl Fn(&mut Writer) {
    move |w: &mut Writer| {
        w.line("const int i0 = tile * FM;");
        w.line("double acc[N_FRAGS][2];");
        w.line("#pragma unroll");
        w.line(format!("for (int nf = 0; nf < N_FRAGS; ++nf) acc[nf][0] = acc[nf][1] = {zero};"));
        if !unroll.is_empty() {
            w.line(&unroll);
        }
        w.block("for (int ks = 0; ks < K_STEPS; ++ks)", "", |w| {
            w.line("double a_frag[1];  // wmma::fragment<matrix_a, 8, 8, 4, double, col_major>");
            w.line("__dmma_m8n8k4_ld_a(a_frag, a_stage + ks * FK * A_STRIDE + wave * FM, A_STRIDE, 1);");
            w.line("#pragma unroll");
            w.block("for (int nf = 0; nf < N_FRAGS; ++nf)", "", |w| {
                w.line("double b_frag[1];  // wmma::fragment<matrix_b, 8, 8, 4, double, row_major>");
                w.line("__dmma_m8n8k4_ld_b(b_frag, bm + ks * FK * B_STRIDE + nf * FN, B_STRIDE, 0);");
                w.line("__dmma_m8n8k4_mma_f64(acc[nf], a_frag, b_frag, acc[nf], 2, 0);  // mma_sync, col x row");
            });
        });
        if stage_c {
            w.line(format!("// K = {k} is not a multiple of 8: whole fragments go to this wave's c_stage, then"));
            w.line("// the lanes store the valid rows and columns.");
            w.line("double* c_tile = c_stage + wave * FM * NP;");
            w.line("#pragma unroll");
            w.line("for (int nf = 0; nf < N_FRAGS; ++nf) __dmma_m8n8k4_st_c_f64(c_tile + nf * FN, acc[nf], NP, 0);");
            w.line("__syncwarp();");
            w.block("for (int e = lane; e < FM * NP; e += LANES)", "", |w| {
                w.line("const int i = i0 + e / NP, j = e % NP;");
                w.line("if (i < K2 && j < K) out[i * K + j] = c_tile[e];");
            });
            w.line("__syncwarp();  // c_tile is reused by this wave's next tile");
        } else {
            w.line("#pragma unroll");
            w.line("for (int nf = 0; nf < N_FRAGS; ++nf) __dmma_m8n8k4_st_c_f64(out + i0 * K + nf * FN, acc[nf], K, 0);  // store_matrix_sync, row-major");
        }
    }
}
