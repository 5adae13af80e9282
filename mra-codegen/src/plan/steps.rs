//! Reading a schedule's steps: the value a step gives, and the 0|1 switches.

use crate::ir::{Schedule, Step, Value};

impl Schedule {
    /// The default value of the first step `pick` takes a numeric argument from.
    pub(super) fn step_value(&self, pick: impl Fn(&Step) -> Option<&Value>) -> Option<u32> {
        self.iter_steps().find_map(pick).map(|v| v.default_value())
    }

    /// A 0|1 step (`async_exchange`, `align_runs`, `pair_rows`, `late_wait`): false where the
    /// schedule does not name it; another number is refused, `meaning` saying what 0 and 1 are.
    pub(super) fn switch(&self, pick: impl Fn(&Step) -> Option<&Value>, name: &str, meaning: &str) -> Result<bool, String> {
        match self.step_value(pick).unwrap_or(0) {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(format!("{name}(N) takes {meaning}")),
        }
    }
}
