//! One request on many cores: random tables, random DAG shapes, random ranges and random
//! split keys; the split request's answer must equal the whole request's — row for row where
//! the order is defined (scans, selections, projections, TopN, Limit), after TiDB's final
//! aggregation for aggregations — with and without paging, in both encodings, both scan
//! directions.

#![expect(clippy::unwrap_used, reason = "fixture builders outside #[test] fns")]

mod support;

/// Random cells of the corpus tables (proptest strategies: not in `support`, which crates
/// without proptest include too).
#[path = "support/cells.rs"]
mod cells;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use cells::{cell_dec, cell_int, cell_str};
use proptest::prelude::*;
use prost::Message;
use rcop_datum::{Decimal, key};
use rcop_exec::{
    Abort, CappedBudget, Combine, Engine, EngineConfig, ExecLimits, KeyRange, KvBatch, MemStore,
    ScanError, ScanSource, ScanStatus, Whole,
};
use rcop_proto::{coprocessor, tipb};
use support::corpus::{Case, Table, TableSpec, build_dag, build_table};
use support::dag::request;
use support::reference;

const TABLE: i64 = 77;

/// How the answer of a plan is compared.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// Row for row.
    Ordered,
    /// Row for row, except the rows the parts scanned (`output_counts`) for a Limit.
    Limit,
    /// Partial aggregates: merged per group key (the last `keys` columns) by `ops`.
    Agg { ops: &'static [Op], keys: usize },
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Sum,
    Max,
    Min,
    First,
}

/// Rows with handles 1..=n (some deleted: a gap of handles).
fn rows() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec(
        (any::<bool>(), cell_int(), cell_int(), cell_dec(), cell_str()),
        0..80,
    )
    .prop_map(|rs| {
        rs.into_iter()
            .enumerate()
            .filter(|(_, (keep, ..))| *keep)
            .map(|(i, (_, a, b, c, s))| format!("{} | {a} | {b} | {c} | {s}", i + 1))
            .collect()
    })
}

/// A plan over the scan schema (#0 id, #1 a, #2 b, #3 c decimal, #4 s string) and how its
/// answers compare.
fn plan() -> impl Strategy<Value = (Vec<String>, Kind, bool)> {
    let cond = prop_oneof![
        (0..4usize, -5i64..5)
            .prop_map(|(op, k)| format!("{}(#1, {k})", ["lt", "ge", "eq", "ne"][op])),
        (-5i64..5).prop_map(|k| format!("gt(#3, {k}.5m)")),
        Just("isnull(#2)".to_string()),
        Just("or(lt(#1, #2), eq(#4, 'a'))".to_string()),
    ];
    let sel = proptest::option::of(cond.prop_map(|c| format!("sel {c}")));
    const GROUPED: &[Op] = &[Op::Sum, Op::Sum, Op::Max, Op::Min];
    const GROUPED2: &[Op] = &[Op::Sum, Op::Sum, Op::Sum, Op::Sum];
    const SIMPLE: &[Op] = &[Op::Sum, Op::Sum, Op::First, Op::Max];
    let tail = prop_oneof![
        Just((vec![], Kind::Ordered)),
        Just((
            vec!["agg count(1); sum(#1); max(#3); min(#4) by #4".to_string()],
            Kind::Agg { ops: GROUPED, keys: 1 }
        )),
        Just((
            vec!["agg count(#2); sum(#3); avg(#1) by #1; #4".to_string()],
            Kind::Agg { ops: GROUPED2, keys: 2 }
        )),
        Just((
            vec!["agg count(1); sum(#3); first(#0); max(#1)".to_string()],
            Kind::Agg { ops: SIMPLE, keys: 0 }
        )),
        (1u64..12).prop_map(|k| (vec![format!("topn {k} by #1 desc; #3")], Kind::Ordered)),
        (1u64..12).prop_map(|k| (vec![format!("topn {k} by #4")], Kind::Ordered)),
        (0u64..30).prop_map(|k| (vec![format!("limit {k}")], Kind::Limit)),
        Just((
            vec![
                "proj plus(#1, #2); mul(#3, #3); minus(#3, 1m); if(gt(#1, 0), #4, 'z')".to_string()
            ],
            Kind::Ordered
        )),
        Just((vec!["proj mul(#3, 2m); #0".to_string(), "topn 3 by #0".to_string()], Kind::Ordered)),
    ];
    (sel, tail, any::<bool>())
        .prop_map(|(s, (t, kind), stream)| (s.into_iter().chain(t).collect(), kind, stream))
}

