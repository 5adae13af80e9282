// Several levels in one invocation, inside a module, in every accepted spelling: named levels,
// L0, tunable threads, pad, trailing commas, unroll of two loops.
mod levels {
    mra_dsl::schedule! {
        /// The floor.
        level copy "copy" {
            threads(tune = [64, 128, 256,], default = 256);
            copy(vector = 1,);
        }

        level L0 "L0-rows" {
            threads(1024);
            bind(threads, rows,);
            cache_read(A, shared, pad = 1);
            unroll(cols);
            unroll(k);
            workspace(shared);
        }

        #[allow(non_snake_case)]
        level Lx "Lx-elements" {
            threads(1);
            bind(threads, elements);
            cache_read(B, shared);
        }
    }
}

fn main() {
    let all = [levels::copy(), levels::l0(), levels::Lx()];
    let numbers: Vec<Option<u32>> = all.iter().map(|s| s.number).collect();
    assert_eq!(numbers, [None, Some(0), None]);
    let ids: Vec<String> = all.iter().map(|s| s.short_id()).collect();
    assert_eq!(ids, ["copy", "L0", "Lx-elements"]);
    assert_eq!(all[1].steps.len(), 6);
    assert_eq!(
        all[0].to_string(),
        "level copy \"copy\" {\n    threads(tune = [64, 128, 256], default = 256);\n    copy(vector = 1);\n}"
    );
}
