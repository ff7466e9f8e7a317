//! Per-request limits (`Engine::handle_limited`): a deadline, a cancel flag and a memory
//! budget stop a request with an `Abort` — between batches, inside long kernels, and as
//! hash-aggregation groups, TopN rows and response chunks grow — and every byte granted is
//! given back.

#![expect(clippy::unwrap_used, clippy::panic, reason = "fixture builders and test asserts")]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use prost::Message;
use rcop_datum::chunk::mysql_type as mt;
use rcop_datum::row::encode_row_v1;
use rcop_datum::{Datum, key};
use rcop_exec::{
    Abort, CappedBudget, Engine, ExecLimits, KeyRange, KvBatch, MemStore, ScanError, ScanSource,
    ScanStatus,
};
use rcop_proto::{coprocessor, tipb};
use support::dag::*;

const TID: i64 = 9;
const LIKE: i32 = 4310;
/// utf8mb4_bin.
const BIN: i32 = -46;

/// `n` rows `(c1 BIGINT = key(i), c2 VARCHAR = text(i))`.
fn table(n: usize, key_of: impl Fn(usize) -> i64, text: impl Fn(usize) -> Vec<u8>) -> MemStore {
    MemStore::from_pairs((0..n).map(|i| {
        let mut k = Vec::new();
        key::encode_record_key(&mut k, TID, i as i64 + 1);
        let mut v = Vec::new();
        encode_row_v1(&[(1, Datum::Int(key_of(i))), (2, Datum::Bytes(text(i)))], &mut v).unwrap();
        (k, v)
    }))
}

fn columns() -> Vec<tipb::ColumnInfo> {
    vec![column_info(1, &ft(mt::LONG_LONG), false), column_info(2, &ft_str(BIN), false)]
}

fn c1() -> tipb::Expr {
    col(0, ft(mt::LONG_LONG))
}

fn c2() -> tipb::Expr {
    col(1, ft_str(BIN))
}

fn run(
    d: &tipb::DagRequest,
    store: &MemStore,
    limits: &ExecLimits,
) -> Result<tipb::SelectResponse, Abort> {
    let req = request(d, vec![table_range(TID, None)]);
    run_on(&req, &mut store.scanner(), limits)
}

fn run_on(
    req: &coprocessor::Request,
    source: &mut dyn ScanSource,
    limits: &ExecLimits,
) -> Result<tipb::SelectResponse, Abort> {
    let resp = Engine::default().handle_limited(req, source, limits)?;
    assert!(resp.other_error.is_empty(), "{}", resp.other_error);
    let sel = tipb::SelectResponse::decode(resp.data).unwrap();
    if let Some(e) = &sel.error {
        panic!("error response: {e:?}");
    }
    Ok(sel)
}

fn budget(bytes: usize) -> (Arc<CappedBudget>, ExecLimits) {
    let b = Arc::new(CappedBudget::new(bytes));
    (b.clone(), ExecLimits::default().with_memory(b))
}

fn count_rows(sel: &tipb::SelectResponse, width: usize) -> usize {
    default_rows(sel, width).len()
}

#[test]
fn a_past_deadline_aborts_and_no_limits_run_as_handle() {
    let store = table(100, |i| i as i64, |_| b"x".to_vec());
    let d = dag(vec![scan(TID, columns(), false)], vec![0], false);
    let past = ExecLimits::default().with_deadline(Instant::now());
    assert_eq!(run(&d, &store, &past), Err(Abort::DeadlineExceeded));
    let far = ExecLimits::default().with_deadline(Instant::now() + Duration::from_secs(600));
    assert_eq!(count_rows(&run(&d, &store, &far).unwrap(), 1), 100);
    // `handle` is `handle_limited` without limits.
    let req = request(&d, vec![table_range(TID, None)]);
    let plain = Engine::default().handle(&req, &mut store.scanner());
    let limited =
        Engine::default().handle_limited(&req, &mut store.scanner(), &ExecLimits::default());
    assert_eq!(limited.unwrap(), plain);
}

/// A source that sets the cancel flag once it has served `after` batches.
#[derive(Debug)]
struct CancelAfter<'a> {
    inner: rcop_exec::MemScanner<'a>,
    flag: Arc<AtomicBool>,
    after: usize,
    served: usize,
}

impl ScanSource for CancelAfter<'_> {
    fn start(&mut self, range: &KeyRange, desc: bool) -> Result<(), ScanError> {
        self.inner.start(range, desc)
    }

    fn next_batch(&mut self, max: usize, out: &mut KvBatch) -> Result<ScanStatus, ScanError> {
        self.served += 1;
        if self.served == self.after {
            self.flag.store(true, Ordering::Relaxed);
        }
        self.inner.next_batch(max, out)
    }
}