fn record_key(h: i64) -> Vec<u8> {
    let mut k = Vec::new();
    key::encode_record_key(&mut k, TABLE, h);
    k
}

fn table(rows: Vec<String>, v1: bool) -> Table {
    build_table(&TableSpec {
        name: "r".into(),
        id: TABLE,
        keyspace: None,
        format: if v1 { "v1".into() } else { "v2".into() },
        common_pk: vec![],
        columns: vec![
            "id bigint pk".into(),
            "a bigint".into(),
            "b bigint".into(),
            "c decimal(8,2)".into(),
            "s varchar(4)".into(),
        ],
        rows,
    })
}

fn case(plan: Vec<String>, desc: bool) -> Case {
    Case {
        name: "split".into(),
        table: "r".into(),
        scan: vec!["id".into(), "a".into(), "b".into(), "c".into(), "s".into()],
        desc,
        plan,
        output: None,
        expect: vec![],
        sorted: false,
        error: None,
        flags: 0,
        sql_mode: 0,
        tz: None,
        tz_offset: None,
        warnings: None,
        reference: false,
    }
}

/// Request ranges from sorted handle bounds: `[b0, b1), [b2, b3), …`; the whole table for
/// no bounds.
fn ranges(bounds: &[i64]) -> Vec<coprocessor::KeyRange> {
    let mut b: Vec<i64> = bounds.to_vec();
    b.sort_unstable();
    b.dedup();
    if b.len() < 2 {
        let t = support::dag::table_range(TABLE, None);
        return vec![t];
    }
    b.chunks_exact(2)
        .map(|w| coprocessor::KeyRange {
            start: record_key(w[0]).into(),
            end: record_key(w[1]).into(),
        })
        .collect()
}

/// What TiDB's final aggregation makes of partial rows: one row per group key, sorted.
fn final_agg(rows: &[String], ops: &[Op], keys: usize) -> Vec<String> {
    let mut groups: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
    let mut order: Vec<Vec<String>> = Vec::new();
    for r in rows {
        let cells: Vec<String> = r.split(" | ").map(str::to_string).collect();
        let (vals, key) = cells.split_at(cells.len() - keys);
        let key = key.to_vec();
        match groups.get_mut(&key) {
            None => {
                order.push(key.clone());
                groups.insert(key, vals.to_vec());
            }
            Some(acc) => {
                for ((a, v), op) in acc.iter_mut().zip(vals).zip(ops) {
                    *a = merge(a, v, *op);
                }
            }
        }
    }
    let mut out: Vec<String> = groups
        .into_iter()
        .map(|(k, v)| v.into_iter().chain(k).collect::<Vec<_>>().join(" | "))
        .collect();
    out.sort();
    out
}

fn merge(a: &str, b: &str, op: Op) -> String {
    const NULL: &str = "\\N";
    if op == Op::First {
        return a.to_string();
    }
    if a == NULL {
        return b.to_string();
    }
    if b == NULL {
        return a.to_string();
    }
    match (a.parse::<Decimal>(), b.parse::<Decimal>()) {
        (Ok(x), Ok(y)) => match op {
            Op::Sum => x.add(&y).into_result().unwrap().to_string(),
            Op::Max => if x >= y { a } else { b }.to_string(),
            Op::Min => if x <= y { a } else { b }.to_string(),
            Op::First => unreachable!(),
        },
        _ => match op {
            Op::Max => a.max(b).to_string(),
            _ => a.min(b).to_string(),
        },
    }
}

