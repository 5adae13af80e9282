// Each primitive once: the second threads is the error.
mra_dsl::schedule! {
    level L1 "L1" {
        threads(128);
        bind(threads, elements);
        threads(256);
    }
}

fn main() {}
