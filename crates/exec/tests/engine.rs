//! Engine behaviour: paging, byte caps, range counts, summaries, warnings, scan errors and
//! malformed requests.

#![expect(clippy::unwrap_used, clippy::panic, reason = "fixture builders outside #[test] fns")]

mod support;

use proptest::prelude::*;
use prost::Message;
use rcop_datum::chunk::mysql_type as mt;
use rcop_datum::row::RowEncoder;
use rcop_datum::{Datum, key};
use rcop_exec::{
    Engine, EngineConfig, KeyRange, KvBatch, MemStore, ScanError, ScanSource, ScanStatus,
};
use rcop_proto::{coprocessor, errorpb, kvrpcpb, tipb};
use support::dag::*;

const TID: i64 = 90;

/// Table 90: handle h in 1..=n, column 1 = h * 10, column 2 = h % 3 (NULL when h % 7 == 0).
fn store(n: i64, keyspace: Option<u32>) -> MemStore {
    MemStore::from_pairs((1..=n).map(|h| {
        let mut k = prefix(keyspace);
        key::encode_record_key(&mut k, TID, h);
        let mut enc = RowEncoder::new();
        enc.int(1, h * 10);
        if h % 7 == 0 {
            enc.null(2);
        } else {
            enc.int(2, h % 3);
        }
        let mut v = Vec::new();
        enc.finish(&mut v).unwrap();
        (k, v)
    }))
}

fn cols() -> Vec<tipb::ColumnInfo> {
    let f = ft(mt::LONG_LONG);
    vec![column_info(-1, &f, true), column_info(1, &f, false), column_info(2, &f, false)]
}

fn run(
    engine: &Engine,
    dag: &tipb::DagRequest,
    ranges: Vec<coprocessor::KeyRange>,
    paging: u64,
    s: &MemStore,
) -> (coprocessor::Response, tipb::SelectResponse) {
    let mut req = request(dag, ranges);
    req.paging_size = paging;
    let resp = engine.handle(&req, &mut s.scanner());
    let sel = tipb::SelectResponse::decode(resp.data.clone()).unwrap();
    (resp, sel)
}

fn handles(sel: &tipb::SelectResponse) -> Vec<i64> {
    default_rows(sel, 1)
        .into_iter()
        .map(|r| match r[0] {
            Datum::Int(h) => h,
            ref d => panic!("{d:?}"),
        })
        .collect()
}

fn handle_key(h: i64, keyspace: Option<u32>) -> Vec<u8> {
    let mut k = prefix(keyspace);
    key::encode_record_key(&mut k, TID, h);
    k
}

#[test]
fn batches_grow_from_32_to_1024_one_chunk_each() {
    let s = store(3000, None);
    let (_, sel) = run(
        &Engine::default(),
        &dag(vec![scan(TID, cols(), false)], vec![0], false),
        vec![table_range(TID, None)],
        0,
        &s,
    );
    let sizes: Vec<usize> = sel
        .chunks
        .iter()
        .map(|c| Datum::decode_all(c.rows_data.as_deref().unwrap()).unwrap().len())
        .collect();
    assert_eq!(sizes, [32, 64, 128, 256, 512, 1024, 984]);
    assert_eq!(sel.output_counts, [3000]);
}

#[test]
fn paging_sets_the_scanned_range_and_resumes() {
    for keyspace in [None, Some(7)] {
        let s = store(500, keyspace);
        let full = table_range(TID, keyspace);
        let d = dag(
            vec![
                scan(TID, cols(), false),
                selection(vec![func(
                    120,
                    ft(mt::LONG_LONG),
                    vec![col(1, ft(mt::LONG_LONG)), int(0)],
                )]),
            ],
            vec![0],
            false,
        );
        let engine = Engine::default();
        let mut got = Vec::new();
        let mut range = full.clone();
        let mut pages = 0;
        loop {
            let (resp, sel) = run(&engine, &d, vec![range.clone()], 128, &s);
            assert!(sel.error.is_none());
            let hs = handles(&sel);
            pages += 1;
            got.extend(hs.iter().copied());
            match resp.range {
                Some(r) => {
                    assert!(hs.len() >= 128, "a page holds at least paging_size rows");
                    let last = *hs.last().unwrap();
                    let mut end = handle_key(last, keyspace);
                    end.push(0);
                    assert_eq!(r.start, range.start);
                    assert_eq!(r.end.to_vec(), end);
                    range = coprocessor::KeyRange { start: r.end, end: full.end.clone() };
                }
                None => break,
            }
        }
        assert_eq!(got, (1..=500).collect::<Vec<_>>());
        assert_eq!(pages, 4);
    }
}

#[test]
fn paging_backward_reports_the_lower_bound() {
    let s = store(300, None);
    let full = table_range(TID, None);
    let d = dag(vec![scan(TID, cols(), true)], vec![0], false);
    let (resp, sel) = run(&Engine::default(), &d, vec![full.clone()], 100, &s);
    let hs = handles(&sel);
    assert_eq!(hs.first(), Some(&300));
    let r = resp.range.unwrap();
    assert_eq!(r.start.to_vec(), handle_key(*hs.last().unwrap(), None));
    assert_eq!(r.end, full.end);
}

