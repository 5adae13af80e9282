mra_dsl::schedule! {
    /// The bound: the copy level's reads and writes and, beside them, per tensor the fewest
    /// matrix instructions any tensorized transform needs at K (three passes of whole
    /// fragments of the arch's instruction, in the operand roles that pad least), on operands
    /// in registers, their results discarded. No shared memory, no barriers, no waiting for
    /// data: a transform level that moves the data and uses the instruction cannot be faster
    /// in the same harness, power limit included. Its output is a copy of A; it is no
    /// transform.
    level bound "bound" {
        threads(tune([128, 256], default = 128));
        copy(vector = 2);
        tensorize(mma);
        // 1: half of each block's waves copy and half multiply; 0: every wave does both.
        shadow_mma(tune([0, 1], default = 1));
    }
}
