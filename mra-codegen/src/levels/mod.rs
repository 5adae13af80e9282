//! The levels: each one a short schedule in the DSL. Adding a level = adding a file here with
//! one `schedule!` and listing its function in [`all`].

mod bound;
mod copy;
mod fused;
mod fused_1buf;
mod fused_cluster;
mod fused_groups;
mod fused_pipe;
mod fused_ring;
mod fused_split;
mod l1_global;
mod l2_bshared;
mod l3_regblk;
mod l4_mma;
mod l5_staged;
mod l6_kron;
mod l7_breg;
mod vendor_3gemm;
mod wmma;

use crate::arch::{Arch, ARCHS};
use crate::dtype::DType;
use crate::ir::Schedule;
use crate::request::{Request, K_MAX};

/// Every level, the floor and the bound first, then by number.
pub fn all() -> Vec<Schedule> {
    vec![
        copy::copy(),
        bound::bound(),
        l1_global::l1(),
        l2_bshared::l2(),
        l3_regblk::l3(),
        l4_mma::l4(),
        l5_staged::l5(),
        l6_kron::l6(),
        l7_breg::l7(),
        fused::fused(),
        fused_1buf::fused1(),
        fused_pipe::fused_pipe(),
        fused_groups::fused_groups(),
        fused_ring::fused_ring(),
        fused_cluster::fused_cluster(),
        fused_split::fused_split(),
        wmma::wmma(),
        vendor_3gemm::vendor_3gemm(),
    ]
}

/// A `-l` value that names no level.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown level `{given}`; known: {}", known())]
pub struct UnknownLevel {
    pub given: String,
}

fn known() -> String {
    all()
        .iter()
        .map(|s| match s.number {
            Some(n) => format!("{n} ({})", s.name),
            None => s.name.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Finds a level by number (`3`, `L3`) or name (`L3-regblk`, `copy`), case-insensitively.
pub fn find(sel: &str) -> Result<Schedule, UnknownLevel> {
    let want = sel.trim().to_ascii_lowercase();
    let number = want.strip_prefix('l').unwrap_or(&want).parse::<u32>().ok();
    all()
        .into_iter()
        .find(|s| s.name.to_ascii_lowercase() == want || (number.is_some() && s.number == number))
        .ok_or_else(|| UnknownLevel { given: crate::quote(sel) })
}

/// Where a level can run: for each arch and dtype, the K in 1..=K_MAX it lowers for.
pub fn supported_ks(schedule: &Schedule, arch: &'static Arch, dtype: DType) -> Vec<u32> {
    (1..=K_MAX).filter(|&k| schedule.plan(Request { k, arch, dtype }).is_ok()).collect()
}

/// Compact form of a K list: `1-32`, `1-14`, `16, 32`.
pub fn describe_ks(ks: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < ks.len() {
        let mut j = i;
        while j + 1 < ks.len() && ks[j + 1] == ks[j] + 1 {
            j += 1;
        }
        parts.push(if j > i + 1 { format!("{}-{}", ks[i], ks[j]) } else if j == i + 1 { format!("{}, {}", ks[i], ks[j]) } else { ks[i].to_string() });
        i = j + 1;
    }
    if parts.is_empty() { "none".into() } else { parts.join(", ") }
}

/// All archs, for `levels` listings.
pub fn archs() -> &'static [Arch] {
    ARCHS
}
