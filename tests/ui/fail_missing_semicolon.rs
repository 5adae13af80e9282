// Each primitive ends with `;`.
mra_dsl::schedule! {
    level L1 "L1" {
        threads(128)
        bind(threads, elements);
    }
}

fn main() {}
