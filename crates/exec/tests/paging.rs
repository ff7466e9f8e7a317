//! Paging with blocking executors, stream aggregation and partition TopN/Limit, as TiKV:
//! pages of an aggregation are partial results that merge to the whole answer, each page's
//! range is where the next resumes, stream aggregation equals hash aggregation on sorted
//! input and holds a bounded number of groups, partitions keep their top rows.

#![expect(clippy::unwrap_used, clippy::panic, reason = "fixture builders outside #[test] fns")]

mod support;

use std::collections::BTreeMap;

use proptest::prelude::*;
use prost::Message;
use rcop_datum::chunk::mysql_type as mt;
use rcop_datum::row::encode_row_v1;
use rcop_datum::{Datum, key};
use rcop_exec::{
    EvalConfig, EvalContext, ExecEnv, Executor, KeyRange, MemStore, StreamAggregationExecutor,
    TableScanExecutor,
};
use rcop_proto::{coprocessor, tipb};
use support::dag::*;

const TID: i64 = 55;

/// Table 55: handle h, column 1 = key(h) (NULL when `None`), column 2 = value(h).
fn store(rows: &[(Option<i64>, i64)]) -> MemStore {
    MemStore::from_pairs(rows.iter().enumerate().map(|(i, (k, v))| {
        let mut key = Vec::new();
        key::encode_record_key(&mut key, TID, i as i64 + 1);
        let k = k.map_or(Datum::Null, Datum::Int);
        let mut val = Vec::new();
        encode_row_v1(&[(1, k), (2, Datum::Int(*v))], &mut val).unwrap();
        (key, val)
    }))
}

fn cols() -> Vec<tipb::ColumnInfo> {
    let f = ft(mt::LONG_LONG);
    vec![column_info(-1, &f, true), column_info(1, &f, false), column_info(2, &f, false)]
}

fn i64t() -> tipb::FieldType {
    ft(mt::LONG_LONG)
}

/// COUNT(v), SUM(v), MAX(v) grouped by k, as hash (3) or stream (6) aggregation.
fn grouped(tp: i32) -> tipb::Executor {
    let mut e = aggregation(
        vec![col(1, i64t())],
        vec![
            agg(3001, i64t(), vec![col(2, i64t())]),
            agg(3002, ft_dec(65, 0), vec![col(2, i64t())]),
            agg(3005, i64t(), vec![col(2, i64t())]),
        ],
    );
    e.tp = Some(tp);
    e
}

fn run(
    d: &tipb::DagRequest,
    range: coprocessor::KeyRange,
    paging: u64,
    s: &MemStore,
    tweak: impl Fn(&mut coprocessor::Request),
) -> (Option<coprocessor::KeyRange>, Vec<Vec<Datum>>) {
    let mut req = request(d, vec![range]);
    req.paging_size = paging;
    tweak(&mut req);
    let resp = rcop_exec::Engine::default().handle(&req, &mut s.scanner());
    let sel = tipb::SelectResponse::decode(resp.data.clone()).unwrap();
    assert!(sel.error.is_none(), "{:?}", sel.error);
    (resp.range, default_rows(&sel, d.output_offsets.len()))
}

/// Pages through the table; every page's rows, and checks each page's range: it starts
/// where the request did and ends after the last key scanned.
fn pages(d: &tipb::DagRequest, paging: u64, s: &MemStore) -> Vec<Vec<Vec<Datum>>> {
    let full = table_range(TID, None);
    let mut range = full.clone();
    let mut out = Vec::new();
    loop {
        let (r, rows) = run(d, range.clone(), paging, s, |_| {});
        out.push(rows);
        match r {
            Some(r) => {
                assert_eq!(r.start, range.start);
                assert!(r.end > range.start && r.end <= full.end, "range inside the request");
                range = coprocessor::KeyRange { start: r.end, end: full.end.clone() };
            }
            None => return out,
        }
        assert!(out.len() < 1000, "paging must end");
    }
}

fn int_of(d: &Datum) -> i64 {
    match d {
        Datum::Int(x) => *x,
        Datum::Uint(x) => *x as i64,
        Datum::Decimal(x) => x.as_i64().value(),
        Datum::Null => 0,
        other => panic!("{other:?}"),
    }
}

