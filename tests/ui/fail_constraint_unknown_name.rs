// A constraint over a name the level does not declare.
mra_dsl::schedule! {
    level L1 "L1" {
        threads(tune([64, 128], default = 128));
        bind(threads, rows);
        constraint(threads * tiles_per_warp <= 512);
    }
}

fn main() {}