/// Everything a response says that must agree, rows rendered and compared by `kind`.
#[derive(Debug, PartialEq)]
struct Answer {
    rows: Result<Vec<String>, String>,
    counts: Vec<i64>,
    warnings: i64,
}

fn answer(
    resp: &coprocessor::Response,
    fts: &[tipb::FieldType],
    chunk: bool,
    kind: Kind,
) -> Answer {
    assert!(resp.region_error.is_none() && resp.locked.is_none(), "{resp:?}");
    assert!(resp.other_error.is_empty(), "{}", resp.other_error);
    let sel = tipb::SelectResponse::decode(resp.data.clone()).unwrap();
    if let Some(e) = &sel.error {
        return Answer {
            rows: Err(e.msg.clone().unwrap_or_default()),
            counts: vec![],
            warnings: 0,
        };
    }
    let rows = reference::response_rows(&sel, fts, chunk);
    let rows = match kind {
        Kind::Agg { ops, keys } => final_agg(&rows, ops, keys),
        _ => rows,
    };
    let counts = if kind == Kind::Limit { vec![] } else { sel.output_counts.clone() };
    Answer { rows: Ok(rows), counts, warnings: sel.warning_count.unwrap_or(0) }
}

/// The ranges TiDB asks for after a page whose `range` is `scanned`.
fn remaining(
    ranges: &[coprocessor::KeyRange],
    scanned: &coprocessor::KeyRange,
    desc: bool,
) -> Vec<coprocessor::KeyRange> {
    let mut out = Vec::new();
    for r in ranges {
        let mut r = r.clone();
        if desc {
            if r.start >= scanned.start {
                continue;
            }
            if r.end.is_empty() || r.end > scanned.start {
                r.end = scanned.start.clone();
            }
        } else {
            if !r.end.is_empty() && r.end <= scanned.end {
                continue;
            }
            if r.start < scanned.end {
                r.start = scanned.end.clone();
            }
        }
        out.push(r);
    }
    out
}

/// Runs a request to the end page by page (TiDB's loop), through `run`; the pages' rows in
/// order (desc pages come last rows first, as TiDB reads them).
fn all_pages(
    mut req: coprocessor::Request,
    desc: bool,
    fts: &[tipb::FieldType],
    chunk: bool,
    mut run: impl FnMut(&coprocessor::Request) -> coprocessor::Response,
) -> (Result<Vec<String>, String>, usize) {
    let mut rows = Vec::new();
    let mut pages = 0;
    loop {
        pages += 1;
        assert!(pages < 10_000, "paging never ends");
        let resp = run(&req);
        let a = answer(&resp, fts, chunk, Kind::Ordered);
        match a.rows {
            Ok(r) => rows.extend(r),
            Err(e) => return (Err(e), pages),
        }
        match &resp.range {
            None => return (Ok(rows), pages),
            Some(scanned) => {
                req.ranges = remaining(&req.ranges, scanned, desc);
                if req.ranges.is_empty() {
                    return (Ok(rows), pages);
                }
            }
        }
    }
}

