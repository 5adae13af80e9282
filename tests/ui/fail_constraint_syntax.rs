// A constraint must compare two expressions.
mra_dsl::schedule! {
    level L1 "L1" {
        threads(tune([64, 128], default = 128));
        bind(threads, rows);
        constraint(threads * 2);
    }
}

fn main() {}
