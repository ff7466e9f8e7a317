//! TopN and partition TopN against a simple model: sort the rows (stably, so ties keep input
//! order) and keep the first `limit` — per run of equal partition keys for partition TopN and
//! partitioned Limit. Keys mix NULLs, duplicates, DESC, a case- and accent-insensitive
//! collation (`utf8mb4_general_ci`), decimals and `-0.0` beside `0.0`; row counts cross the
//! 1024-row batches and the executor's cuts.

#![expect(clippy::unwrap_used, clippy::panic, reason = "test fixtures and asserts")]

mod support;

use std::cmp::Ordering;

use proptest::prelude::*;
use rcop_datum::chunk::mysql_type as mt;
use rcop_datum::row::RowEncoder;
use rcop_datum::{Datum, Decimal, key};
use rcop_exec::{Collation, Engine, KeyRange, MemStore};
use rcop_proto::tipb;
use support::dag::*;

const TID: i64 = 77;
/// utf8mb4_general_ci, as TiDB sends it (new collations: negative).
const GENERAL_CI: i32 = -45;
const WORDS: [&str; 7] = ["a", "A", "á", "b", "B", "ab", ""];
const REALS: [f64; 5] = [-1.5, -0.0, 0.0, 2.0, 1e300];

/// One generated row (the handle is its place in the input, from 1).
#[derive(Debug, Clone)]
struct Row {
    a: Option<i64>,
    s: Option<usize>,
    d: Option<i64>,
    r: Option<usize>,
}

fn row() -> impl Strategy<Value = Row> {
    (
        proptest::option::weighted(0.85, -3i64..3),
        proptest::option::weighted(0.85, 0..WORDS.len()),
        proptest::option::weighted(0.85, -500i64..500),
        proptest::option::weighted(0.85, 0..REALS.len()),
    )
        .prop_map(|(a, s, d, r)| Row { a, s, d, r })
}

fn int_ft() -> tipb::FieldType {
    ft(mt::LONG_LONG)
}

fn str_ft() -> tipb::FieldType {
    ft_str(GENERAL_CI)
}

fn dec_ft() -> tipb::FieldType {
    ft_dec(10, 2)
}

fn real_ft() -> tipb::FieldType {
    ft(mt::DOUBLE)
}

/// The column `c` (1..=4: a, s, d, r) of the scan's output (0 is the handle).
fn key_col(c: usize) -> tipb::Expr {
    match c {
        1 => col(1, int_ft()),
        2 => col(2, str_ft()),
        3 => col(3, dec_ft()),
        _ => col(4, real_ft()),
    }
}

fn store(rows: &[Row]) -> MemStore {
    let mut enc = RowEncoder::new();
    MemStore::from_pairs(rows.iter().enumerate().map(|(i, r)| {
        let h = i as i64 + 1;
        let mut k = Vec::new();
        key::encode_record_key(&mut k, TID, h);
        enc.int(1, h);
        match r.a {
            Some(a) => enc.int(2, a),
            None => enc.null(2),
        };
        match r.s {
            Some(s) => enc.bytes(3, WORDS[s].as_bytes()),
            None => enc.null(3),
        };
        match r.d {
            Some(d) => {
                let sign = if d < 0 { "-" } else { "" };
                let v: Decimal =
                    format!("{sign}{}.{:02}", d.abs() / 100, d.abs() % 100).parse().unwrap();
                enc.decimal(4, &v, 10, 2).unwrap();
            }
            None => {
                enc.null(4);
            }
        }
        match r.r {
            Some(x) => enc.float(5, REALS[x]),
            None => enc.null(5),
        };
        let mut v = Vec::new();
        enc.finish(&mut v).unwrap();
        (k, v)
    }))
}

fn scan_all() -> tipb::Executor {
    scan(
        TID,
        vec![
            column_info(1, &int_ft(), true),
            column_info(2, &int_ft(), false),
            column_info(3, &str_ft(), false),
            column_info(4, &dec_ft(), false),
            column_info(5, &real_ft(), false),
        ],
        false,
    )
}

/// The model's order of two rows on column `c` (NULL first).
fn cmp_col(x: &Row, y: &Row, c: usize) -> Ordering {
    fn nulls_first<T>(a: Option<T>, b: Option<T>, f: impl Fn(T, T) -> Ordering) -> Ordering {
        match (a, b) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(a), Some(b)) => f(a, b),
        }
    }
    match c {
        1 => nulls_first(x.a, y.a, |a, b| a.cmp(&b)),
        2 => nulls_first(x.s, y.s, |a, b| {
            Collation::from_id(GENERAL_CI)
                .unwrap()
                .compare(WORDS[a].as_bytes(), WORDS[b].as_bytes())
        }),
        3 => nulls_first(x.d, y.d, |a, b| a.cmp(&b)),
        _ => nulls_first(x.r, y.r, |a, b| REALS[a].partial_cmp(&REALS[b]).unwrap()),
    }
}