/// Merges partial (count, sum, max, key) rows per key, as TiDB's final aggregation does.
fn merge(rows: impl IntoIterator<Item = Vec<Datum>>) -> BTreeMap<Option<i64>, (i64, i64, i64)> {
    let mut m: BTreeMap<Option<i64>, (i64, i64, i64)> = BTreeMap::new();
    for r in rows {
        let k = match r[3] {
            Datum::Int(k) => Some(k),
            _ => None,
        };
        let e = m.entry(k).or_insert((0, 0, i64::MIN));
        e.0 += int_of(&r[0]);
        e.1 += int_of(&r[1]);
        e.2 = e.2.max(int_of(&r[2]));
    }
    m
}

fn data(n: i64, keys: i64) -> Vec<(Option<i64>, i64)> {
    (0..n).map(|h| (if h % 97 == 0 { None } else { Some(h % keys) }, h * 3 % 101)).collect()
}

#[test]
fn hash_aggregation_pages_end_at_paging_size_groups() {
    let rows = data(5000, 40);
    let s = store(&rows);
    let d = dag(vec![scan(TID, cols(), false), grouped(3)], vec![0, 1, 2, 3], false);
    let whole = run(&d, table_range(TID, None), 0, &s, |_| {}).1;
    // Without paging nothing is cut: one row per key (40 keys and NULL).
    assert_eq!(whole.len(), 41);
    // Paging at 8 groups: every 1024-row input batch has all the keys, so each page is one
    // batch's partial groups, and the pages merge to the whole answer.
    let got = pages(&d, 8, &s);
    assert_eq!(got.len(), 5, "5000 rows in 1024-row batches");
    assert!(got.iter().all(|p| p.len() == 41));
    assert_eq!(merge(got.into_iter().flatten()), merge(whole));
}

#[test]
fn stream_aggregation_pages_merge_to_the_whole_answer() {
    // Sorted by key: 0 0 0 … 1 1 1 … (runs of 37 rows).
    let rows: Vec<(Option<i64>, i64)> = (0..3000).map(|h| (Some(h / 37), h % 11)).collect();
    let s = store(&rows);
    let d = dag(vec![scan(TID, cols(), false), grouped(6)], vec![0, 1, 2, 3], false);
    let whole = run(&d, table_range(TID, None), 0, &s, |_| {}).1;
    assert_eq!(whole.len(), 82);
    let hash = dag(vec![scan(TID, cols(), false), grouped(3)], vec![0, 1, 2, 3], false);
    assert_eq!(whole, run(&hash, table_range(TID, None), 0, &s, |_| {}).1);
    for paging in [1, 5, 30, 64] {
        let got = pages(&d, paging, &s);
        // (At 64 the groups wanted are reached only in the last input batch: one page.)
        assert_eq!(got.len() > 1, paging < 64, "paging {paging}");
        // No page ends before paging_size groups unless it is the last.
        for p in &got[..got.len() - 1] {
            assert!(p.len() as u64 >= paging, "paging {paging}: {}", p.len());
        }
        assert_eq!(merge(got.into_iter().flatten()), merge(whole.clone()), "paging {paging}");
    }
}

#[test]
fn simple_aggregation_and_non_paging_requests_are_whole() {
    let rows = data(3000, 5);
    let s = store(&rows);
    let count = aggregation(vec![], vec![agg(3001, i64t(), vec![col(2, i64t())])]);
    let d = dag(vec![scan(TID, cols(), false), count], vec![0], false);
    // One group never reaches a paging size above 1.
    let (r, got) = run(&d, table_range(TID, None), 64, &s, |_| {});
    assert!(r.is_none());
    assert_eq!(got, [[Datum::Uint(3000)]]);
    // At paging size 1 it does after the first batch, as TiKV.
    let got = pages(&d, 1, &s);
    assert_eq!(got.iter().map(|p| int_of(&p[0][0])).collect::<Vec<_>>(), [1024, 1024, 952]);
}

