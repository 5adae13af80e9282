//! `--op` and `--layout`: which operation a command generates, validates or times
//! ([`mra_codegen::Operation`]).

use clap::Args;
use mra_codegen::tuned_defaults::Regime;
use mra_codegen::{Kernel, Layout, Matrices, Operation, PlanError, Request, Schedule};

#[derive(Args, Debug, Clone, Default)]
pub struct OpArgs {
    /// The operation: `transform` (one matrix B for all three dimensions, the seed's),
    /// `general` (a matrix X, Y, Z per dimension, MADNESS's general_transform) or `dir` (one
    /// dimension only, MRA-TTG's transform_dir: run as `general` with the identity in the two
    /// others) or `ranksum` (MADNESS's operator application: sum over --ranks terms mu of
    /// s_mu A x1 X_mu x2 Y_mu x3 Z_mu, A read once). Every operation but the seed's kernel
    /// computes C = alpha T(A) + beta C.
    #[arg(long, value_name = "OP", default_value = "transform", value_parser = ["transform", "general", "dir", "ranksum"])]
    pub op: String,
    /// Terms of `--op ranksum` (the separation rank R).
    #[arg(long, value_name = "R", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub ranks: u32,
    /// Where tensor n of the batch lies: `contiguous` (n K^3), `strided` (n times a stride of at
    /// least K^3 elements) or `pointers` (device arrays of tensor pointers for A and C).
    #[arg(long, value_name = "LAYOUT", default_value = "contiguous", value_parser = ["contiguous", "strided", "pointers"])]
    pub layout: String,
}

impl OpArgs {
    /// The kernel's operation: the seed's for `--op transform --layout contiguous`.
    pub fn operation(&self) -> Operation {
        let layout = match self.layout.as_str() {
            "strided" => Layout::Strided,
            "pointers" => Layout::Pointers,
            _ => Layout::Contiguous,
        };
        let matrices = match self.op.as_str() {
            "transform" => Matrices::One,
            "ranksum" => Matrices::RankSum,
            _ => Matrices::PerDim,
        };
        let op = Operation { matrices, layout, scaled: true };
        if op == (Operation { scaled: true, ..Operation::SEED }) { Operation::SEED } else { op }
    }

    /// The kernel `--emit-src` and `--compile-only` show for `schedule`: the one `validate`,
    /// `sweep` and `tune` run. An operation other than the seed's takes the API regime's tuned
    /// values and its own (`"op"` entries), as `validate --op` and `sweep --op` do; the seed's
    /// keeps the configuration `schedule` carries.
    pub fn generate(&self, schedule: &Schedule, req: Request) -> Result<Kernel, PlanError> {
        match self.operation() {
            Operation::SEED => mra_codegen::generate_op(schedule, req, Operation::SEED),
            op => schedule.generate_tuned(req, op, Regime::Api),
        }
    }

    /// `schedule` for this operation at `k` on the session's GPU: the fastest configuration
    /// `tune --op` recorded in the tuning database (said on stderr), else its open defaults,
    /// which [`OpArgs::generate`] and `generate_tuned` fill from the tuned-defaults data.
    pub fn configured<B: mra_runtime::harness::Backend>(&self, session: &mra_runtime::harness::Session<B>, tuning: &mra_runtime::configure::Tuning, schedule: &Schedule, k: u32) -> Result<Schedule, mra_runtime::RuntimeError> {
        let device = mra_runtime::configure::device_of(session);
        let c = tuning.configure_op(schedule, &device, k, mra_codegen::DType::F64, self.operation())?;
        if let Some(note) = &c.note {
            eprintln!("{note}");
        }
        Ok(c.schedule)
    }
}