/// The model: the handles of the first `limit` rows of `rows` (given with their handles)
/// stably sorted by `order`.
fn model_top(mut rows: Vec<(i64, &Row)>, order: &[(usize, bool)], limit: usize) -> Vec<i64> {
    rows.sort_by(|(_, x), (_, y)| {
        order
            .iter()
            .map(|&(c, desc)| {
                let o = cmp_col(x, y, c);
                if desc { o.reverse() } else { o }
            })
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    });
    rows.into_iter().take(limit).map(|(h, _)| h).collect()
}

/// The model of partition TopN by column `a`: each run of equal `a` in input order, cut.
fn model_partitioned(rows: &[Row], order: &[(usize, bool)], limit: usize) -> Vec<i64> {
    let mut out = Vec::new();
    let mut run: Vec<(i64, &Row)> = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        if run.last().is_some_and(|(_, p)| p.a != r.a) {
            out.extend(model_top(std::mem::take(&mut run), order, limit));
        }
        run.push((i as i64 + 1, r));
    }
    out.extend(model_top(run, order, limit));
    out
}

fn by_items(order: &[(usize, bool)]) -> Vec<tipb::ByItem> {
    order
        .iter()
        .map(|&(c, desc)| tipb::ByItem {
            expr: Some(key_col(c)),
            desc: Some(desc),
            ..Default::default()
        })
        .collect()
}

/// Runs `exec` over the rows and returns the handles it answers, in order.
fn run(rows: &[Row], exec: tipb::Executor) -> Vec<i64> {
    let d = dag(vec![scan_all(), exec], vec![0, 1, 2, 3, 4], false);
    let r = table_range(TID, None);
    let ranges = [KeyRange::new(r.start.to_vec(), r.end.to_vec())];
    let out = Engine::default().execute_dag(&d, &ranges, 0, &mut store(rows).scanner()).unwrap();
    assert!(out.response.error.is_none(), "{:?}", out.response.error);
    default_rows(&out.response, 5)
        .iter()
        .map(|r| match r[0] {
            Datum::Int(h) => h,
            ref d => panic!("handle {d:?}"),
        })
        .collect()
}

fn order() -> impl Strategy<Value = Vec<(usize, bool)>> {
    proptest::collection::vec((1usize..=4, any::<bool>()), 1..=3)
}

fn limit() -> impl Strategy<Value = u64> {
    prop_oneof![Just(0u64), 1u64..8, 8u64..100, Just(600), Just(1500), Just(u64::MAX)]
}

fn rows() -> impl Strategy<Value = Vec<Row>> {
    prop_oneof![
        proptest::collection::vec(row(), 0..40),
        proptest::collection::vec(row(), 900..2600),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn top_n_is_sort_then_truncate(rows in rows(), order in order(), limit in limit()) {
        let exec = tipb::Executor {
            tp: Some(4),
            top_n: Some(Box::new(tipb::TopN {
                order_by: by_items(&order),
                limit: Some(limit),
                ..Default::default()
            })),
            ..Default::default()
        };
        let indexed: Vec<(i64, &Row)> = rows.iter().enumerate().map(|(i, r)| (i as i64 + 1, r)).collect();
        let want = model_top(indexed, &order, usize::try_from(limit).unwrap_or(usize::MAX));
        prop_assert_eq!(run(&rows, exec), want);
    }

    #[test]
    fn partition_top_n_cuts_each_run(rows in rows(), order in order(), limit in limit()) {
        let exec = tipb::Executor {
            tp: Some(4),
            top_n: Some(Box::new(tipb::TopN {
                order_by: by_items(&order),
                limit: Some(limit),
                partition_by: by_items(&[(1, false)]),
                ..Default::default()
            })),
            ..Default::default()
        };
        let want = model_partitioned(&rows, &order, usize::try_from(limit).unwrap_or(usize::MAX));
        prop_assert_eq!(run(&rows, exec), want);
    }

    #[test]
    fn partitioned_limit_keeps_each_runs_first_rows(rows in rows(), limit in limit()) {
        let exec = tipb::Executor {
            tp: Some(5),
            limit: Some(Box::new(tipb::Limit {
                limit: Some(limit),
                partition_by: by_items(&[(1, false)]),
                ..Default::default()
            })),
            ..Default::default()
        };
        let want = model_partitioned(&rows, &[], usize::try_from(limit).unwrap_or(usize::MAX));
        prop_assert_eq!(run(&rows, exec), want);
    }
}
