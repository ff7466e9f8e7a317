//! No per-row allocation on the hot paths: each scenario of `support::alloc` (TPC-H Q1 and
//! Q6, TopN, Selection + Projection, Limit, LIKE, the two encoders) runs over N and over 2N
//! rows under a counting global allocator, and the 2N run may allocate more only by a small
//! constant per extra batch, never by something per row.
//!
//! The binary has its own global allocator, so it is a test file of its own. The counts are
//! per thread: tests running side by side do not disturb each other.
//!
//! To see where a scenario's allocations come from (sampled backtraces, grouped by the
//! innermost rcop frames):
//!
//! ```text
//! RCOP_ALLOC_SCENARIO=q1 cargo test -p rcop-exec --test alloc_per_row -- --ignored --nocapture where_
//! ```

mod support;

use support::alloc::{CountingAlloc, allocations, growth, scenario, scenarios, trace_sites};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// Rows of the smaller run (the larger has twice as many): a dozen full batches.
const N: i64 = 12_000;

/// Allocations a request may add per extra batch of 1024 rows. A batch's columns, selection
/// vector, evaluated expressions and response chunk are allocated per batch (sized up front
/// where the row count is known; string bytes and evaluated columns still grow by doubling;
/// a scan's row decoders are kept from batch to batch): 33 (Q6) to 93 per batch in these
/// scenarios (2026-12, 5 columns). One allocation per row would add 1024.
const PER_BATCH: f64 = 128.0;

fn assert_flat(name: &str) {
    let g = growth(&scenario(name), N);
    eprintln!("{name}: {g}");
    assert!(
        g.per_batch() <= PER_BATCH,
        "{name} allocates per row: {g} (at most {PER_BATCH} per batch allowed)"
    );
}

#[test]
fn the_counter_sees_per_row_allocations() {
    // The harness itself: a loop that boxes every row is caught.
    let count = |n: usize| {
        let before = allocations();
        let v: Vec<Box<usize>> = (0..n).map(Box::new).collect();
        std::hint::black_box(&v);
        allocations() - before
    };
    let (a, b) = (count(1000), count(2000));
    assert!(b - a >= 1000, "{a} then {b}");
}

#[test]
fn every_scenario_has_a_test() {
    let names: Vec<&str> = scenarios().iter().map(|s| s.name).collect();
    assert_eq!(
        names,
        [
            "q1",
            "q6",
            "top_n_10",
            "selection_projection_chunk",
            "selection_projection_default",
            "limit_all_rows",
            "like_const_pattern",
            "scan_chunk",
            "scan_default",
        ]
    );
}

#[test]
fn q1() {
    assert_flat("q1");
}

#[test]
fn q6() {
    assert_flat("q6");
}

#[test]
fn top_n() {
    assert_flat("top_n_10");
}

#[test]
fn selection_projection_chunk() {
    assert_flat("selection_projection_chunk");
}

#[test]
fn selection_projection_default() {
    assert_flat("selection_projection_default");
}

#[test]
fn limit_all_rows() {
    assert_flat("limit_all_rows");
}

#[test]
fn like_const_pattern() {
    assert_flat("like_const_pattern");
}

#[test]
fn scan_chunk() {
    assert_flat("scan_chunk");
}

#[test]
fn scan_default() {
    assert_flat("scan_default");
}

/// The allocations of evaluating `name LIKE '%-1%a'` over `rows` rows, the pattern a
/// constant or a column holding it on every row (a warm-up evaluation first).
#[expect(clippy::unwrap_used, reason = "a fixture of known-valid expressions")]
fn like_allocations(rows: usize, constant: bool) -> u64 {
    use rcop_exec::{Batch, BytesT, Elem, EvalConfig, EvalContext, EvalType, FieldType, VecCol};
    use support::dag::{col, ft, func, int, string};
    let s = support::items::name_ft();
    let (mut text, mut pattern) =
        (VecCol::new(EvalType::Bytes, rows), VecCol::new(EvalType::Bytes, rows));
    for h in 0..rows as i64 {
        BytesT::push(&mut text, support::items::name_of(h).as_deref().map(str::as_bytes));
        BytesT::push(&mut pattern, Some(b"%-1%a"));
    }
    let batch = Batch::from_cols(vec![text, pattern]);
    let schema = vec![FieldType::from_proto(Some(&s)); 2];
    let pat = if constant { string("%-1%a", -46) } else { col(1, s.clone()) };
    let e = func(
        4310,
        rcop_proto::tipb::FieldType {
            collate: Some(-46),
            ..ft(rcop_datum::chunk::mysql_type::LONG_LONG)
        },
        vec![col(0, s.clone()), pat, int(92)],
    );
    let node = rcop_exec::build_expr(&e, &schema, &EvalConfig::default(), 100).unwrap();
    let eval = || {
        rcop_exec::eval_expr(&node, &batch, &mut EvalContext::default())
            .unwrap()
            .into_col(node.et, rows)
    };
    drop(eval());
    let before = allocations();
    let out = eval();
    let after = allocations();
    assert_eq!(out.len(), rows);
    after - before
}

#[test]
fn like_compiles_a_pattern_once_constant_or_repeated_in_a_column() {
    for constant in [true, false] {
        let (a, b) = (like_allocations(1024, constant), like_allocations(4096, constant));
        eprintln!("LIKE, constant {constant}: 1024 rows {a} allocations, 4096 rows {b}");
        // Compiling per row would allocate a few times per row (the pattern, its runs).
        assert!(b.saturating_sub(a) < 32, "constant {constant}: {a} then {b}");
    }
}

/// Prints where the allocations of `RCOP_ALLOC_SCENARIO` (default `q1`) come from.
#[test]
#[ignore = "a diagnostic: prints sampled allocation sites, asserts nothing"]
fn where_allocations_come_from() {
    let name = std::env::var("RCOP_ALLOC_SCENARIO").unwrap_or_else(|_| "q1".into());
    let fx = (scenario(&name).fixture)(N);
    let sites = trace_sites(&fx, 16, 4);
    let total: usize = sites.iter().map(|s| s.1).sum();
    eprintln!("{name}: {total} sampled allocations (1 in 16) over {} rows", fx.rows);
    for (site, n) in sites.iter().take(12) {
        eprintln!("{n:6}  {site}");
    }
}
