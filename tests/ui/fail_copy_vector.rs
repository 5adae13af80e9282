// copy only generates 1, 2 or 4 elements per access.
mra_dsl::schedule! {
    level copy "copy" {
        threads(128);
        copy(vector = 3);
    }
}

fn main() {}
