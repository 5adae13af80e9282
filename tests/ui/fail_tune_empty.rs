// Nothing to tune over.
mra_dsl::schedule! {
    level L1 "L1" {
        threads(tune = [], default = 128);
        bind(threads, elements);
    }
}

fn main() {}