#[test]
fn a_cancel_flag_stops_blocking_executors_between_batches() {
    let store = table(20_000, |i| (i % 7) as i64, |_| b"x".to_vec());
    let count = agg(3001, ft(mt::LONG_LONG), vec![c1()]);
    // Hash aggregation and TopN read their whole input before returning a row: the check
    // is in the scan, batch by batch.
    for exec in [
        aggregation(vec![c1()], vec![count]),
        top_n(vec![(c1(), false)], 10),
        selection(vec![c1()]),
    ] {
        let d = dag(vec![scan(TID, columns(), false), exec], vec![0], false);
        let req = request(&d, vec![table_range(TID, None)]);
        let flag = Arc::new(AtomicBool::new(false));
        let mut src =
            CancelAfter { inner: store.scanner(), flag: flag.clone(), after: 3, served: 0 };
        let limits = ExecLimits::default().with_cancel_flag(flag);
        assert_eq!(run_on(&req, &mut src, &limits), Err(Abort::Cancelled));
        // Stopped at the next batch, not at the end of the 20 batches of input.
        assert_eq!(src.served, 3);
    }
}

#[test]
fn hash_aggregation_groups_grow_under_the_budget() {
    const N: usize = 100_000;
    let store = table(N, |i| i as i64, |_| Vec::new());
    let count = agg(3001, ft(mt::LONG_LONG), vec![c1()]);
    let d = dag(
        vec![scan(TID, columns(), false), aggregation(vec![c1()], vec![count])],
        vec![0, 1],
        false,
    );
    let (b, limits) = budget(1 << 20);
    match run(&d, &store, &limits) {
        Err(Abort::OverBudget { requested, held }) => {
            assert!(requested > 0 && held + requested > 1 << 20, "{requested} {held}");
        }
        other => panic!("expected OverBudget, got {other:?}"),
    }
    // Everything given back, and never more than the budget held.
    assert_eq!(b.used(), 0);
    assert!(b.peak() <= 1 << 20);

    let (b, limits) = budget(1 << 30);
    let sel = run(&d, &store, &limits).unwrap();
    assert_eq!(count_rows(&sel, 2), N);
    assert_eq!(b.used(), 0);
    // At least the groups' keys and state slots were accounted.
    assert!(b.peak() > N * 64, "peak {}", b.peak());
}

#[test]
fn min_max_and_first_row_strings_are_accounted() {
    const GROUPS: usize = 10;
    let store = table(200, |i| (i % GROUPS) as i64, |i| vec![b'a' + (i % 26) as u8; 20_000]);
    let peak = |f: tipb::Expr| {
        let d = dag(
            vec![scan(TID, columns(), false), aggregation(vec![c1()], vec![f])],
            vec![0],
            false,
        );
        let (b, limits) = budget(1 << 30);
        run(&d, &store, &limits).unwrap();
        assert_eq!(b.used(), 0);
        b.peak()
    };
    let count = peak(agg(3001, ft(mt::LONG_LONG), vec![c2()]));
    for tp in [3004 /* MIN */, 3005 /* MAX */, 3006 /* FIRST_ROW */] {
        let strings = peak(agg(tp, ft_str(BIN), vec![c2()]));
        // One 20 KB value per group held (the response has another copy of each).
        assert!(strings >= count + GROUPS * 20_000, "{tp}: {strings} vs {count}");
    }
}

#[test]
fn top_n_with_a_huge_limit_holds_only_its_rows() {
    const N: usize = 5_000;
    let store = table(N, |i| ((i * 7919) % N) as i64, |_| b"row".to_vec());
    for limit in [u64::MAX, 1_000_000_000_000] {
        let d = dag(
            vec![scan(TID, columns(), false), top_n(vec![(c1(), false)], limit)],
            vec![0],
            false,
        );
        let (b, limits) = budget(1 << 30);
        let rows = default_rows(&run(&d, &store, &limits).unwrap(), 1);
        assert_eq!(rows.len(), N);
        let keys: Vec<i64> = rows
            .iter()
            .map(|r| match r[0] {
                Datum::Int(v) => v,
                ref d => panic!("{d:?}"),
            })
            .collect();
        assert!(keys.is_sorted());
        assert_eq!(b.used(), 0);
        // The rows held, not the limit: a few hundred bytes a row.
        assert!(b.peak() < N * 1_000, "peak {}", b.peak());
        let (b, limits) = budget(64 << 10);
        assert!(matches!(run(&d, &store, &limits), Err(Abort::OverBudget { .. })));
        assert_eq!(b.used(), 0);
    }
}

