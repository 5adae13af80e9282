mra_dsl::schedule! {
    /// The reference: each thread computes output elements, streaming A and B from global memory.
    level L1 "L1-global" {
        threads(128);
        bind(threads, elements);
    }
}
