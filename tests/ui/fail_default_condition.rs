// A default that depends on another parameter (only K, bytes and the arch's limits may decide).
mra_dsl::schedule! {
    level L1 "L1" {
        threads(tune([64, 128], default = 128));
        bind(threads, rows);
        cache_read(B, shared, pad = tune([0, 1], default = if threads <= 64 { 1 } else { 0 }));
    }
}

fn main() {}
