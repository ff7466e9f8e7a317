//! Counting the heap allocations of one request: a global allocator that counts per thread
//! (a test binary runs its tests on several threads), the hot-path scenarios that must not
//! allocate per row, and the growth of their counts from N to 2N rows.
//!
//! A binary opts in with
//! `#[global_allocator] static A: support::alloc::CountingAlloc = support::alloc::CountingAlloc;`.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::{Cell, RefCell};

use rcop_exec::{Engine, KeyRange, MemStore};
use rcop_proto::tipb;

use super::dag::table_range;
use super::{items, tpch};

thread_local! {
    static COUNT: Cell<u64> = const { Cell::new(0) };
    /// Sample one allocation in this many into `TRACES` (0: none).
    static TRACE_EVERY: Cell<u64> = const { Cell::new(0) };
    /// True while this thread is inside the tracer (its own allocations are not traced).
    static IN_TRACE: Cell<bool> = const { Cell::new(false) };
    static TRACES: RefCell<Vec<std::backtrace::Backtrace>> = const { RefCell::new(Vec::new()) };
}

/// The system allocator, counting every `alloc`, `alloc_zeroed` and `realloc` of the
/// calling thread.
#[derive(Debug)]
pub struct CountingAlloc;

fn bump() {
    let Ok(n) = COUNT.try_with(|c| {
        c.set(c.get() + 1);
        c.get()
    }) else {
        return;
    };
    let every = TRACE_EVERY.try_with(Cell::get).unwrap_or(0);
    if every == 0 || !n.is_multiple_of(every) || IN_TRACE.try_with(Cell::get).unwrap_or(true) {
        return;
    }
    let _ = IN_TRACE.try_with(|t| t.set(true));
    let bt = std::backtrace::Backtrace::force_capture();
    let _ = TRACES.try_with(|t| t.borrow_mut().push(bt));
    let _ = IN_TRACE.try_with(|t| t.set(false));
}

// SAFETY: every call is forwarded unchanged to `System`, which upholds the `GlobalAlloc`
// contract; the counting only touches const-initialized thread-locals (no allocation, no
// destructor), and the tracer guards against its own re-entry.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        bump();
        // SAFETY: the caller's `layout` contract is `System.alloc`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        bump();
        // SAFETY: as `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        bump();
        // SAFETY: `ptr` was allocated by `System` (every allocation goes there) with `layout`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as `realloc`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// The allocations the calling thread made so far.
pub fn allocations() -> u64 {
    COUNT.try_with(Cell::get).unwrap_or(0)
}

/// One request over a store.
pub struct Fixture {
    pub store: MemStore,
    pub ranges: Vec<KeyRange>,
    pub dag: tipb::DagRequest,
    /// The rows the request scans.
    pub rows: u64,
}

/// A hot path that must not allocate per row, as a fixture of about `rows` rows.
pub struct Scenario {
    pub name: &'static str,
    pub fixture: fn(i64) -> Fixture,
}

fn items_fixture(rows: i64, dag: tipb::DagRequest) -> Fixture {
    Fixture { store: items::items(rows), ranges: items::items_ranges(), dag, rows: rows as u64 }
}

fn lineitem_fixture(rows: i64, dag: tipb::DagRequest) -> Fixture {
    let (store, lines) = tpch::lineitem(rows as f64 / 6_000_000.0);
    let r = table_range(tpch::LINEITEM_ID, Some(tpch::KEYSPACE));
    Fixture {
        store,
        ranges: vec![KeyRange::new(r.start.to_vec(), r.end.to_vec())],
        dag,
        rows: lines.len() as u64,
    }
}

/// The scenarios: TPC-H Q1 and Q6, a TopN, a Selection + Projection (TypeChunk and
/// TypeDefault), a LIMIT of every row, a LIKE with a constant pattern, a bare scan encoded
/// both ways.
pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario { name: "q1", fixture: |n| lineitem_fixture(n, tpch::q1(true)) },
        Scenario { name: "q6", fixture: |n| lineitem_fixture(n, tpch::q6(true)) },
        Scenario { name: "top_n_10", fixture: |n| items_fixture(n, items::top_n_dag(10, true)) },
        Scenario {
            name: "selection_projection_chunk",
            fixture: |n| items_fixture(n, items::selection_projection_dag(true)),
        },
        Scenario {
            name: "selection_projection_default",
            fixture: |n| items_fixture(n, items::selection_projection_dag(false)),
        },
        Scenario {
            name: "limit_all_rows",
            fixture: |n| items_fixture(n, items::limit_dag(n as u64, true)),
        },
        Scenario {
            name: "like_const_pattern",
            fixture: |n| items_fixture(n, items::like_dag("%-1%a", true)),
        },
        Scenario { name: "scan_chunk", fixture: |n| items_fixture(n, items::scan_all_dag(true)) },
        Scenario {
            name: "scan_default",
            fixture: |n| items_fixture(n, items::scan_all_dag(false)),
        },
    ]
}