fn split_req(
    engine: &Engine,
    store: &MemStore,
    req: &coprocessor::Request,
    keys: &[Vec<u8>],
) -> coprocessor::Response {
    let budget = Arc::new(CappedBudget::new(usize::MAX));
    let limits = ExecLimits::default().with_memory(budget.clone());
    let resp = engine.handle_split(req, keys, || store.scanner(), &limits).unwrap();
    assert_eq!(budget.used(), 0, "every part gave its memory back");
    resp
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn split_answers_equal_whole_answers(
        rows in rows(),
        (plan, kind, stream) in plan(),
        v1 in any::<bool>(),
        desc in any::<bool>(),
        chunk in any::<bool>(),
        bounds in proptest::collection::vec(0i64..90, 0..6),
        split in proptest::collection::vec(-2i64..90, 0..5),
        parts in 2usize..5,
        by_store in any::<bool>(),
    ) {
        let t = table(rows, v1);
        let c = case(plan.clone(), desc);
        let (mut dag, fts) = build_dag(&t, &c, chunk);
        if stream {
            // The grouped aggregations as stream aggregations (unsorted input: a group may
            // give several partial rows, which TiDB's final aggregation merges).
            for e in &mut dag.executors {
                if e.tp == Some(3) && e.aggregation.as_ref().is_some_and(|a| !a.group_by.is_empty()) {
                    e.tp = Some(6);
                }
            }
        }
        dag.collect_execution_summaries = Some(stream);
        let req = request(&dag, ranges(&bounds));
        let keys: Vec<Vec<u8>> = if by_store {
            let rs: Vec<KeyRange> = req.ranges.iter().map(|r| KeyRange::new(r.start.to_vec(), r.end.to_vec())).collect();
            t.store.split_keys(&rs, parts)
        } else {
            split.iter().map(|&h| record_key(h)).collect()
        };
        let engine = Engine::default();
        // Every plan here splits, unless the keys leave one part.
        match engine.plan_split(&req, &keys) {
            Ok(p) => prop_assert!(p.parts() >= 2),
            Err(w) => prop_assert_eq!(w, Whole::OnePart),
        }
        let whole = engine.handle(&req, &mut t.store.scanner());
        let split_resp = split_req(&engine, &t.store, &req, &keys);
        prop_assert_eq!(
            answer(&split_resp, &fts, chunk, kind),
            answer(&whole, &fts, chunk, kind),
            "plan {:?} desc {} keys {}", plan, desc, keys.len()
        );
        if stream {
            let sel = tipb::SelectResponse::decode(split_resp.data.clone()).unwrap();
            prop_assert!(sel.error.is_some() || sel.execution_summaries.len() == dag.executors.len());
        }

        // Paging: pages cut by a small byte cap, read to the end as TiDB reads them.
        if !matches!(kind, Kind::Agg { .. }) {
            let engine = Engine::new(EngineConfig::default().with_max_response_bytes(1 + split.len() * 40));
            let mut paged = req.clone();
            paged.paging_size = u64::from(u32::MAX);
            let (want, _) = all_pages(paged.clone(), desc, &fts, chunk, |r| engine.handle(r, &mut t.store.scanner()));
            let (got, _) = all_pages(paged, desc, &fts, chunk, |r| split_req(&engine, &t.store, r, &keys));
            prop_assert_eq!(got, want, "paged plan {:?} desc {}", plan, desc);
        }
    }
}

fn fixture() -> (Table, Vec<coprocessor::KeyRange>) {
    let rows = (1..=100).map(|i| format!("{i} | {} | {} | {}.25 | a", i % 7, i % 3, i)).collect();
    (table(rows, false), ranges(&[]))
}

