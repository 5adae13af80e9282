// A thread count is an integer literal, not a string.
mra_dsl::schedule! {
    level L1 "L1" {
        threads("128");
        bind(threads, elements);
    }
}

fn main() {}