#[test]
fn limit_with_a_huge_count_passes_rows_through() {
    const N: usize = 3_000;
    let store = table(N, |i| i as i64, |_| b"row".to_vec());
    let d = dag(vec![scan(TID, columns(), false), limit(u64::MAX)], vec![0], false);
    let (b, limits) = budget(1 << 20);
    assert_eq!(count_rows(&run(&d, &store, &limits).unwrap(), 1), N);
    assert_eq!(b.used(), 0);
    // What is accounted is the response (chunks, then the encoded copy), no more.
    assert!(b.peak() < 100 * N, "peak {}", b.peak());
    // A response larger than the budget is refused.
    let (_, limits) = budget(4 << 10);
    assert!(matches!(run(&d, &store, &limits), Err(Abort::OverBudget { .. })));
}

#[test]
fn a_deadline_stops_a_long_like_inside_the_kernel() {
    // One row of 1 MB and a pattern with `_`: the backtracking walk is text × pattern
    // (about 2·10¹⁰ steps); only a check inside the kernel stops it.
    let store = table(1, |_| 1, |_| vec![b'a'; 1 << 20]);
    let mut pattern = "%".to_string();
    pattern.push_str(&"a".repeat(20_000));
    pattern.push_str("_b");
    let like = func(LIKE, ft(mt::LONG_LONG), vec![c2(), string(&pattern, BIN), int(92)]);
    let d = dag(vec![scan(TID, columns(), false), selection(vec![like])], vec![0], false);
    let start = Instant::now();
    let limits = ExecLimits::default().with_deadline(start + Duration::from_millis(200));
    assert_eq!(run(&d, &store, &limits), Err(Abort::DeadlineExceeded));
    // Stopped near the deadline rather than after the whole match (minutes).
    assert!(start.elapsed() < Duration::from_secs(30), "{:?}", start.elapsed());
}

#[test]
fn percent_only_like_over_a_long_text_is_linear_through_the_engine() {
    let store = table(
        4,
        |i| i as i64,
        |i| {
            let mut t = vec![b'a'; 1 << 20];
            if i % 2 == 0 {
                t.push(b'b');
            }
            t
        },
    );
    let pattern = format!("{}%b", "%a".repeat(5_000));
    let like = func(LIKE, ft(mt::LONG_LONG), vec![c2(), string(&pattern, BIN), int(92)]);
    let d = dag(vec![scan(TID, columns(), false), selection(vec![like])], vec![0], false);
    let sel = run(&d, &store, &ExecLimits::default()).unwrap();
    assert_eq!(default_rows(&sel, 1), [[Datum::Int(0)], [Datum::Int(2)]]);
}

#[test]
fn a_like_pattern_over_the_cap_is_an_error_response() {
    let store = table(1, |_| 1, |_| b"a".to_vec());
    let pattern = "%".repeat(rcop_exec::MAX_LIKE_PATTERN + 1);
    let like = func(LIKE, ft(mt::LONG_LONG), vec![c2(), string(&pattern, BIN), int(92)]);
    let d = dag(vec![scan(TID, columns(), false), selection(vec![like])], vec![0], false);
    let req = request(&d, vec![table_range(TID, None)]);
    let resp = Engine::default().handle(&req, &mut store.scanner());
    let sel = tipb::SelectResponse::decode(resp.data).unwrap();
    let msg = sel.error.unwrap().msg.unwrap();
    assert!(msg.contains("LIKE pattern"), "{msg}");
}

#[test]
fn a_million_groups_stop_at_a_small_budget() {
    const N: usize = 1_000_000;
    let store = MemStore::from_pairs((0..N).map(|i| {
        let mut k = Vec::new();
        key::encode_record_key(&mut k, TID, i as i64 + 1);
        let mut v = Vec::new();
        encode_row_v1(&[(1, Datum::Int(i as i64))], &mut v).unwrap();
        (k, v)
    }));
    let count = agg(3001, ft(mt::LONG_LONG), vec![c1()]);
    let d = dag(
        vec![scan(TID, columns(), false), aggregation(vec![c1()], vec![count])],
        vec![0, 1],
        false,
    );
    let (b, limits) = budget(8 << 20);
    let req = request(&d, vec![table_range(TID, None)]);
    let mut src = CancelAfter {
        inner: store.scanner(),
        flag: Arc::new(AtomicBool::new(false)),
        after: usize::MAX,
        served: 0,
    };
    assert!(matches!(run_on(&req, &mut src, &limits), Err(Abort::OverBudget { .. })));
    assert_eq!(b.used(), 0);
    // Stopped once the groups outgrew 8 MiB: a small part of the input was read.
    assert!(src.served < N / 1024 / 4, "{} batches read", src.served);
}
