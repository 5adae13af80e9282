//! Quoting what a user typed inside an error message.

/// Longest prefix of a value that a message repeats.
const MAX_QUOTED: usize = 40;

/// `value` as a message quotes it: its first line and at most 40 characters, with `…` where
/// something was left out, so that a huge or multi-line argument stays a short one-line error.
pub fn quote(value: &str) -> String {
    let first = value.lines().next().unwrap_or("");
    let mut shown: String = first.chars().take(MAX_QUOTED).collect();
    if shown.len() < value.len() {
        shown.push('…');
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn short_values_are_unchanged_and_long_ones_cut() {
        assert_eq!(quote("sm_90"), "sm_90");
        assert_eq!(quote("a\nb"), "a…");
        let long = "x".repeat(10_000);
        assert_eq!(quote(&long).chars().count(), 41);
    }
}
