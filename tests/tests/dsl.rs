//! The `schedule!` DSL: what it builds (the IR of each level) and what it rejects (the ui/
//! cases, each a compile error at the offending token).

use mra_codegen::ir::{Loop, Memory, Operand, Schedule, Step, ThreadMap, Value};

/// Every malformed schedule in ui/fail_*.rs fails to compile with the message in its .stderr;
/// the ui/pass_*.rs ones compile and run. Regenerate with `TRYBUILD=overwrite` and read the diff.
#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/fail_*.rs");
    t.pass("ui/pass_*.rs");
}

mra_dsl::schedule! {
    /// Each thread owns a whole output row: acc[K] in registers, B in shared memory.
    ///
    ///   Second doc line, indented.
    level L3 "L3-regblk" {
        threads(128);
        bind(threads, rows);
        cache_read(B, shared, pad = 1);
        register_tile(cols);
        unroll(k);
        unroll(cols);
        workspace(global);
    }

    level L0 "L0-plain" {
        threads(tune = [64, 128, 256], default = 128);
        bind(threads, elements);
        cache_read(A, shared);
        workspace(shared);
    }

    /// The floor.
    level copy "copy" {
        threads(256);
        copy(vector = 4);
    }
}

fn steps(s: &Schedule) -> Vec<Step> {
    s.iter_steps().cloned().collect()
}

#[test]
fn numbered_level() {
    let s = l3();
    assert_eq!(s.number, Some(3));
    assert_eq!(s.name, "L3-regblk");
    assert_eq!(
        s.summary,
        "Each thread owns a whole output row: acc[K] in registers, B in shared memory. \
         Second doc line, indented."
    );
    assert_eq!(
        steps(&s),
        [
            Step::Threads(Value::Fixed(128)),
            Step::Bind(ThreadMap::Rows),
            Step::CacheRead {
                operand: Operand::B,
                into: Memory::Shared,
                pad: Value::Fixed(1)
            },
            Step::RegisterTile(Loop::Cols),
            Step::Unroll(Loop::K, Value::Fixed(0)),
            Step::Unroll(Loop::Cols, Value::Fixed(0)),
            Step::Workspace(Memory::Global),
        ]
    );
    assert!(s.file.ends_with("dsl.rs"), "{}", s.file);
}

#[test]
fn lines_are_the_primitives_lines() {
    let s = l3();
    let lines: Vec<u32> = s.steps.iter().map(|l| l.line).collect();
    assert!(lines.windows(2).all(|w| w[0] + 1 == w[1]), "{lines:?}");
    // The lines really are this file's: the text there starts with the primitive's name.
    let src =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/dsl.rs")).unwrap();
    let text: Vec<&str> = src.lines().collect();
    for step in &s.steps {
        let line = text[step.line as usize - 1].trim_start();
        assert!(
            line.starts_with(step.item.primitive()),
            "line {}: {line:?}",
            step.line
        );
    }
}

#[test]
fn tunable_and_level_zero() {
    let s = l0();
    assert_eq!(
        (s.number, s.name.as_str(), s.summary.as_str()),
        (Some(0), "L0-plain", "")
    );
    assert_eq!(
        steps(&s),
        [
            Step::Threads(Value::Tunable {
                name: "threads".into(),
                choices: vec![64, 128, 256],
                default: 128,
                default_when: vec![],
                chosen: false,
            }),
            Step::Bind(ThreadMap::Elements),
            Step::CacheRead {
                operand: Operand::A,
                into: Memory::Shared,
                pad: Value::Fixed(0)
            },
            Step::Workspace(Memory::Shared),
        ]
    );
    assert_eq!(s.steps[0].item.primitive(), "threads");
}

#[test]
fn named_level() {
    let s = copy();
    assert_eq!(
        (s.number, s.name.as_str(), s.summary.as_str()),
        (None, "copy", "The floor.")
    );
    assert_eq!(
        steps(&s),
        [Step::Threads(Value::Fixed(256)), Step::Copy { vector: 4 }]
    );
    assert_eq!(s.short_id(), "copy");
}

/// `Display` prints the schedule as it is written in the DSL (fixed values, numbered level).
#[test]
fn display_round_trip() {
    let printed = l3().to_string();
    assert_eq!(
        printed,
        "level L3 \"L3-regblk\" {\n    threads(128);\n    bind(threads, rows);\n    \
         cache_read(B, shared, pad = 1);\n    register_tile(cols);\n    unroll(k);\n    \
         unroll(cols);\n    workspace(global);\n}"
    );
    // The printed text is exactly the body written above.
    let src =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/dsl.rs")).unwrap();
    let written: Vec<&str> = src.lines().collect();
    let first = l3().steps[0].line as usize - 2; // the `level` line
    for (i, line) in printed.lines().enumerate() {
        assert_eq!(written[first + i].trim(), line.trim());
    }
}

/// The schedule IR survives serde, so generated kernels can record the schedule they came from.
#[test]
fn serde_round_trip() {
    for s in [l3(), l0(), copy()] {
        let json = serde_json::to_string(&s).unwrap();
        let back: Schedule = serde_json::from_str(&json).unwrap();
        assert_eq!(back, s);
    }
}

/// The levels shipped in mra-codegen are themselves written with the macro.
#[test]
fn shipped_levels_are_dsl_schedules() {
    for s in mra_codegen::levels::all() {
        assert!(s.file.contains("levels"), "{}: {}", s.name, s.file);
        assert!(s.steps.iter().all(|l| l.line > 0), "{}", s.name);
    }
}
