// An argument word the primitive does not know, listing the allowed ones.
mra_dsl::schedule! {
    level L1 "L1" {
        threads(128);
        bind(threads, elements);
        unroll(planes);
    }
}

fn main() {}
