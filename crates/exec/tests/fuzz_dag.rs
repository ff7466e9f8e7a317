//! Every input kept under `fuzz/regressions/dag/` (crashes the `dag` fuzz target found, and
//! a few seeds) replays through the fuzz harness itself: the engine must neither panic nor
//! keep any of its memory budget, and must answer every one.

#![expect(clippy::panic, reason = "the harness asserts by panicking, as the fuzzer does")]

#[path = "../../../fuzz/fuzz_targets/dag_harness.rs"]
mod harness;

#[test]
fn fuzz_regressions_dag() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions/dag");
    let h = harness::Harness::new();
    let mut n = 0;
    let mut entries: Vec<_> =
        std::fs::read_dir(dir).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    entries.sort();
    for path in entries {
        let Ok(data) = std::fs::read(&path) else { panic!("unreadable {}", path.display()) };
        h.run(&data);
        n += 1;
    }
    assert!(n > 0, "no regression inputs");
}
