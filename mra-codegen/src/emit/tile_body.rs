//! The body of one tile of a tensorized pass, for every pass variant the whole-tensor and
//! the cluster passes emit: the A and B fragments of each k-step, the matrix instructions
//! (several k-steps deep with `fuse_k(N)`, several row tiles at once with `unroll(rows)`), and
//! the masked stores of D (16-byte column pairs where the layout allows).

use super::tensor::deep_instruction;
use super::tile_pass::{stacked_to_global, waits_late, ASource, SlicePass, TileMode, Variant};
use super::wmma::wmma_body;
use super::writer::Writer;
use super::Emitter;
use crate::fragment::Fragment;
use crate::ir::{Loop, Memory, Step};
use crate::plan::TransformPlan;

impl Emitter<'_> {
    /// The body computing one tile `tile` (rows i0 .. i0 + FM): A and B fragments, the
    /// instructions, the masked stores. A one-register operand (f64 fragments) is a scalar
    /// load; a multi-register one (RDNA WMMA) is a vector filled register by register.
    pub(super) fn tile_body(&self, tp: &TransformPlan, f: &Fragment, v: Variant, mode: TileMode) -> Box<dyn Fn(&mut Writer)> {
        let src = v.src;
        let dtype = self.plan.request.dtype;
        let zero = dtype.zero();
        let k = self.k();
        // split_cols(N): this wave's WARP_FRAGS column fragments, from nf0 on.
        let split = tp.col_split > 1;
        let nfr = if split { "WARP_FRAGS" } else { "N_FRAGS" };
        let col0 = if split { "(nf0 + nf) * FN" } else { "nf * FN" };
        let unroll = if tp.unroll_k { format!("{}  {}", super::pragma_unroll(tp.unroll_k_by), self.step_comment(|s| matches!(s, Step::Unroll(Loop::K, _)))) } else { String::new() };
        if tp.wmma {
            return Box::new(wmma_body(k, tp.wmma_stages_c(k), unroll, zero));
        }
        // The output rows of the pass: K² (the slice passes of cluster(N): K·CL; stack(N): N·K²).
        let (rows, rows_name) = match v.slice {
            Some(_) => (k * tp.cluster_slice_width(k), "SLICE_ROWS"),
            _ if tp.stack > 1 => (tp.pass_rows(k), "ROWS"),
            _ => (k * k, "K2"),
        };
        // stack(N) into C: the group's last tensors may not exist (a partial group): the
        // caller says how many rows are stored.
        let stacked_out = stacked_to_global(tp, v);
        // stack(N) into a shared intermediate: where each D row starts in the next pass's input
        // (the divisions once per row, not per store: per store they made the kernel 17%
        // slower).
        let stacked_rows = (tp.stack > 1 && v.slice.is_none() && v.out_shared).then(|| {
            let run = if v.out_runs { "KR" } else { "K" };
            let tensor = if v.out_runs { "(K * KR)" } else { "K2" };
            format!("((i % K2) / K) * W_STRIDE + (i / K2) * {tensor} + (i % K) * {run}")
        });
        let rows_pad = rows % f.m != 0;
        let acc_decl = self.d.mma_acc_decl(f, "acc", nfr);
        let mma = self.d.mma_call(f, dtype, "acc[nf]", "a", "b");
        // unroll(rows, by = J): J tiles at once, each with its own accumulators and A fragments.
        let jam = if mode == TileMode::Whole { tp.jam } else { 1 };
        let jam_mma = self.d.mma_call(f, dtype, "acc_all[u][nf]", "a_all[u]", "b");
        let jam_note = self.step_comment(|s| matches!(s, Step::Unroll(Loop::Rows, _)));
        let (a_ty, b_ty) = (self.d.mma_operand_type(f, dtype, f.a.regs), self.d.mma_operand_type(f, dtype, f.b.regs));
        let reg = |n: u32| if n == 1 { "0" } else { "r" };
        let a_i = f.a.row.cpp("lane", reg(f.a.regs), f.lanes);
        let a_k = f.a.col.cpp("lane", reg(f.a.regs), f.lanes);
        let (b_k, b_j) = (f.b.row.cpp("lane", reg(f.b.regs), f.lanes), f.b.col.cpp("lane", reg(f.b.regs), f.lanes));
        let (c_i, c_j) = (f.c.row.cpp("lane", "r", f.lanes), f.c.col.cpp("lane", "r", f.lanes));
        let mut a_guard = Vec::new();
        // Staged chunks hold zero rows for k >= K; a direct read guards them.
        if !k.is_multiple_of(f.k) && src == ASource::Direct {
            a_guard.push("a_k < K");
        }
        // Staged chunks are zero-padded already; a direct read guards the last tile's rows.
        let (a_rows_guard, c_rows_guard) = match rows_name {
            "K2" => ("a_i < K2", "i < K2"),
            "ROWS" => ("a_i < ROWS", "i < ROWS"),
            _ => ("a_i < SLICE_ROWS", "i < SLICE_ROWS"),
        };
        if rows_pad && src == ASource::Direct {
            a_guard.push(a_rows_guard);
        }
        let mut c_guard = Vec::new();
        if stacked_out {
            c_guard.push("i < rows");
        } else if rows_pad {
            c_guard.push(c_rows_guard);
        }
        if !k.is_multiple_of(f.n) && !tp.fma_tail {
            c_guard.push("j < K");
        }
        // The last block's slice may run past K - 1: those rows (b or x) have no place to go.
        if tp.cluster * tp.cluster_slice_width(k) > k {
            match v.slice {
                Some(SlicePass::First) => c_guard.push("b0 + i / K < K"),
                Some(SlicePass::Third) => c_guard.push("x0 + i / K < K"),
                _ => {}
            }
        }
        let a_src = match src {
            // Row c = a_k of the gathered input lies in block (ks * FK) / CL (a k-step never
            // straddles two blocks: CL is a whole number of k-steps), row a_k % CL there.
            // bulk_copy(1) at odd K: pass 0's input rows lie at the odd stride WS_STRIDE.
            _ if v.slice == Some(SlicePass::First) && tp.cluster_shifted(k) => "in[a_k * WS_STRIDE + a_i]",
            _ if v.slice.is_some() => "in[a_k * SLICE_STRIDE + a_i]",
            // Padded runs: element a_i of row a_k is run a_i / K, slot a_i % K. The column is
            // computed once per tile (a_col, before the k loop), except for jammed tiles.
            ASource::Direct if v.in_runs && jam > 1 => "in[a_k * W_STRIDE + (a_i / K) * KR + a_i % K]",
            ASource::Direct if v.in_runs && f.a.regs == 1 => "in[a_k * W_STRIDE + a_col[0]]",
            ASource::Direct if v.in_runs => "in[a_k * W_STRIDE + a_col[r]]",
            ASource::Direct if v.in_staged_stride => "in[a_k * WS_STRIDE + a_i]",
            ASource::Direct if v.in_shared => "in[a_k * W_STRIDE + a_i]",
            ASource::Direct => "in[a_k * K2 + a_i]",
            ASource::Staged => "a_stage[a_k * A_STRIDE + wave * FM + (a_i - i0)]",
        };
        let a_value = self.d.mma_operand_elem(dtype, a_src);
        let a_value = if a_guard.is_empty() { a_value } else { format!("({}) ? {a_value} : 0", a_guard.join(" && ")) };
        let b_src = format!("bm[(ks * FK + {b_k}) * B_STRIDE + nf * FN + {b_j}]");
        let b_value = self.d.mma_operand_elem(dtype, &b_src);
        let store = self.d.mma_store_value(dtype, "acc[nf][r]");
        // Output element (i, j) is element i·K + j of the K x K² view of the next pass's input:
        // row (i / K), column (i % K)·K + j; padded rows when the output is shared.
        let out_at = match v.slice {
            // Row (b, c) of the first pass's output is element (c, x) of row b of the next input.
            // Row (b, c) = (b0 + i / K, i % K), column x = j: block j / CL, row b, column
            // (c, j % CL) of its gather buffer (a pair j, j + 1 stays in one block: CL even).
            Some(SlicePass::First) => "(*mra_cluster_map_rw(&out[(b0 + i / K) * SLICE_STRIDE + (i % K) * CL + j % CL], j / CL))",
            // Row (c, x) = (i / CL, i % CL), column y = j: row c, column (x, y) of T2.
            Some(SlicePass::Second) => "out[(i / CL) * SLICE_STRIDE + (i % CL) * K + j]",
            // (stack(N)'s shared outputs are placed by the store block of `store_tile`.)
            _ if v.out_runs => "out[(i / K) * W_STRIDE + (i % K) * KR + j]",
            _ if v.out_shared => "out[(i / K) * W_STRIDE + (i % K) * K + j]",
            _ => "out[i * K + j]",
        };
        // async_exchange(1): pass 0 sends each element (pair) to the same offset of block j / CL's
        // gather buffer with st.async, completing on that block's gather mbarrier `bar`.
        let send_at = (v.slice == Some(SlicePass::First) && tp.async_exchange).then_some("&out[(b0 + i / K) * SLICE_STRIDE + (i % K) * CL + j % CL], j / CL");
        let b_in_registers = tp.b.memory == Memory::Registers;
        let (a_regs, b_regs, c_regs) = (f.a.regs, f.b.regs, f.c.regs);
        // NVIDIA f64 D fragments hold column pairs (j, j + 1) in registers 2q, 2q + 1 of one
        // row: stored as one 16-byte access (half the store instructions; the 8-byte stores of a
        // shared intermediate are 8-way bank conflicts at K = 16 under ncu). Needs even K so
        // that j < K implies j + 1 < K and every pair is 16-byte aligned; or, into a shared
        // intermediate of padded runs (align_runs(1), odd K), the even run stride KR = K + 1:
        // a pair starting at j < K ends at j + 1 <= K, slot K being the run's padding.
        // Into a shared intermediate the row stride K·KR + pad must be even too, or odd rows'
        // pairs are 8-byte aligned only (a tuned odd pad hit CUDA_ERROR_MISALIGNED_ADDRESS).
        // cluster(N)'s pass 0 with plain stores at odd K: the gather buffers' offsets
        // (b, c)·SLICE_STRIDE-rows + c·CL + x % CL are even for even x when CL and the stride are
        // even, whatever K; a pair (K - 1, K) stays in one block (K odd, CL even: CL does not
        // divide K) and its second value lands in the padding column x = K, which pass 1 reads
        // only into rows that are never stored. (st.async counts the bytes it sends: not there.)
        let odd_pairs = k % 2 == 1 && v.slice == Some(SlicePass::First) && !tp.async_exchange;
        let scaled = self.op().scaled;
        let paired = dtype == crate::DType::F64
            && self.d.vendor() == crate::Vendor::Nvidia
            && (k.is_multiple_of(2) || v.out_runs || odd_pairs)
            && (!v.out_shared || tp.shared_row_pad().is_multiple_of(2))
            && (v.slice != Some(SlicePass::First) || tp.cluster_slice_width(k).is_multiple_of(2))
            && f.c.regs.is_multiple_of(2)
            && (0..f.lanes).all(|l| (0..f.c.regs / 2).all(|q| f.c.row.at(l, 2 * q) == f.c.row.at(l, 2 * q + 1) && f.c.col.at(l, 2 * q) + 1 == f.c.col.at(l, 2 * q + 1)));
        let pair_guard = c_guard.clone();
        let into_runs = v.out_runs && k % 2 == 1;
        let (pi, pj) = (f.c.row.cpp("lane", "(2 * q)", f.lanes), f.c.col.cpp("lane", "(2 * q)", f.lanes));
        let late_wait = v.slice == Some(SlicePass::First) && waits_late(tp);
        let f_n = f.n;
        let stack_note = self.step_comment(|s| matches!(s, Step::Stack(_)));
        let store_tile = move |w: &mut Writer| {
            if let Some(row_at) = &stacked_rows {
                // stack(N) into a shared intermediate: rows outside, each row's start computed
                // under its own guard, columns inside (the divisions once per row, not per
                // store, as above).
                let (count, unit, row, col) = if paired { (c_regs / 2, "q", &pi, &pj) } else { (c_regs, "r", &c_i, &c_j) };
                let what = if paired { "registers 2q, 2q + 1: one row, adjacent columns, one 16-byte store" } else { "register r" };
                w.line(format!("// D fragment, {what}; {stack_note}: row i = t * K2 + x * K + y of tensor t goes to row x, column t * K2 + y * K."));
                w.line("#pragma unroll");
                w.block(format!("for (int {unit} = 0; {unit} < {count}; ++{unit})"), "", |w| {
                    w.line(format!("const int i = i0 + {row};"));
                    let body = |w: &mut Writer| {
                        w.line(format!("const int at = {row_at};"));
                        w.line("#pragma unroll");
                        w.block(format!("for (int nf = 0; nf < {nfr}; ++nf)"), "", |w| {
                            w.line(format!("const int j = {col0} + {col};"));
                            let st = if paired && scaled {
                                "store_pair(out, at + j, acc[nf][2 * q], acc[nf][2 * q + 1]);".to_string()
                            } else if paired {
                                "*reinterpret_cast<double2*>(&out[at + j]) = make_double2(acc[nf][2 * q], acc[nf][2 * q + 1]);".to_string()
                            } else {
                                format!("out[at + j] = {store};")
                            };
                            if !k.is_multiple_of(f_n) {
                                w.line(format!("if (j < K) {st}  // padding is not stored"));
                            } else {
                                w.line(st);
                            }
                        });
                    };
                    if rows_pad {
                        w.block("if (i < ROWS)", "", body);
                    } else {
                        body(w);
                    }
                });
                return;
            }
            if late_wait {
                w.line("if (!waited) {  // this wave's first store into another block: the cluster may go on");
                w.line("    mra_cluster_wait();");
                w.line("    waited = true;");
                w.line("}");
            }
            if paired {
                w.line(format!("// D fragment: registers 2q, 2q + 1 of this lane are D(i0 + {c_i}, {col0} + {c_j}) for r = 2q, 2q + 1:"));
                w.line("// adjacent columns of one row, stored as one 16-byte access.");
                w.line("#pragma unroll");
                w.block(format!("for (int nf = 0; nf < {nfr}; ++nf)"), "", |w| {
                    w.line("#pragma unroll");
                    w.block(format!("for (int q = 0; q < {}; ++q)", c_regs / 2), "", |w| {
                        w.line(format!("const int i = i0 + {pi};"));
                        w.line(format!("const int j = {col0} + {pj};"));
                        let st = match send_at {
                            Some(at) => format!("mra_send_pair({at}, acc[nf][2 * q], acc[nf][2 * q + 1], bar);"),
                            None if scaled => {
                                let at = out_at.strip_prefix("out[").and_then(|x| x.strip_suffix(']')).expect("a pair stored at out[..]");
                                format!("store_pair(out, {at}, acc[nf][2 * q], acc[nf][2 * q + 1]);")
                            }
                            None => format!("*reinterpret_cast<double2*>(&{out_at}) = make_double2(acc[nf][2 * q], acc[nf][2 * q + 1]);"),
                        };
                        if pair_guard.is_empty() {
                            w.line(st);
                        } else {
                            let why = if into_runs { "pairs start at j < K; the pair (K - 1, K) fills the run's padding slot" } else { "padding is not stored" };
                            w.line(format!("if ({}) {st}  // {why}", pair_guard.join(" && ")));
                        }
                    });
                });
                return;
            }
            w.line(format!("// D fragment: register r of this lane is D(i0 + {c_i}, {col0} + {c_j})."));
            w.line("#pragma unroll");
            w.block(format!("for (int nf = 0; nf < {nfr}; ++nf)"), "", |w| {
                w.line("#pragma unroll");
                w.block(format!("for (int r = 0; r < {c_regs}; ++r)"), "", |w| {
                    w.line(format!("const int i = i0 + {c_i};"));
                    w.line(format!("const int j = {col0} + {c_j};"));
                    let st = match send_at {
                        Some(at) => format!("mra_send({at}, {store}, bar);"),
                        None => format!("{out_at} = {store};"),
                    };
                    if c_guard.is_empty() {
                        w.line(st);
                    } else {
                        w.line(format!("if ({}) {st}  // padding is not stored", c_guard.join(" && ")));
                    }
                });
            });
        };
        let b_steps_ty = b_ty.clone();
        let b_fragment = move |w: &mut Writer| {
            if b_in_registers {
                w.line(format!("const {b_ty}& b = b_frag[ks][nf];  // B fragment, kept in registers"));
            } else if b_regs == 1 {
                w.line(format!("const {b_ty} b = {b_value};  // B fragment: B(ks * FK + {b_k}, nf * FN + {b_j})"));
            } else {
                w.line(format!("{b_ty} b;  // B fragment: register r is B(ks * FK + {b_k}, nf * FN + {b_j})"));
                w.line("#pragma unroll");
                w.line(format!("for (int r = 0; r < {b_regs}; ++r) b[r] = {b_value};"));
            }
        };
        let b_fragment = std::rc::Rc::new(b_fragment);
        // align_runs(1): the input column of each A register depends on the tile and the lane,
        // not on the k-step: computed once per tile, so the k loop does not divide by K.
        let a_cols = (v.in_runs && jam == 1).then(|| {
            let note = self.step_comment(|s| matches!(s, Step::AlignRuns(_)));
            let mut s = format!("int a_col[{a_regs}];  {note}: input element a_i lies in run a_i / K, slot a_i % K (once per tile)\n", a_regs = f.a.regs);
            if f.a.regs == 1 {
                s += &format!("{{\n    const int a_i = i0 + {a_i};\n    a_col[0] = (a_i / K) * KR + a_i % K;\n}}\n");
            } else {
                s += "#pragma unroll\n";
                s += &format!("for (int r = 0; r < {}; ++r) {{\n    const int a_i = i0 + {a_i};\n    a_col[r] = (a_i / K) * KR + a_i % K;\n}}\n", f.a.regs);
            }
            s
        });
        // pair_rows(1) (NVIDIA f64 m16n8k*): a lane's A registers 2q, 2q + 1 are rows 2g, 2g + 1
        // of one column, adjacent in a shared row of the pass's input: one 16-byte load where
        // that row's stride is even (and so every pair 16-byte aligned) and the rows are an even
        // count (a pair is all valid or all padding). Padded runs (align_runs(1)) may split a pair.
        let in_stride = match v.slice {
            Some(SlicePass::First) if tp.cluster_shifted(k) => k * tp.cluster_slice_width(k) + tp.shared_row_pad() + 1,
            Some(_) => k * tp.cluster_slice_width(k) + tp.shared_row_pad(),
            None if v.in_staged_stride => tp.staged_row_elems(k),
            None => tp.shared_row_elems(k),
        };
        let a_pairs = tp.row_pairs
            && dtype == crate::DType::F64
            && self.d.vendor() == crate::Vendor::Nvidia
            && src == ASource::Direct
            && v.in_shared
            && !v.in_runs
            && in_stride % 2 == 0
            && rows % 2 == 0
            && f.a.regs.is_multiple_of(2)
            && (0..f.lanes).all(|l| {
                (0..f.a.regs / 2).all(|q| {
                    let (r0, r1) = (2 * q, 2 * q + 1);
                    f.a.row.at(l, r0).is_multiple_of(2) && f.a.row.at(l, r1) == f.a.row.at(l, r0) + 1 && f.a.col.at(l, r1) == f.a.col.at(l, r0)
                })
            });
        let pair_note = self.step_comment(|s| matches!(s, Step::PairRows(_)));
        let (pair_i, pair_k) = (f.a.row.cpp("lane", "(2 * q)", f.lanes), f.a.col.cpp("lane", "(2 * q)", f.lanes));
        let pair_load = format!("*reinterpret_cast<const double2*>(&{a_src})");
        let pair_load = if a_guard.is_empty() { pair_load } else { format!("({}) ? {pair_load} : make_double2(0, 0)", a_guard.join(" && ")) };
        // The A fragment's registers: `one` receives a one-register fragment, `each` register r.
        let (frag_i, frag_k) = (a_i.clone(), a_k.clone());
        let a_fragment = std::rc::Rc::new(move |w: &mut Writer, one: &str, each: &str| {
            let (a_i, a_k) = (&frag_i, &frag_k);
            if a_pairs {
                w.line(format!("{pair_note}: registers 2q, 2q + 1 are rows i0 + {pair_i} and the next, one 16-byte load"));
                w.line("#pragma unroll");
                w.block(format!("for (int q = 0; q < {}; ++q)", a_regs / 2), "", |w| {
                    w.line(format!("const int a_i = i0 + {pair_i};"));
                    w.line(format!("const int a_k = ks * FK + {pair_k};"));
                    w.line(format!("const double2 pair = {pair_load};"));
                    w.line(format!("{} = pair.x;", each.replace("[r]", "[2 * q]")));
                    w.line(format!("{} = pair.y;", each.replace("[r]", "[2 * q + 1]")));
                });
            } else if a_regs == 1 {
                w.line(format!("const int a_i = i0 + {a_i};"));
                w.line(format!("const int a_k = ks * FK + {a_k};"));
                w.line(format!("{one} = {a_value};"));
            } else {
                w.line("#pragma unroll");
                w.block(format!("for (int r = 0; r < {a_regs}; ++r)"), "", |w| {
                    w.line(format!("const int a_i = i0 + {a_i};"));
                    w.line(format!("const int a_k = ks * FK + {a_k};"));
                    w.line(format!("{each} = {a_value};"));
                });
            }
        });
        // fuse_k(N): the k loop as runs of instructions, with the helper each depth calls.
        let fused = (tp.fuse_k > 1).then(|| {
            let groups = tp.k_step_groups(TransformPlan::padded(k, f.k) / f.k);
            groups
                .into_iter()
                .map(|g| {
                    let call = if g.depth == 1 { String::new() } else {
                        let (deep, map) = deep_instruction(tp, f, g.depth);
                        self.d.mma_steps_prelude(f, &deep, &map, "").1
                    };
                    (g, call)
                })
                .collect::<Vec<_>>()
        });
        let unroll_note = if tp.unroll_k { self.step_comment(|s| matches!(s, Step::Unroll(Loop::K, _))) } else { String::new() };
        let fuse_note = {
            let note = self.step_comment(|s| matches!(s, Step::FuseK(_)));
            let runs: Vec<String> = fused.iter().flatten().map(|(g, _)| format!("{} x {} deep from step {}", g.count, g.depth, g.start)).collect();
            format!("{note}: the k-steps as {}", runs.join(", then "))
        };
        let tail_code = tp.fma_tail.then(|| {
            assert!(src == ASource::Direct && v.slice.is_none() && jam == 1, "planned: fma_tail(1) only on direct passes");
            let in_at = match () {
                _ if v.in_runs => "in[a_k * W_STRIDE + (a_i / K) * KR + a_i % K]",
                _ if v.in_staged_stride => "in[a_k * WS_STRIDE + a_i]",
                _ if v.in_shared => "in[a_k * W_STRIDE + a_i]",
                _ => "in[a_k * K2 + a_i]",
            };
            self.fma_tail_code(tp, f, in_at, out_at, rows_pad, in_stride_even_rows(tp, v, k, rows), mode)
        });
        if jam > 1 {
            // The tiles tile, tile + STRIDE, ..., tile + (JAM - 1) * STRIDE of this wave (STRIDE:
            // WAVES, or TILE_WAVES where split_cols(N) gives each tile N waves); one past `end`
            // recomputes the first tile (same addresses, no guards) and is not stored.
            let (b_fragment, a_fragment) = (b_fragment.clone(), a_fragment.clone());
            let stride = if split { "TILE_WAVES" } else { "WAVES" };
            let jam_acc_decl = self.d.mma_acc_decl(f, "acc_all", &format!("JAM][{nfr}"));
            let fused = fused.clone();
            let (unroll, fuse_note, unroll_note) = (unroll.clone(), fuse_note.clone(), unroll_note.clone());
            let a_frag_doc = format!("register {} of this lane is A(i0 + {a_i}, ks * FK + {a_k}) = in(k, i)", reg(a_regs));
            return Box::new(move |w: &mut Writer| {
                w.line(format!("{jam_note}: this wave's tiles tile + u * {stride}, u < JAM, at once."));
                if split {
                    w.line("const int nf0 = (wave % SPLIT) * WARP_FRAGS;  // this wave's column fragments, in every tile");
                }
                w.line("int i0s[JAM];");
                w.line("bool live[JAM];");
                w.line("#pragma unroll");
                w.block("for (int u = 0; u < JAM; ++u)", "", |w| {
                    w.line(format!("live[u] = tile + u * {stride} < end;"));
                    w.line(format!("i0s[u] = (live[u] ? tile + u * {stride} : tile) * FM;"));
                });
                w.line(&jam_acc_decl);
                w.line("#pragma unroll");
                w.line(format!("for (int u = 0; u < JAM; ++u) for (int nf = 0; nf < {nfr}; ++nf) for (int r = 0; r < {c_regs}; ++r) acc_all[u][nf][r] = 0;"));
                // One k-step `ks` of every jammed tile: their A fragments, then per column
                // fragment one instruction per tile.
                let one_step = |w: &mut Writer| {
                    w.line(format!("// A fragments: {a_frag_doc} for each tile."));
                    w.line(format!("{a_ty} a_all[JAM];"));
                    w.line("#pragma unroll");
                    w.block("for (int u = 0; u < JAM; ++u)", "", |w| {
                        w.line("const int i0 = i0s[u];");
                        a_fragment(w, "a_all[u]", "a_all[u][r]");
                    });
                    w.line("#pragma unroll");
                    w.block(format!("for (int nf = 0; nf < {nfr}; ++nf)"), "", |w| {
                        b_fragment(w);
                        w.line("#pragma unroll");
                        w.line(format!("for (int u = 0; u < JAM; ++u) {jam_mma}"));
                    });
                };
                // fuse_k(N): the A fragments of every jammed tile's steps first, then per column
                // fragment one deep instruction per tile.
                let deep = |w: &mut Writer, d: u32, call: &str| {
                    w.line(format!("// A fragments of k-steps ks0 .. ks0 + {} for each tile: {a_frag_doc}, ks = ks0 + s.", d - 1));
                    w.line(format!("{a_ty} a_steps_all[JAM][{d}];"));
                    w.line("#pragma unroll");
                    w.block("for (int u = 0; u < JAM; ++u)", "", |w| {
                        w.line("const int i0 = i0s[u];");
                        w.line("#pragma unroll");
                        w.block(format!("for (int s = 0; s < {d}; ++s)"), "", |w| {
                            w.line("const int ks = ks0 + s;");
                            a_fragment(w, "a_steps_all[u][s]", "a_steps_all[u][s][r]");
                        });
                    });
                    deep_b_steps(w, nfr, d, &b_steps_ty, &*b_fragment, &format!("#pragma unroll\nfor (int u = 0; u < JAM; ++u) {call}(acc_all[u][nf], a_steps_all[u], b_steps);"));
                };
                k_loop(w, fused.as_deref(), &unroll, &unroll_note, &fuse_note, &one_step, &deep);
                w.line("#pragma unroll");
                w.block("for (int u = 0; u < JAM; ++u)", "", |w| {
                    w.block("if (live[u])", "", |w| {
                        w.line("const int i0 = i0s[u];");
                        w.line("auto& acc = acc_all[u];");
                        store_tile(w);
                    });
                });
            });
        }
        Box::new(move |w: &mut Writer| {
            w.line("const int i0 = tile * FM;");
            if split {
                w.line("const int nf0 = (wave % SPLIT) * WARP_FRAGS;  // this wave's column fragments");
            }
            if mode != TileMode::Whole {
                w.line("auto& acc = acc_all[t];  // this tile's held accumulators");
            }
            if mode == TileMode::Store {
                store_tile(w);
                if let Some(tail) = &tail_code {
                    w.lines(tail);
                }
                return;
            }
            if let Some(a_cols) = &a_cols {
                w.lines(a_cols);
            }
            if mode == TileMode::Whole {
                w.line(&acc_decl);
            }
            if mode != TileMode::Accumulate {
                w.line("#pragma unroll");
                w.line(format!("for (int nf = 0; nf < {nfr}; ++nf) for (int r = 0; r < {c_regs}; ++r) acc[nf][r] = 0;"));
            }
            // One k-step `ks`: its A fragment, then one instruction per column fragment.
            let one_step = |w: &mut Writer| {
                w.line(format!("// A fragment: register {} of this lane is A(i0 + {a_i}, ks * FK + {a_k}) = in(k, i).", reg(a_regs)));
                if a_regs > 1 {
                    w.line(format!("{a_ty} a;"));
                }
                a_fragment(w, &format!("const {a_ty} a"), "a[r]");
                w.line("#pragma unroll");
                w.block(format!("for (int nf = 0; nf < {nfr}; ++nf)"), "", |w| {
                    b_fragment(w);
                    w.line(&mma);
                });
            };
            // fuse_k(N): the A fragments of the run's steps, then per column fragment one deep
            // instruction.
            let deep = |w: &mut Writer, d: u32, call: &str| {
                w.line(format!("// A fragments of k-steps ks0 .. ks0 + {}: register {} of step s is A(i0 + {a_i}, ks * FK + {a_k}), ks = ks0 + s.", d - 1, reg(a_regs)));
                w.line(format!("{a_ty} a_steps[{d}];"));
                w.line("#pragma unroll");
                w.block(format!("for (int s = 0; s < {d}; ++s)"), "", |w| {
                    w.line("const int ks = ks0 + s;");
                    a_fragment(w, "a_steps[s]", "a_steps[s][r]");
                });
                deep_b_steps(w, nfr, d, &b_steps_ty, &*b_fragment, &format!("{call}(acc[nf], a_steps, b_steps);"));
            };
            k_loop(w, fused.as_deref(), &unroll, &unroll_note, &fuse_note, &one_step, &deep);
            if let Some(tail) = &tail_code {
                w.lines(tail);
            }
            if mode == TileMode::Whole {
                store_tile(w);
            }
        })
    }
}

