mra_dsl::schedule! {
    /// The floor: every input tensor read once and every output written once, in the same
    /// harness (tasks, streams, blocks) as the transform levels. No transform can beat it.
    level copy "copy" {
        threads(128);
        copy(vector = 2);
    }
}
