//! The seed's result line and its JSON twin.

use serde::Serialize;

/// One timed repetition of one level.
#[derive(Clone, Debug, Serialize)]
pub struct RepResult {
    pub level: String,
    pub nfuncs: usize,
    pub nblocks: usize,
    #[serde(rename = "K")]
    pub k: u32,
    pub tasks: usize,
    pub streams: usize,
    pub threads: u32,
    pub smem: u32,
    pub time_us: f64,
    pub gflop: f64,
    pub gflops: f64,
    pub us_per_task: f64,
    /// Median µs per task of the `copy` level in the same run.
    pub floor_us_per_task: f64,
    /// floor_us_per_task / us_per_task: 1.0 is as fast as a copy.
    pub fraction_of_floor: f64,
    pub rep: usize,
    pub dtype: String,
    pub arch: String,
    pub device: String,
    /// Device time of the untimed repetitions before the timed ones (`--warmup`).
    pub warmup_ms: f64,
    /// With `--warmup settle`: whether the SM clock settled before timing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup_settled: Option<bool>,
    /// `--stream-data`: `shared` (the seed's harness) or `private` (an A and a C per stream).
    pub stream_data: mra_runtime::harness::StreamData,
    /// Host µs this repetition took to submit its tasks; at ≥ 90% of `time_us` the GPU waited
    /// for the launches (`host_bound`) and the time is the host's.
    pub submit_us: f64,
    pub host_bound: bool,
    /// `--source`: the hand-edited kernel file timed in place of the level's generated kernel.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl RepResult {
    /// `Transform;level=L3-regblk;nfuncs=2048;nblocks=512;K=16;tasks=100;threads={128,1,1};smem=2048;Time(us)=12345;GFlop=403.0;Gflop/s=32.6`
    /// Time(us) is the whole repetition (all tasks); GFlop its useful work (6·K⁴·N per task).
    pub fn seed_line(&self) -> String {
        format!(
            "Transform;level={};nfuncs={};nblocks={};K={};tasks={};threads={{{},1,1}};smem={};Time(us)={:.0};GFlop={:.1};Gflop/s={:.1}",
            self.level, self.nfuncs, self.nblocks, self.k, self.tasks, self.threads, self.smem, self.time_us, self.gflop, self.gflops
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_line_has_the_seed_format() {
        let r = RepResult {
            level: "L3-regblk".into(),
            nfuncs: 2048,
            nblocks: 512,
            k: 16,
            tasks: 100,
            streams: 4,
            threads: 128,
            smem: 2048,
            time_us: 12345.4,
            gflop: 403.0,
            gflops: 32.6,
            us_per_task: 123.454,
            floor_us_per_task: 30.0,
            fraction_of_floor: 0.24,
            rep: 1,
            dtype: "f64".into(),
            arch: "sm_90".into(),
            device: "H100".into(),
            warmup_ms: 200.0,
            warmup_settled: None,
            stream_data: mra_runtime::harness::StreamData::Shared,
            submit_us: 310.0,
            host_bound: false,
            source: None,
        };
        assert!(serde_json::to_string(&r).unwrap().contains(r#""stream_data":"shared""#), "the JSON spells the stream data as the command line does");
        assert!(!serde_json::to_string(&r).unwrap().contains("source"), "a generated kernel's record has no source field");
        assert_eq!(
            r.seed_line(),
            "Transform;level=L3-regblk;nfuncs=2048;nblocks=512;K=16;tasks=100;threads={128,1,1};smem=2048;Time(us)=12345;GFlop=403.0;Gflop/s=32.6"
        );
    }
}