/// Whether a pass's input rows allow 16-byte loads of two adjacent elements at even offsets
/// (the FMA tail's row pairs): a shared input of plain runs with an even row stride, at even K.
fn in_stride_even_rows(tp: &TransformPlan, v: Variant, k: u32, rows: u32) -> bool {
    v.in_shared && !v.in_runs && v.slice.is_none() && k.is_multiple_of(2) && rows.is_multiple_of(2) && tp.shared_row_elems(k).is_multiple_of(2)
}

/// The k loop of a tile (or of jammed tiles): `step` per k-step, or with `fuse_k(N)` the runs
/// of k-steps as the plan groups them (`fused`: each run with the helper its depth calls),
/// `deep(w, depth, call)` emitting one instruction run from `ks0`; the unroll pragma where
/// there is a loop to unroll.
fn k_loop(w: &mut Writer, fused: Option<&[(crate::plan::KStepGroup, String)]>, unroll: &str, unroll_note: &str, fuse_note: &str, step: &dyn Fn(&mut Writer), deep: &dyn Fn(&mut Writer, u32, &str)) {
    let Some(groups) = fused else {
        if !unroll.is_empty() {
            w.line(unroll);
        }
        w.block("for (int ks = 0; ks < K_STEPS; ++ks)", "", step);
        return;
    };
    w.line(fuse_note);
    for (i, (g, call)) in groups.iter().enumerate() {
        let last = g.start + g.depth * g.count;
        if i == 0 && g.count == 1 && !unroll_note.is_empty() {
            w.line(format!("{unroll_note}: one instruction run, no loop to unroll"));
        }
        let head = if g.count > 1 {
            if i == 0 && !unroll.is_empty() {
                w.line(unroll);
            }
            format!("for (int ks0 = {}; ks0 < {last}; ks0 += {})", g.start, g.depth)
        } else {
            String::new()
        };
        let body = |w: &mut Writer| {
            if g.count == 1 {
                let steps = if g.depth == 1 { format!("k-step {}", g.start) } else { format!("k-steps {} .. {}", g.start, last - 1) };
                w.line(format!("const int ks0 = {};  // {steps}", g.start));
            }
            if g.depth == 1 {
                w.line("const int ks = ks0;");
                step(w);
            } else {
                deep(w, g.depth, call);
            }
        };
        if head.is_empty() {
            w.block("", "", body);
        } else {
            w.block(head, "", body);
        }
    }
}

/// Per column fragment of the wave (`nfr` of them), the B fragments of `depth` k-steps from
/// `ks0` side by side, then `issue` (the deep instruction(s) on them).
fn deep_b_steps(w: &mut Writer, nfr: &str, depth: u32, b_ty: &str, b_fragment: &dyn Fn(&mut Writer), issue: &str) {
    w.line("#pragma unroll");
    w.block(format!("for (int nf = 0; nf < {nfr}; ++nf)"), "", |w| {
        w.line(format!("{b_ty} b_steps[{depth}];"));
        w.line("#pragma unroll");
        w.block(format!("for (int s = 0; s < {depth}; ++s)"), "", |w| {
            w.line("const int ks = ks0 + s;");
            b_fragment(w);
            w.line("b_steps[s] = b;");
        });
        w.lines(issue);
    });
}
