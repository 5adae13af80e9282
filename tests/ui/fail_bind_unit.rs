// Only threads can be bound so far.
mra_dsl::schedule! {
    level L1 "L1" {
        threads(128);
        bind(warps, rows);
    }
}

fn main() {}