/// The scenario called `name`.
pub fn scenario(name: &str) -> Scenario {
    scenarios().into_iter().find(|s| s.name == name).unwrap()
}

/// Runs the fixture's request once to warm lazily built state, then counts the allocations
/// of a second run.
pub fn count_run(fx: &Fixture) -> u64 {
    let engine = Engine::default();
    let run = || engine.execute_dag(&fx.dag, &fx.ranges, 0, &mut fx.store.scanner()).unwrap();
    let warm = run();
    assert!(warm.response.error.is_none(), "{:?}", warm.response.error);
    drop(warm);
    let before = allocations();
    let out = run();
    let after = allocations();
    drop(out);
    after - before
}

/// The allocations of a scenario at N and 2N rows.
#[derive(Debug, Clone, Copy)]
pub struct Growth {
    /// Rows scanned at N and 2N.
    pub rows: (u64, u64),
    /// Allocations at N and 2N.
    pub allocs: (u64, u64),
}

impl Growth {
    /// The rows 2N has more.
    pub fn extra_rows(&self) -> u64 {
        self.rows.1 - self.rows.0
    }

    /// The allocations 2N makes more (0 when it makes fewer).
    pub fn extra_allocs(&self) -> u64 {
        self.allocs.1.saturating_sub(self.allocs.0)
    }

    /// Extra allocations per extra row.
    pub fn per_row(&self) -> f64 {
        self.extra_allocs() as f64 / self.extra_rows().max(1) as f64
    }

    /// Extra allocations per extra full batch (1024 rows).
    pub fn per_batch(&self) -> f64 {
        self.per_row() * rcop_exec::BATCH_MAX_SIZE as f64
    }
}

impl std::fmt::Display for Growth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} rows: {} allocations, {} rows: {} allocations; {:.3} per extra row, {:.1} per \
             extra batch of {}",
            self.rows.0,
            self.allocs.0,
            self.rows.1,
            self.allocs.1,
            self.per_row(),
            self.per_batch(),
            rcop_exec::BATCH_MAX_SIZE
        )
    }
}

/// Counts `s` at `n` and `2n` rows.
pub fn growth(s: &Scenario, n: i64) -> Growth {
    let (a, b) = ((s.fixture)(n), (s.fixture)(2 * n));
    Growth { rows: (a.rows, b.rows), allocs: (count_run(&a), count_run(&b)) }
}

/// Runs the fixture's request with one allocation in `every` traced, and returns the
/// traced call sites, most frequent first: each the first `depth` frames inside rcop
/// (allocator and std frames skipped), with how many sampled allocations came from it.
pub fn trace_sites(fx: &Fixture, every: u64, depth: usize) -> Vec<(String, usize)> {
    let engine = Engine::default();
    let warm = engine.execute_dag(&fx.dag, &fx.ranges, 0, &mut fx.store.scanner()).unwrap();
    drop(warm);
    TRACE_EVERY.with(|t| t.set(every));
    let out = engine.execute_dag(&fx.dag, &fx.ranges, 0, &mut fx.store.scanner());
    TRACE_EVERY.with(|t| t.set(0));
    drop(out);
    let traces = TRACES.with(|t| std::mem::take(&mut *t.borrow_mut()));
    let mut sites = std::collections::HashMap::<String, usize>::new();
    for bt in traces {
        let text = bt.to_string();
        let frames: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| {
                let function = l.split_once(": ").is_some_and(|(n, f)| {
                    n.bytes().all(|b| b.is_ascii_digit()) && f.contains("rcop_")
                });
                function || l.starts_with("at ") && l.contains("/crates/")
            })
            .filter(|l| !l.contains("support::alloc") && !l.contains("support/alloc.rs"))
            .take(2 * depth)
            .collect();
        *sites.entry(frames.join("\n    ")).or_default() += 1;
    }
    let mut v: Vec<_> = sites.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}