#[test]
fn byte_cap_ends_a_page_early_but_never_cuts_a_non_paging_answer() {
    let s = store(2000, None);
    let engine = Engine::new(EngineConfig::default().with_max_response_bytes(1000));
    let d = dag(vec![scan(TID, cols(), false)], vec![0, 1], true);
    // A paging request (the storage node forwards u32::MAX): the cap sets the page.
    let (resp, sel) = run(&engine, &d, vec![table_range(TID, None)], u64::from(u32::MAX), &s);
    assert!(resp.range.is_some());
    // Chunks of 32 and 64 rows of two 8-byte columns: 528 bytes, then 1056 in total.
    assert_eq!(sel.chunks.len(), 2);
    assert_eq!(sel.output_counts, [96]);
    assert_eq!(rcop_exec::count_rows(&sel, 2).unwrap(), 96);
    // A non-paging request: TiDB takes the response as the whole answer, so it is whole.
    let (resp, sel) = run(&engine, &d, vec![table_range(TID, None)], 0, &s);
    assert!(resp.range.is_none());
    assert_eq!(sel.output_counts, [2000]);
    assert_eq!(rcop_exec::count_rows(&sel, 2).unwrap(), 2000);
    let d = dag(vec![scan(TID, cols(), false)], vec![0, 1], false);
    let (_, sel) = run(&engine, &d, vec![table_range(TID, None)], 0, &s);
    assert_eq!(rcop_exec::count_rows(&sel, 2).unwrap(), 2000);
}

#[test]
fn output_counts_per_range_and_summaries() {
    let s = store(100, None);
    let r = |a: i64, b: i64| coprocessor::KeyRange {
        start: handle_key(a, None).into(),
        end: handle_key(b, None).into(),
    };
    let mut d = dag(vec![scan(TID, cols(), false), limit(25)], vec![0], false);
    d.collect_execution_summaries = Some(true);
    let (_, sel) = run(&Engine::default(), &d, vec![r(1, 11), r(50, 60), r(90, 200)], 0, &s);
    assert_eq!(handles(&sel).len(), 25);
    assert_eq!(sel.output_counts, [10, 10, 5]);
    assert_eq!(sel.execution_summaries.len(), 2);
    assert_eq!(sel.execution_summaries[1].num_produced_rows, Some(25));
    assert_eq!(sel.execution_summaries[0].executor_id.as_deref(), Some("TableFullScan_1"));
}

#[test]
fn warnings_are_bounded() {
    let s = store(50, None);
    let mut d = dag(
        vec![
            scan(TID, cols(), false),
            // `a / 0` (DivideReal over CastIntAsReal): one division-by-zero warning a row
            // (TiKV's integer MOD and DIV by zero raise none).
            projection(vec![func(
                211,
                ft(mt::DOUBLE),
                vec![func(2, ft(mt::DOUBLE), vec![col(1, ft(mt::LONG_LONG))]), real(0.0)],
            )]),
        ],
        vec![0],
        false,
    );
    d.max_warning_count = Some(3);
    let (_, sel) = run(&Engine::default(), &d, vec![table_range(TID, None)], 0, &s);
    assert_eq!(sel.warning_count, Some(50));
    assert_eq!(sel.warnings.len(), 3);
}

/// A source that fails with a given error.
struct Failing(ScanError);

impl ScanSource for Failing {
    fn start(&mut self, _: &KeyRange, _: bool) -> Result<(), ScanError> {
        Ok(())
    }
    fn next_batch(&mut self, _: usize, _: &mut KvBatch) -> Result<ScanStatus, ScanError> {
        Err(self.0.clone())
    }
}

#[test]
fn scan_errors_map_to_response_fields() {
    let d = dag(vec![scan(TID, cols(), false)], vec![0], false);
    let req = request(&d, vec![table_range(TID, None)]);
    let engine = Engine::default();
    let lock = kvrpcpb::LockInfo { lock_version: 42, ..Default::default() };
    let resp = engine.handle(&req, &mut Failing(ScanError::Locked(Box::new(lock.clone()))));
    assert_eq!(resp.locked, Some(lock));
    let region = errorpb::Error { message: "epoch".into(), ..Default::default() };
    let resp = engine.handle(&req, &mut Failing(ScanError::Region(Box::new(region.clone()))));
    assert_eq!(resp.region_error, Some(region));
    let resp = engine.handle(&req, &mut Failing(ScanError::Storage("disk".into())));
    assert_eq!(resp.other_error, "disk");
}

fn error_of(resp: &coprocessor::Response) -> String {
    let sel = tipb::SelectResponse::decode(resp.data.clone()).unwrap();
    sel.error.and_then(|e| e.msg).unwrap_or_default()
}

