// The default must be one of the choices.
mra_dsl::schedule! {
    level L1 "L1" {
        threads(tune = [64, 128, 256], default = 96);
        bind(threads, elements);
    }
}

fn main() {}
