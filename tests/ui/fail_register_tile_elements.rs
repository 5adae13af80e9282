// A register tile holds a whole row: the thread must own rows.
mra_dsl::schedule! {
    level L3 "L3" {
        threads(128);
        bind(threads, elements);
        register_tile(cols);
    }
}

fn main() {}
