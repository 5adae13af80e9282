// A block has at most 1024 threads.
mra_dsl::schedule! {
    level L1 "L1" {
        threads(2048);
        bind(threads, elements);
    }
}

fn main() {}
