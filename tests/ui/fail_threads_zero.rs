// A block has at least one thread.
mra_dsl::schedule! {
    level L1 "L1" {
        threads(0);
        bind(threads, elements);
    }
}

fn main() {}
