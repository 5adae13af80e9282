// An unknown primitive, listing the known ones.
mra_dsl::schedule! {
    level L1 "L1" {
        threads(128);
        bind(threads, elements);
        tile(cols);
    }
}

fn main() {}
