// Padding avoids shared-memory bank conflicts; registers have none.
mra_dsl::schedule! {
    level L2 "L2" {
        threads(128);
        bind(threads, elements);
        cache_read(B, registers, pad = 1);
    }
}

fn main() {}
