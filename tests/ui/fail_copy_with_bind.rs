// The copy level does no GEMM, so it binds nothing.
mra_dsl::schedule! {
    level copy "copy" {
        threads(128);
        copy(vector = 2);
        bind(threads, rows);
    }
}

fn main() {}
