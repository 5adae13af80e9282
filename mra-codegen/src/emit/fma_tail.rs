//! `fma_tail(1)`: the columns past the last whole fragment (NP .. K - 1) computed by FMA on
//! the lanes, instead of a zero-padded matrix instruction whose padding columns are wasted.

use super::tensor::indent;
use super::tile_pass::TileMode;
use super::Emitter;
use crate::fragment::Fragment;
use crate::ir::Step;
use crate::plan::TransformPlan;

impl Emitter<'_> {
    /// `fma_tail(1)`: the tile's columns NP .. K - 1 by FMA. Lane l takes column NP + l % TAIL
    /// and TAIL_ROWS consecutive tile rows from (l / TAIL) · TAIL_ROWS, each the dot product of
    /// its input row (read at `in_at`, of `a_i` and `a_k`) with the lane's column of B
    /// (`b_tail`); stores go to `out_at` (of `i` and `j`). With `pairs`, two adjacent rows of
    /// one input row are one 16-byte load. `mode` as the tile's: an in-place pass computes into
    /// the held `tail_all[t]` and stores it after the block barrier.
    pub(super) fn fma_tail_code(&self, tp: &TransformPlan, f: &Fragment, in_at: &str, out_at: &str, rows_pad: bool, pairs: bool, mode: TileMode) -> String {
        let k = self.k();
        let t = self.t();
        let zero = self.plan.request.dtype.zero();
        let note = self.step_comment(|s| matches!(s, Step::FmaTail(_)));
        let tail = tp.tail_cols(k, f.n);
        let lanes_per_col = f.lanes / tail;
        let rows = f.m.div_ceil(lanes_per_col);
        // Guards the shapes need: idle lanes (LANES not a multiple of TAIL), rows past the
        // tile (TAIL_LANES · TAIL_ROWS > FM), rows past the pass's last (K² not whole tiles).
        let idle = !f.lanes.is_multiple_of(tail);
        let over = lanes_per_col * rows > f.m;
        let pairs = pairs && rows.is_multiple_of(2) && self.plan.request.dtype == crate::DType::F64 && self.d.vendor() == crate::Vendor::Nvidia;
        let guard = |row: &str, i: &str| {
            let mut g = Vec::new();
            if over {
                g.push(format!("r0 + {row} < FM"));
            }
            if rows_pad {
                g.push(format!("{i} < K2"));
            }
            g.join(" && ")
        };
        let mut b = String::new();
        b += "const int jt = lane % TAIL;\n";
        b += "const int r0 = (lane / TAIL) * TAIL_ROWS;\n";
        if mode != TileMode::Store {
            if mode == TileMode::Whole {
                b += &format!("{t} tail_acc[TAIL_ROWS];\n");
            } else {
                b += "auto& tail_acc = tail_all[t];  // held until the block barrier\n";
            }
            b += &format!("#pragma unroll\nfor (int s = 0; s < TAIL_ROWS; ++s) tail_acc[s] = {zero};\n");
            b += "#pragma unroll\nfor (int a_k = 0; a_k < K; ++a_k) {\n";
            if pairs {
                let g = guard("2 * q", "a_i");
                let load = format!("*reinterpret_cast<const double2*>(&{in_at})");
                let load = if g.is_empty() { load } else { format!("({g}) ? {load} : make_double2(0, 0)") };
                b += "    // rows r0 + 2q and the next: adjacent in the input row, one 16-byte load\n";
                b += "    #pragma unroll\n    for (int q = 0; q < TAIL_ROWS / 2; ++q) {\n";
                b += "        const int a_i = i0 + r0 + 2 * q;\n";
                b += &format!("        const double2 pair = {load};\n");
                b += "        tail_acc[2 * q] += pair.x * b_tail[a_k];\n";
                b += "        tail_acc[2 * q + 1] += pair.y * b_tail[a_k];\n";
                b += "    }\n";
            } else {
                let g = guard("s", "a_i");
                let load = if g.is_empty() { in_at.to_string() } else { format!("({g}) ? {in_at} : {zero}") };
                b += "    #pragma unroll\n    for (int s = 0; s < TAIL_ROWS; ++s) {\n";
                b += "        const int a_i = i0 + r0 + s;\n";
                b += &format!("        tail_acc[s] += ({load}) * b_tail[a_k];\n");
                b += "    }\n";
            }
            b += "}\n";
        }
        if mode != TileMode::Compute {
            if mode == TileMode::Store {
                b += "const auto& tail_acc = tail_all[t];\n";
            }
            b += "#pragma unroll\nfor (int s = 0; s < TAIL_ROWS; ++s) {\n";
            b += "    const int i = i0 + r0 + s;\n";
            b += "    const int j = NP + jt;\n";
            let g = guard("s", "i");
            let store = self.d.mma_store_value(self.plan.request.dtype, "tail_acc[s]");
            if g.is_empty() {
                b += &format!("    {out_at} = {store};\n");
            } else {
                b += &format!("    if ({g}) {out_at} = {store};  // rows of this tile only\n");
            }
            b += "}\n";
        }
        let mut s = match mode {
            TileMode::Store => format!("{note}: this lane's tail values of the tile\n"),
            _ => format!("{note}: columns NP .. K - 1 by FMA: lane l computes column NP + l % TAIL of tile rows\n// (l / TAIL) * TAIL_ROWS + s, s < TAIL_ROWS, from its column of B in registers.\n"),
        };
        if idle {
            s += "if (lane < TAIL * TAIL_LANES) {  // the lanes of whole columns\n";
        } else {
            s += "{\n";
        }
        s += &indent(&b, 1);
        s += "}\n";
        s
    }
}
