// Two levels with one number would be the same fn.
mra_dsl::schedule! {
    level L1 "L1-a" {
        threads(128);
        bind(threads, elements);
    }

    level L1 "L1-b" {
        threads(64);
        bind(threads, elements);
    }
}

fn main() {}
