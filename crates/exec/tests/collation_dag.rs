//! GROUP BY and ORDER BY over `_ci` columns give MySQL's answer: one group per set of strings
//! the collation calls equal, rows ordered by the collation's weights.

#![expect(clippy::unwrap_used, clippy::panic, reason = "fixture builders outside #[test] fns")]

mod support;

use prost::Message;
use rcop_datum::chunk::mysql_type as mt;
use rcop_datum::row::RowEncoder;
use rcop_datum::{Datum, key};
use rcop_exec::{Engine, MemStore};
use rcop_proto::tipb;
use support::dag::*;

const TID: i64 = 91;
/// MySQL: under utf8mb4_general_ci these are four pairs of equal strings, in weight order
/// a < b < café < ß (ß weighs as s; trailing spaces do not count).
const WORDS: [&str; 8] = ["ß", "b ", "CAFE", "a", "s", "A", "café", "B"];

fn store() -> MemStore {
    MemStore::from_pairs(WORDS.iter().enumerate().map(|(h, w)| {
        let mut k = Vec::new();
        key::encode_record_key(&mut k, TID, h as i64 + 1);
        let mut v = Vec::new();
        RowEncoder::new().bytes(1, w.as_bytes()).finish(&mut v).unwrap();
        (k, v)
    }))
}

fn run(collate: i32, tail: Vec<tipb::Executor>, width: usize) -> Vec<Vec<Datum>> {
    let s = ft_str(collate);
    let cols = vec![column_info(-1, &ft(mt::LONG_LONG), true), column_info(1, &s, false)];
    let mut execs = vec![scan(TID, cols, false)];
    execs.extend(tail);
    let d = dag(execs, (0..width as u32).collect(), false);
    let resp = Engine::default()
        .handle(&request(&d, vec![table_range(TID, None)]), &mut store().scanner());
    let sel = tipb::SelectResponse::decode(resp.data).unwrap();
    assert!(sel.error.is_none(), "{:?}", sel.error);
    default_rows(&sel, width)
}

fn text(d: &Datum) -> String {
    match d {
        Datum::Bytes(b) => String::from_utf8(b.clone()).unwrap(),
        d => panic!("{d:?}"),
    }
}

/// The set of strings MySQL puts in one group, by the group's first member.
fn class(w: &str, collate: i32) -> usize {
    let classes: &[&[&str]] = match collate {
        // utf8mb4_general_ci: ß = s.
        -45 => &[&["a", "A"], &["b ", "B"], &["café", "CAFE"], &["ß", "s"]],
        // utf8mb4_unicode_ci: ß = ss, so ß and s part.
        _ => &[&["a", "A"], &["b ", "B"], &["café", "CAFE"], &["s"], &["ß"]],
    };
    classes.iter().position(|c| c.contains(&w)).unwrap()
}

#[test]
fn group_by_ci_column() {
    for collate in [-45, -224] {
        let s = ft_str(collate);
        let count = agg(3001, ft(mt::LONG_LONG), vec![col(1, s.clone())]);
        let rows = run(collate, vec![aggregation(vec![col(1, s)], vec![count])], 2);
        let mut got: Vec<(usize, i64)> = rows
            .iter()
            .map(|r| {
                // COUNT is an unsigned BIGINT, as TiKV.
                let Datum::Uint(n) = r[0] else { panic!("{r:?}") };
                (class(&text(&r[1]), collate), n as i64)
            })
            .collect();
        got.sort();
        let want: Vec<(usize, i64)> = match collate {
            -45 => vec![(0, 2), (1, 2), (2, 2), (3, 2)],
            _ => vec![(0, 2), (1, 2), (2, 2), (3, 1), (4, 1)],
        };
        assert_eq!(got, want, "collation {collate}");
    }
}

#[test]
fn order_by_ci_column() {
    for collate in [-45, -224, -255] {
        let s = ft_str(collate);
        let rows = run(collate, vec![top_n(vec![(col(1, s), false)], 8)], 2);
        let classes: Vec<usize> = rows.iter().map(|r| class(&text(&r[1]), -45)).collect();
        // a A < b B < café CAFE < ß s (unicode_ci and 0900: s < ß = ss, still after café).
        let mut sorted = classes.clone();
        sorted.sort();
        assert_eq!(classes, sorted, "collation {collate}: {rows:?}");
        if collate != -45 {
            let pos = |w: &str| rows.iter().position(|r| text(&r[1]) == w).unwrap();
            assert!(pos("s") < pos("ß"), "collation {collate}: {rows:?}");
        }
    }
}
