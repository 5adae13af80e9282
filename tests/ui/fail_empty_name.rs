// The printed name must not be empty.
mra_dsl::schedule! {
    level L1 "" {
        threads(128);
        bind(threads, elements);
    }
}

fn main() {}
