// The defaults break the constraint for every K and arch: the default cannot be planned.
mra_dsl::schedule! {
    level L1 "L1" {
        threads(tune([64, 128, 256], default = 256));
        launch_bounds(min_blocks = tune([1, 2], default = 2));
        bind(threads, rows);
        constraint(threads * min_blocks <= 256);
    }
}

fn main() {}
