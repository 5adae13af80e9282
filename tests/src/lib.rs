//! Shared helpers of the integration tests (the tests themselves live in tests/).
//!
//! Toolchain tests carry `#[ignore = "needs ... (run with --include-ignored; .ci/run does)"]`,
//! so a plain `cargo test` shows them as ignored in its summary line instead of passing them
//! silently. Run with `--include-ignored`, they skip when a compiler is missing (printing that
//! they skipped), unless `MRA_REQUIRE_TOOLCHAINS=1` is set (as `.ci/run` does): then a missing
//! toolchain fails.

/// The environment variable that turns "toolchain missing → skip" into a failure.
pub const REQUIRE_ENV: &str = "MRA_REQUIRE_TOOLCHAINS";

/// Returns `Some(value)` to run the test with, or `None` after printing why it is skipped.
/// Panics instead of skipping when [`REQUIRE_ENV`] is `1`.
pub fn require<T, E: std::fmt::Display>(what: &str, found: Result<T, E>) -> Option<T> {
    match found {
        Ok(v) => Some(v),
        Err(e) => {
            if std::env::var(REQUIRE_ENV).is_ok_and(|v| v == "1") {
                panic!("{what} is required ({REQUIRE_ENV}=1) but not available: {e}");
            }
            println!("SKIPPED: {what} not available: {e}");
            eprintln!("SKIPPED: {what} not available: {e}");
            None
        }
    }
}

/// K values the compile tests cover: the ones of interest plus odd and edge values.
pub const K_SPREAD: &[u32] = &[1, 3, 5, 6, 7, 8, 10, 12, 13, 16, 20, 31, 32];

pub mod calculator;
