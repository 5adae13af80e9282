// Operands already live in global memory.
mra_dsl::schedule! {
    level L2 "L2" {
        threads(128);
        bind(threads, elements);
        cache_read(B, global);
    }
}

fn main() {}
