// The level from the DSL's documentation compiles to `pub fn l3() -> Schedule`.
use mra_codegen::ir::{Loop, Memory, Operand, Step, ThreadMap, Value};

mra_dsl::schedule! {
    /// Each thread owns a whole output row: acc[K] in registers, B in shared memory.
    /// Second doc line.
    level L3 "L3-regblk" {
        threads(128);
        bind(threads, rows);
        cache_read(B, shared);
        register_tile(cols);
        unroll(k);
        workspace(global);
    }
}

fn main() {
    let s = l3();
    assert_eq!(s.number, Some(3));
    assert_eq!(s.name, "L3-regblk");
    assert_eq!(
        s.summary,
        "Each thread owns a whole output row: acc[K] in registers, B in shared memory. Second doc line."
    );
    let steps: Vec<Step> = s.iter_steps().cloned().collect();
    assert_eq!(
        steps,
        [
            Step::Threads(Value::Fixed(128)),
            Step::Bind(ThreadMap::Rows),
            Step::CacheRead { operand: Operand::B, into: Memory::Shared, pad: mra_codegen::ir::Value::Fixed(0) },
            Step::RegisterTile(Loop::Cols),
            Step::Unroll(Loop::K, Value::Fixed(0)),
            Step::Workspace(Memory::Global),
        ]
    );
    let lines: Vec<u32> = s.steps.iter().map(|l| l.line).collect();
    assert_eq!(lines, [8, 9, 10, 11, 12, 13]);
    assert!(s.file.ends_with("pass_example.rs"), "{}", s.file);
}