#[test]
fn plans_say_what_splits_and_why_the_rest_runs_whole() {
    let (t, r) = fixture();
    let engine = Engine::default();
    let keys = vec![record_key(50)];
    let plan_of = |lines: &[&str], f: &dyn Fn(&mut coprocessor::Request)| {
        let (dag, _) =
            build_dag(&t, &case(lines.iter().map(|s| s.to_string()).collect(), false), false);
        let mut req = request(&dag, r.clone());
        f(&mut req);
        engine.plan_split(&req, &keys).map(|p| (p.combine(), p.parts()))
    };
    let none = |_: &mut coprocessor::Request| {};
    assert_eq!(plan_of(&[], &none), Ok((Combine::Concat, 2)));
    assert_eq!(plan_of(&["sel lt(#1, 3)", "agg count(1) by #4"], &none), Ok((Combine::Concat, 2)));
    assert_eq!(plan_of(&["agg count(1)"], &none), Ok((Combine::SimpleAgg, 2)));
    assert_eq!(plan_of(&["topn 3 by #1"], &none), Ok((Combine::TopN, 2)));
    assert_eq!(plan_of(&["limit 3"], &none), Ok((Combine::Limit, 2)));
    assert!(matches!(plan_of(&["agg count(1)", "limit 1"], &none), Err(Whole::Shape(_))));
    assert!(matches!(plan_of(&["limit 3", "topn 3 by #1"], &none), Err(Whole::Shape(_))));
    // Small pages, key caps and byte budgets run whole; big pages split.
    assert!(matches!(plan_of(&[], &|r| r.paging_size = 128), Err(Whole::Paging(_))));
    assert!(matches!(plan_of(&[], &|r| r.max_keys_read = 10), Err(Whole::Paging(_))));
    assert!(matches!(
        plan_of(&[], &|r| {
            r.paging_size = 1 << 20;
            r.paging_size_bytes = 1 << 20;
        }),
        Err(Whole::Paging(_))
    ));
    assert_eq!(plan_of(&[], &|r| r.paging_size = u64::from(u32::MAX)), Ok((Combine::Concat, 2)));
    assert!(matches!(plan_of(&["limit 5000"], &|r| r.paging_size = 4096), Err(Whole::Paging(_))));
    // Not a DAG, a malformed DAG, one part.
    assert_eq!(plan_of(&[], &|r| r.tp = 105), Err(Whole::NotDag));
    assert!(matches!(plan_of(&[], &|r| r.data = vec![0xff; 3].into()), Err(Whole::Malformed(_))));
    let (dag, _) = build_dag(&t, &case(vec![], false), false);
    assert_eq!(
        engine.plan_split(&request(&dag, r.clone()), &[]).map(|p| p.parts()),
        Err(Whole::OnePart)
    );
    // Unsorted ranges.
    let mut rev = ranges(&[1, 10, 20, 30]);
    rev.reverse();
    assert_eq!(
        engine.plan_split(&request(&dag, rev), &keys).map(|p| p.parts()),
        Err(Whole::Ranges)
    );
    // A partition TopN.
    let (mut dag, _) = build_dag(&t, &case(vec!["topn 3 by #1".into()], false), false);
    if let Some(top) = dag.executors.last_mut().and_then(|e| e.top_n.as_mut()) {
        top.partition_by = top.order_by.clone();
    }
    assert!(matches!(engine.plan_split(&request(&dag, r.clone()), &keys), Err(Whole::Shape(_))));
}

#[test]
fn store_split_keys_balance_the_parts() {
    let (t, r) = fixture();
    let rs: Vec<KeyRange> =
        r.iter().map(|r| KeyRange::new(r.start.to_vec(), r.end.to_vec())).collect();
    // 100 rows on a grid of 64 pairs: one key, at the 64th row.
    assert_eq!(t.store.split_keys(&rs, 2), vec![record_key(65)]);
    let (dag, _) = build_dag(&t, &case(vec![], false), false);
    let plan = Engine::default().plan_split(&request(&dag, r), &[record_key(65)]).unwrap();
    assert_eq!(plan.part_ranges(0).last().map(|k| k.end.clone()), Some(record_key(65)));
    assert_eq!(plan.part_ranges(1).first().map(|k| k.start.clone()), Some(record_key(65)));
}

#[test]
fn aggregates_without_group_by_keep_one_row_per_part_that_saw_input() {
    let (t, _) = fixture();
    let (dag, fts) = build_dag(&t, &case(vec!["agg count(1); first(#0)".into()], false), false);
    // Rows 1..=100; parts [.., 30), [30, 200), [200, ..): the last part is empty.
    let req = request(&dag, ranges(&[]));
    let keys = vec![record_key(30), record_key(200)];
    let resp = split_req(&Engine::default(), &t.store, &req, &keys);
    let sel = tipb::SelectResponse::decode(resp.data).unwrap();
    assert_eq!(reference::response_rows(&sel, &fts, false), ["29 | 1", "71 | 30"]);
    // Over no rows at all, the one row the whole request gives.
    let req = request(&dag, ranges(&[300, 400, 500, 600]));
    let keys = vec![record_key(450)];
    let resp = split_req(&Engine::default(), &t.store, &req, &keys);
    let sel = tipb::SelectResponse::decode(resp.data).unwrap();
    assert_eq!(reference::response_rows(&sel, &fts, false), ["0 | \\N"]);
}

