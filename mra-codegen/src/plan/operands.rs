//! The base of a transform level: how its threads map onto the passes, where each operand is
//! read from, the matrix instruction (if tensorized), and where the intermediates live.

use super::error::PlanError;
use super::transform::Staging;
use crate::arch::Arch;
use crate::fragment::{fragment, Fragment};
use crate::instr::{matrix_instr, wmma_instr};
use crate::ir::{Loop, MatrixCore, Memory, Operand, Schedule, Step, ThreadMap};
use crate::request::Request;

/// The steps every transform level has: the fields of the same names of
/// [`TransformPlan`](super::TransformPlan) (`fragment` before `pair_rows(1)` permutes its rows).
pub(super) struct Operands {
    pub map: ThreadMap,
    pub a: Staging,
    pub b: Staging,
    pub register_tile: bool,
    pub out: Option<Staging>,
    pub unroll_k: bool,
    pub unroll_cols: bool,
    pub unroll_k_by: u32,
    pub unroll_cols_by: u32,
    pub workspace: Memory,
    pub fragment: Option<Fragment>,
    pub wmma: bool,
}

impl Schedule {
    /// The thread map, operand staging, matrix fragment and workspace of a transform level,
    /// checked for `req` with `threads` per block.
    pub(super) fn plan_operands(&self, req: Request, threads: u32) -> Result<Operands, PlanError> {
        let Request { k, arch, dtype } = req;
        let malformed = |what: &str| PlanError::Malformed { level: self.name.clone(), what: what.into() };
        let map = self
            .iter_steps()
            .find_map(|s| match s {
                Step::Bind(m) => Some(*m),
                _ => None,
            })
            .ok_or_else(|| malformed("no bind(threads, ..) step"))?;
        let a = self
            .iter_steps()
            .find_map(|s| match s {
                Step::CacheRead { operand: Operand::A, into, pad } => Some(Staging { memory: *into, pad: pad.default_value() }),
                _ => None,
            })
            .unwrap_or(Staging { memory: Memory::Global, pad: 0 });
        if a.memory != Memory::Global && map != ThreadMap::Tiles {
            return Err(malformed("cache_read(A, shared) stages chunks of row tiles: it needs bind(warps, tiles)"));
        }
        if a.memory == Memory::Registers {
            return Err(malformed("cache_read(A, registers): only B can be held in registers"));
        }
        let b = self
            .iter_steps()
            .find_map(|s| match s {
                Step::CacheRead { operand: Operand::B, into, pad } => Some(Staging { memory: *into, pad: pad.default_value() }),
                _ => None,
            })
            .unwrap_or(Staging { memory: Memory::Global, pad: 0 });
        let core = self.iter_steps().find_map(|s| match s {
            Step::Tensorize(c) => Some(*c),
            _ => None,
        });
        let tensorize = core.is_some();
        let wmma = core == Some(MatrixCore::Wmma);
        if tensorize != (map == ThreadMap::Tiles) {
            return Err(malformed("tensorize(mma) and bind(warps, tiles) go together"));
        }
        let fragment = if tensorize {
            let find = |a: &Arch| if wmma { wmma_instr(a, dtype) } else { matrix_instr(a, dtype) };
            let instr = find(arch).ok_or_else(|| PlanError::NoMatrixCore { level: self.name.clone(), arch, dtype, k, wmma })?;
            let f = fragment(instr);
            if threads % f.lanes != 0 {
                return Err(malformed(&format!("threads({threads}) is not a whole number of {}-lane waves", f.lanes)));
            }
            if wmma {
                // The API loads whole fragments from memory with 32-byte aligned rows.
                let workspace_shared = self.iter_steps().any(|s| matches!(s, Step::Workspace(Memory::Shared)));
                if a.memory != Memory::Shared || workspace_shared {
                    return Err(malformed("tensorize(wmma) loads A fragments from staged chunks: it needs cache_read(A, shared) and workspace(global)"));
                }
                if b.memory != Memory::Shared {
                    return Err(malformed("tensorize(wmma) loads B fragments from shared memory: it needs cache_read(B, shared)"));
                }
                let chunk = (threads / f.lanes) * f.m;
                if !(chunk + a.pad).is_multiple_of(4) || b.pad % 4 != 0 {
                    return Err(malformed("tensorize(wmma) needs 32-byte aligned rows: pad by a multiple of 4 elements"));
                }
            }
            Some(f)
        } else {
            if b.memory == Memory::Registers {
                return Err(malformed("cache_read(B, registers) needs tensorize(mma)"));
            }
            None
        };
        let unroll_by = |l: Loop| {
            self.iter_steps()
                .find_map(|s| match s {
                    Step::Unroll(x, by) if *x == l => Some(by.default_value()),
                    _ => None,
                })
                .unwrap_or(0)
        };
        let register_tile = self.iter_steps().any(|s| matches!(s, Step::RegisterTile(Loop::Cols)));
        if register_tile && map != ThreadMap::Rows {
            return Err(malformed("register_tile(cols) needs bind(threads, rows)"));
        }
        let out = self.iter_steps().find_map(|s| match s {
            Step::CacheWrite { into: Memory::Shared, pad, .. } => Some(Staging { memory: Memory::Shared, pad: pad.default_value() }),
            _ => None,
        });
        if out.is_some() && !register_tile {
            return Err(malformed("cache_write(C, ..) needs register_tile(cols)"));
        }
        let workspace = self
            .iter_steps()
            .find_map(|s| match s {
                Step::Workspace(m) => Some(*m),
                _ => None,
            })
            .unwrap_or(Memory::Global);
        if workspace == Memory::Registers {
            return Err(malformed("workspace(registers) cannot hold a K^3 intermediate"));
        }
        Ok(Operands {
            map,
            a,
            b,
            register_tile,
            out,
            unroll_k: self.iter_steps().any(|s| matches!(s, Step::Unroll(Loop::K, _))),
            unroll_cols: self.iter_steps().any(|s| matches!(s, Step::Unroll(Loop::Cols, _))),
            unroll_k_by: unroll_by(Loop::K),
            unroll_cols_by: unroll_by(Loop::Cols),
            workspace,
            fragment,
            wmma,
        })
    }
}