#[test]
fn stream_aggregation_holds_a_bounded_number_of_groups() {
    // 20000 groups of two rows each.
    let rows: Vec<(Option<i64>, i64)> = (0..40000).map(|h| (Some(h / 2), 1)).collect();
    let s = store(&rows);
    let d = dag(vec![scan(TID, cols(), false), grouped(6)], vec![0], false);
    let cfg = EvalConfig::from_dag(&d).unwrap();
    let range = table_range(TID, None);
    let ranges = vec![KeyRange { start: range.start.to_vec(), end: range.end.to_vec() }];
    let ts = d.executors[0].tbl_scan.as_ref().unwrap();
    let child = Box::new(TableScanExecutor::new(ts, ranges, &cfg).unwrap());
    let a = d.executors[1].aggregation.as_ref().unwrap();
    let mut ex = StreamAggregationExecutor::new(child, a, &cfg, 100).unwrap();
    let mut ctx = EvalContext::new(cfg);
    let mut scanner = s.scanner();
    let mut env = ExecEnv { ctx: &mut ctx, source: &mut scanner };
    let mut total = 0;
    loop {
        let r = ex.next_batch(1024, &mut env).unwrap();
        total += r.batch.len();
        // The open group plus one 1024-row input batch's groups, never all groups so far.
        assert!(ex.peak_groups() <= 1025, "{}", ex.peak_groups());
        if r.drained {
            break;
        }
    }
    assert_eq!(total, 20000);
    assert!(ex.peak_groups() > 1, "groups were held");
}

#[test]
fn top_n_passes_rows_through_when_its_limit_exceeds_the_page() {
    let rows = data(2000, 7);
    let s = store(&rows);
    let top = |n| top_n(vec![(col(2, i64t()), true)], n);
    // limit 1500 > paging 128: rows pass through and the page ends at 128 rows.
    let d = dag(vec![scan(TID, cols(), false), top(1500)], vec![0], false);
    let (r, got) = run(&d, table_range(TID, None), 128, &s, |_| {});
    assert!(r.is_some());
    assert_eq!(
        got.iter().map(|r| int_of(&r[0])).collect::<Vec<_>>(),
        (1..=128).collect::<Vec<_>>()
    );
    // limit 10 <= paging: the whole TopN in one page.
    let d = dag(vec![scan(TID, cols(), false), top(10)], vec![2], false);
    let (r, got) = run(&d, table_range(TID, None), 128, &s, |_| {});
    assert!(r.is_none());
    assert_eq!(got.len(), 10);
    assert!(got.iter().all(|r| int_of(&r[0]) == 100));
}

fn by(e: tipb::Expr, desc: bool) -> tipb::ByItem {
    tipb::ByItem { expr: Some(e), desc: Some(desc), ..Default::default() }
}

/// The naive model: per partition (in input order), the `n` best rows by `v` descending,
/// ties in input order; `None` for no order (a partition's first `n` rows).
fn model(rows: &[(Option<i64>, i64)], n: usize, desc_v: bool) -> Vec<(i64, Option<i64>, i64)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < rows.len() {
        let mut j = i;
        while j < rows.len() && rows[j].0 == rows[i].0 {
            j += 1;
        }
        let mut part: Vec<(i64, Option<i64>, i64)> =
            (i..j).map(|h| (h as i64 + 1, rows[h].0, rows[h].1)).collect();
        if desc_v {
            part.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
        }
        out.extend(part.into_iter().take(n));
        i = j;
    }
    out
}

fn triples(rows: Vec<Vec<Datum>>) -> Vec<(i64, Option<i64>, i64)> {
    rows.into_iter()
        .map(|r| {
            let k = match r[1] {
                Datum::Int(k) => Some(k),
                _ => None,
            };
            (int_of(&r[0]), k, int_of(&r[2]))
        })
        .collect()
}

#[test]
fn partition_top_n_and_limit_keep_each_partitions_top_rows() {
    // Partitions in runs (NULL first), values scrambled.
    let rows: Vec<(Option<i64>, i64)> =
        (0..3000).map(|h| (if h < 40 { None } else { Some(h / 53) }, h * 7919 % 1000)).collect();
    let s = store(&rows);
    for n in [0, 1, 3, 60] {
        let mut t = top_n(vec![(col(2, i64t()), true)], n);
        t.top_n.as_mut().unwrap().partition_by.push(by(col(1, i64t()), false));
        let d = dag(vec![scan(TID, cols(), false), t], vec![0, 1, 2], false);
        let got = triples(run(&d, table_range(TID, None), 0, &s, |_| {}).1);
        assert_eq!(got, model(&rows, n as usize, true), "TopN {n}");
        let mut l = limit(n);
        l.limit.as_mut().unwrap().partition_by.push(by(col(1, i64t()), false));
        let d = dag(vec![scan(TID, cols(), false), l], vec![0, 1, 2], false);
        let got = triples(run(&d, table_range(TID, None), 0, &s, |_| {}).1);
        assert_eq!(got, model(&rows, n as usize, false), "Limit {n}");
    }
    // Under paging with 2 * limit above the page, rows pass through, as TiKV's.
    let mut l = limit(100);
    l.limit.as_mut().unwrap().partition_by.push(by(col(1, i64t()), false));
    let d = dag(vec![scan(TID, cols(), false), l], vec![0, 1, 2], false);
    let (r, got) = run(&d, table_range(TID, None), 128, &s, |_| {});
    assert!(r.is_some());
    assert_eq!(
        triples(got),
        (0..128).map(|h| (h as i64 + 1, rows[h].0, rows[h].1)).collect::<Vec<_>>()
    );
}

