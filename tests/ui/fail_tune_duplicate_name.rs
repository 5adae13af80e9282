// Two parameters with one name: a tuned configuration could not tell them apart.
mra_dsl::schedule! {
    level L1 "L1" {
        threads(tune([64, 128], default = 128));
        bind(threads, rows);
        cache_read(B, shared, pad = tune([0, 1], default = 1, name = threads));
    }
}

fn main() {}