#[test]
fn malformed_requests_get_errors() {
    let s = store(10, None);
    let engine = Engine::default();
    let garbage =
        coprocessor::Request { tp: 103, data: vec![0xff, 0xff, 0xff].into(), ..Default::default() };
    assert!(
        error_of(&engine.handle(&garbage, &mut s.scanner())).contains("undecodable DAGRequest")
    );
    // An analyze request without its sub-request is the analyze code's error; an unknown
    // type is refused by name.
    let analyze = coprocessor::Request { tp: 104, ..Default::default() };
    let e = engine.handle(&analyze, &mut s.scanner()).other_error;
    assert!(e.starts_with("analyze request (tp 104): "), "{e}");
    let unknown = coprocessor::Request { tp: 300, ..Default::default() };
    assert_eq!(
        engine.handle(&unknown, &mut s.scanner()).other_error,
        "unsupported coprocessor request type 300"
    );
    // No executors, body-less scans, an unknown executor.
    let cases = [
        (dag(vec![], vec![], false), "no executors"),
        (
            dag(vec![tipb::Executor { tp: Some(0), ..Default::default() }], vec![], false),
            "tbl_scan",
        ),
        (
            dag(vec![tipb::Executor { tp: Some(1), ..Default::default() }], vec![], false),
            "idx_scan",
        ),
        (
            dag(
                vec![
                    scan(TID, cols(), false),
                    tipb::Executor { tp: Some(7), ..Default::default() },
                ],
                vec![],
                false,
            ),
            "TypeJoin (7)",
        ),
        (
            dag(
                vec![scan(TID, cols(), false), projection(vec![col(9, ft(mt::LONG_LONG))])],
                vec![0],
                false,
            ),
            "column offset 9",
        ),
    ];
    for (d, want) in cases {
        let got =
            error_of(&engine.handle(&request(&d, vec![table_range(TID, None)]), &mut s.scanner()));
        assert!(got.contains(want), "{got:?} should contain {want:?}");
    }
}

fn nested(depth: usize) -> tipb::Expr {
    let mut e = col(1, ft(mt::LONG_LONG));
    for _ in 0..depth {
        e = func(3108, ft(mt::LONG_LONG), vec![e]);
    }
    e
}

#[test]
fn expression_depth_is_bounded() {
    let s = store(3, None);
    let engine = Engine::default();
    let build = |depth| {
        dag(vec![scan(TID, cols(), false), projection(vec![nested(depth)])], vec![0], false)
    };
    // 99 nested functions plus the column are 100 levels: accepted; 100 + 1 are not.
    let ok = engine
        .execute_dag(
            &build(99),
            &[KeyRange::new(
                table_range(TID, None).start.to_vec(),
                table_range(TID, None).end.to_vec(),
            )],
            0,
            &mut s.scanner(),
        )
        .unwrap();
    assert!(ok.response.error.is_none());
    let err = engine.execute_dag(&build(100), &[], 0, &mut s.scanner()).unwrap_err();
    assert!(err.to_string().contains("deeper than 100"), "{err}");
    // Through the wire the protobuf decoder's own recursion limit also answers with an error.
    let resp = engine.handle(&request(&build(300), vec![table_range(TID, None)]), &mut s.scanner());
    assert!(!error_of(&resp).is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn garbled_dags_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200), flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..8)) {
        let s = store(20, None);
        let engine = Engine::default();
        // Random bytes.
        let req = coprocessor::Request { tp: 103, data: bytes.into(), ranges: vec![table_range(TID, None)], ..Default::default() };
        let _ = engine.handle(&req, &mut s.scanner());
        // A valid DAG with bytes overwritten.
        let mut good = dag(
            vec![
                scan(TID, cols(), false),
                selection(vec![func(120, ft(mt::LONG_LONG), vec![col(1, ft(mt::LONG_LONG)), int(3)])]),
                aggregation(vec![col(2, ft(mt::LONG_LONG))], vec![agg(3002, ft_dec(20, 0), vec![col(1, ft(mt::LONG_LONG))])]),
            ],
            vec![0, 1],
            true,
        )
        .encode_to_vec();
        for (at, b) in flips {
            let n = good.len();
            good[at % n] = b;
        }
        let req = coprocessor::Request { tp: 103, data: good.into(), ranges: vec![table_range(TID, None)], ..Default::default() };
        let _ = engine.handle(&req, &mut s.scanner());
    }

    #[test]
    fn garbled_rows_never_panic(values in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 1..20)) {
        let s = MemStore::from_pairs(values.into_iter().enumerate().map(|(i, v)| {
            let mut k = Vec::new();
            key::encode_record_key(&mut k, TID, i as i64);
            (k, v)
        }));
        let d = dag(vec![scan(TID, cols(), false), selection(vec![func(120, ft(mt::LONG_LONG), vec![col(1, ft(mt::LONG_LONG)), int(3)])])], vec![0, 1, 2], false);
        let _ = Engine::default().handle(&request(&d, vec![table_range(TID, None)]), &mut s.scanner());
    }
}
