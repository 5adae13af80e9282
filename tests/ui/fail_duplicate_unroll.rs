// unroll twice is fine for different loops, not for the same one.
mra_dsl::schedule! {
    level L3 "L3" {
        threads(128);
        bind(threads, rows);
        unroll(k);
        unroll(cols);
        unroll(k);
    }
}

fn main() {}