#[test]
fn scanned_bytes_and_keys_end_a_page_where_the_scan_can_resume() {
    let rows = data(3000, 5);
    let s = store(&rows);
    let d = dag(vec![scan(TID, cols(), false)], vec![0], false);
    // paging_size_bytes ends a paging request's page after the batch that reaches it.
    let (r, got) = run(&d, table_range(TID, None), 100_000, &s, |q| q.paging_size_bytes = 2000);
    assert!(r.is_some());
    assert!(got.len() < 3000 && !got.is_empty(), "{}", got.len());
    // It is a paging-only budget: a non-paging request is whole.
    let (r, got) = run(&d, table_range(TID, None), 0, &s, |q| q.paging_size_bytes = 2000);
    assert!(r.is_none());
    assert_eq!(got.len(), 3000);
    // max_keys_read stops any request once that many keys were scanned, with the range.
    let (r, got) = run(&d, table_range(TID, None), 0, &s, |q| q.max_keys_read = 100);
    let r = r.unwrap();
    let last = int_of(&got.last().unwrap()[0]);
    assert!(got.len() >= 100 && got.len() < 3000, "{}", got.len());
    let mut end = Vec::new();
    key::encode_record_key(&mut end, TID, last);
    end.push(0);
    assert_eq!(r.end.to_vec(), end);
    // Neither cuts a stream aggregation's open group: the page runs on to the end.
    let sorted: Vec<(Option<i64>, i64)> = (0..3000).map(|h| (Some(0), h)).collect();
    let s = store(&sorted);
    let d = dag(vec![scan(TID, cols(), false), grouped(6)], vec![0, 1, 2, 3], false);
    let (r, got) = run(&d, table_range(TID, None), 0, &s, |q| q.max_keys_read = 100);
    assert!(r.is_none());
    assert_eq!(int_of(&got[0][0]), 3000);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Stream aggregation over input sorted by the key gives what hash aggregation gives
    /// (whose first-seen order is then the input order), for every function.
    #[test]
    fn stream_equals_hash_on_sorted_input(
        runs in proptest::collection::vec((0i64..4, 1usize..300), 1..12),
        vals in proptest::collection::vec(-1000i64..1000, 1..2000),
    ) {
        let mut rows = Vec::new();
        let mut k = None::<i64>;
        for (step, len) in runs {
            // NULL first, then increasing keys (sorted as TiDB's order by key).
            for _ in 0..len {
                let v = vals[rows.len() % vals.len()];
                rows.push((k, v));
            }
            k = Some(k.map_or(0, |k| k + step + 1));
        }
        let s = store(&rows);
        let d = ft_dec(65, 0);
        let fns = vec![
            agg(3001, i64t(), vec![col(2, i64t())]),
            agg(3002, d.clone(), vec![col(2, i64t())]),
            agg(3003, d.clone(), vec![col(2, i64t())]),
            agg(3004, i64t(), vec![col(2, i64t())]),
            agg(3005, i64t(), vec![col(2, i64t())]),
            agg(3006, i64t(), vec![col(2, i64t())]),
            agg(3009, i64t(), vec![col(2, i64t())]),
            agg(3010, i64t(), vec![col(2, i64t())]),
            agg(3015, d.clone(), vec![col(2, i64t())]),
            agg(3021, i64t(), vec![col(2, i64t())]),
        ];
        let width = 1 + 1 + 2 + 1 + 1 + 1 + 1 + 1 + 3 + 1 + 1;
        let mut out = Vec::new();
        for tp in [3, 6] {
            let mut e = aggregation(vec![col(1, i64t())], fns.clone());
            e.tp = Some(tp);
            let d = dag(vec![scan(TID, cols(), false), e], (0..width).collect(), true);
            let d = tipb::DagRequest { encode_type: Some(0), ..d };
            out.push(run(&d, table_range(TID, None), 0, &s, |_| {}).1);
        }
        prop_assert_eq!(&out[0], &out[1]);
    }
}
