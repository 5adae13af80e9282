// A level with neither bind nor copy computes nothing.
mra_dsl::schedule! {
    level L2 "L2" {
        threads(128);
        cache_read(B, shared);
    }
}

fn main() {}
