// The level name is a string literal.
mra_dsl::schedule! {
    level L1 L1_global {
        threads(128);
        bind(threads, elements);
    }
}

fn main() {}
