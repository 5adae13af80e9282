// unroll takes one loop.
mra_dsl::schedule! {
    level L1 "L1" {
        threads(128);
        bind(threads, elements);
        unroll(k, cols);
    }
}

fn main() {}