#[test]
fn a_cancelled_split_request_aborts_and_gives_its_memory_back() {
    let (t, r) = fixture();
    let (dag, _) = build_dag(&t, &case(vec!["topn 3 by #1".into()], false), false);
    let budget = Arc::new(CappedBudget::new(usize::MAX));
    let limits = ExecLimits::default()
        .with_memory(budget.clone())
        .with_cancel_flag(Arc::new(AtomicBool::new(true)));
    let got = Engine::default().handle_split(
        &request(&dag, r.clone()),
        &[record_key(50)],
        || t.store.scanner(),
        &limits,
    );
    assert_eq!(got, Err(Abort::Cancelled));
    assert_eq!(budget.used(), 0);
    // A budget too small for the parts' rows stops the request.
    let small = ExecLimits::default().with_memory(Arc::new(CappedBudget::new(64)));
    let got = Engine::default().handle_split(
        &request(&dag, r),
        &[record_key(50)],
        || t.store.scanner(),
        &small,
    );
    assert!(matches!(got, Err(Abort::OverBudget { .. })), "{got:?}");
}

/// A source that counts the pairs it hands out and runs `first` before its first batch.
struct Counting<'a, S> {
    inner: S,
    pairs: usize,
    first: Option<Box<dyn FnOnce() + 'a>>,
}

impl<'a, S: ScanSource> Counting<'a, S> {
    fn new(inner: S) -> Self {
        Counting { inner, pairs: 0, first: None }
    }
}

impl<S: ScanSource> ScanSource for Counting<'_, S> {
    fn start(&mut self, range: &KeyRange, desc: bool) -> Result<(), ScanError> {
        self.inner.start(range, desc)
    }

    fn next_batch(&mut self, max_pairs: usize, out: &mut KvBatch) -> Result<ScanStatus, ScanError> {
        if let Some(f) = self.first.take() {
            f();
        }
        let status = self.inner.next_batch(max_pairs, out)?;
        self.pairs += out.len();
        Ok(status)
    }
}

