// The default pad is not one of the choices.
mra_dsl::schedule! {
    level L1 "L1" {
        threads(128);
        bind(threads, rows);
        cache_read(B, shared, pad = tune([0, 1, 2], default = 4));
    }
}

fn main() {}
