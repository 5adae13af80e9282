mra_dsl::schedule! {
    /// The bound: the copy level's reads and writes and, beside them, per tensor the fewest
    /// matrix instructions any tensorized transform needs at K (three passes of whole
    /// fragments of the arch's instruction, in the operand roles that pad least), on operands
    /// in registers, their results discarded. No shared memory, no barriers, no waiting for
    /// data: a transform level that moves the data and uses the instruction cannot be faster
    /// in the same harness, power limit included (bench/NOTES.md run 92). Its output is a copy
    /// of A; it is no transform. shadow_mma(1) splits each block's waves into copying and
    /// multiplying ones (run 92's fastest arrangement at K = 10 and 32).
    level bound "bound" {
        threads(tune([128, 256], default = 128));
        copy(vector = 2);
        tensorize(mma);
        shadow_mma(tune([0, 1], default = 1));
    }
}
