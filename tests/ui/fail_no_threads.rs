// Every level sets its block size.
mra_dsl::schedule! {
    level L1 "L1" {
        bind(threads, elements);
    }
}

fn main() {}
