// bind without its thread map.
mra_dsl::schedule! {
    level L1 "L1" {
        threads(128);
        bind(threads);
    }
}

fn main() {}