#[test]
fn a_limit_stops_the_parts_its_earlier_parts_answer() {
    // 2000 rows; parts [.., 700), [700, 1400), [1400, ..).
    let rows = (1..=2000).map(|i| format!("{i} | {} | {} | {i}.25 | a", i % 7, i % 3)).collect();
    let t = table(rows, false);
    let engine = Engine::default();
    let limits = ExecLimits::default();
    let keys = vec![record_key(700), record_key(1400)];
    let setup = |lines: &[&str], desc: bool| {
        let lines = lines.iter().map(|s| s.to_string()).collect();
        let (dag, fts) = build_dag(&t, &case(lines, desc), false);
        let req = request(&dag, ranges(&[]));
        let plan = engine.plan_split(&req, &keys).unwrap();
        assert_eq!((plan.combine(), plan.parts()), (Combine::Limit, 3));
        (req, plan, fts)
    };
    // Runs the parts one after another in `order`: (skipped, pairs read) per part, and
    // checks the combined answer against the whole request's.
    let run = |lines: &[&str], desc: bool, order: &[usize]| {
        let (req, plan, fts) = setup(lines, desc);
        let mut outputs = Vec::new();
        let mut seen = vec![(false, 0usize); 3];
        for &i in order {
            let mut src = Counting::new(t.store.scanner());
            let out = engine.execute_part(&plan, i, &mut src, &limits).unwrap();
            seen[i] = (out.skipped(), src.pairs);
            outputs.push(out);
        }
        let resp = engine.combine_parts(&plan, outputs, &limits).unwrap().unwrap();
        let whole = engine.handle(&req, &mut t.store.scanner());
        assert_eq!(
            answer(&resp, &fts, false, Kind::Limit),
            answer(&whole, &fts, false, Kind::Limit)
        );
        seen
    };

    // The first part holds the limit: the later ones do not read a pair.
    let seen = run(&["limit 5"], false, &[0, 1, 2]);
    assert_eq!(seen.iter().map(|s| s.0).collect::<Vec<_>>(), [false, true, true]);
    assert_eq!((seen[1].1, seen[2].1), (0, 0));
    // Backwards, the last part comes first.
    let seen = run(&["limit 5"], true, &[2, 1, 0]);
    assert_eq!(seen.iter().map(|s| s.0).collect::<Vec<_>>(), [true, true, false]);
    // Parts that finish before the parts in front of them are kept.
    let seen = run(&["limit 5"], false, &[2, 1, 0]);
    assert!(seen.iter().all(|s| !s.0), "{seen:?}");
    // Too few rows in the first part (ids under 10) and none in the others: every part
    // scans its whole range.
    let seen = run(&["sel lt(#0, 10)", "limit 20"], false, &[0, 1, 2]);
    assert!(seen.iter().all(|s| !s.0), "{seen:?}");
    assert_eq!((seen[1].1, seen[2].1), (700, 601));
    // Too few in the first part (ids 691..699), enough with the second's: the third stops.
    let seen = run(&["sel gt(#0, 690)", "limit 20"], false, &[0, 1, 2]);
    assert_eq!(seen.iter().map(|s| s.0).collect::<Vec<_>>(), [false, false, true]);
    let seen = run(&["sel lt(#0, 720)", "limit 30"], false, &[0, 1, 2]);
    assert_eq!(seen.iter().map(|s| s.0).collect::<Vec<_>>(), [false, true, true]);
    // Too few rows in every part: none stops.
    let seen = run(&["sel lt(#0, 10)", "limit 20"], false, &[1, 2, 0]);
    assert!(seen.iter().all(|s| !s.0), "{seen:?}");

    // A part stops in the middle of its scan: the second part (ids 700..720 match, too few
    // for the limit alone) is running when the first finishes with the limit's rows.
    let (req, plan, fts) = setup(&["sel lt(#0, 720)", "limit 30"], false);
    let first = std::cell::RefCell::new(None);
    let mut src = Counting::new(t.store.scanner());
    src.first = Some(Box::new(|| {
        let out = engine.execute_part(&plan, 0, &mut t.store.scanner(), &limits).unwrap();
        *first.borrow_mut() = Some(out);
    }));
    let second = engine.execute_part(&plan, 1, &mut src, &limits).unwrap();
    assert!(second.skipped());
    assert!(src.pairs > 0 && src.pairs < 700, "stopped after its first batch: {}", src.pairs);
    drop(src);
    let third = engine.execute_part(&plan, 2, &mut t.store.scanner(), &limits).unwrap();
    assert!(third.skipped());
    let outputs = vec![first.into_inner().unwrap(), second, third];
    let resp = engine.combine_parts(&plan, outputs, &limits).unwrap().unwrap();
    let whole = engine.handle(&req, &mut t.store.scanner());
    assert_eq!(answer(&resp, &fts, false, Kind::Limit), answer(&whole, &fts, false, Kind::Limit));

    // The request's own cancel flag still aborts a part, skipped or not.
    let (_, plan, _) = setup(&["limit 5"], false);
    let cancelled = ExecLimits::default().with_cancel_flag(Arc::new(AtomicBool::new(true)));
    let got = engine.execute_part(&plan, 1, &mut t.store.scanner(), &cancelled);
    assert!(matches!(got, Err(Abort::Cancelled)), "{got:?}");
}
