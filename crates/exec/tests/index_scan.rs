//! IndexScan against TableScan: tables loaded with secondary indexes (unique and not, int
//! and common handles, every index value layout TiDB writes) must give, through an index
//! scan, exactly the rows a table scan of the same table gives, in index order. Plus corrupt
//! entries (typed errors, never panics) and entries TiDB itself wrote.

#![expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "fixture builders and checks outside #[test] fns"
)]

mod support;

use std::collections::HashMap;

use proptest::prelude::*;
use prost::Message;
use rcop_datum::chunk::mysql_type as mt;
use rcop_datum::datum::encode_decimal_datum;
use rcop_datum::index::{
    IndexValueOptions, encode_index_value_v0, encode_index_value_v1, trailing_spaces,
};
use rcop_datum::row::RowEncoder;
use rcop_datum::{Datum, Decimal, Mode, Time, TimeType, key};
use rcop_exec::{Engine, MemStore};
use rcop_proto::{coprocessor, tipb};
use support::dag::{
    agg, aggregation, col, column_info, dag, default_rows, ft, ft_dec, request, scan, selection,
    table_range,
};

const TID: i64 = 70;
/// Column ids: 1 BIGINT, 2 BIGINT UNSIGNED, 3 DECIMAL(10,2), 4 VARCHAR utf8mb4_bin,
/// 5 CHAR utf8mb4_bin, 6 VARBINARY, 7 DATETIME, 8 TIMESTAMP, 9 DOUBLE; 10 the clustered
/// primary key's VARCHAR utf8mb4_bin and 11 the handle.
const NCOLS: usize = 9;
const PK_STR: i64 = 10;
const HANDLE: i64 = 11;

#[derive(Debug, Clone, PartialEq)]
enum V {
    Null,
    I(i64),
    U(u64),
    D(Decimal),
    S(Vec<u8>),
    T(Time),
    F(f64),
}

/// How the table was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// Int handle, new collation off: old index values only.
    Old,
    /// Int handle, new collation on: version 0 values with restored data where needed.
    V0,
    /// Clustered (common handle `(10, 11)`), new collation on: version 1 values.
    V1,
}

fn col_ft(id: i64, layout: Layout) -> tipb::FieldType {
    let bin = if layout == Layout::Old { 46 } else { -46 };
    let s = |tp: u8, coll: i32| tipb::FieldType { collate: Some(coll), flen: Some(10), ..ft(tp) };
    match id {
        1 | HANDLE => ft(mt::LONG_LONG),
        2 => tipb::FieldType { flag: Some(32), ..ft(mt::LONG_LONG) },
        3 => ft_dec(10, 2),
        4 | PK_STR => s(mt::VARCHAR, bin),
        5 => s(mt::STRING, bin),
        6 => s(mt::VARCHAR, 63),
        7 => tipb::FieldType { decimal: Some(0), ..ft(mt::DATETIME) },
        8 => tipb::FieldType { decimal: Some(0), ..ft(mt::TIMESTAMP) },
        _ => ft(mt::DOUBLE),
    }
}

/// A `_bin` VARCHAR of new collation: the key holds it without trailing spaces.
fn trims(id: i64, layout: Layout) -> bool {
    layout != Layout::Old && (id == 4 || id == PK_STR)
}

#[derive(Debug, Clone)]
struct Row {
    handle: i64,
    cols: Vec<V>,
    pk: Vec<u8>,
    untouched: bool,
}

impl Row {
    fn get(&self, id: i64) -> V {
        match id {
            HANDLE => V::I(self.handle),
            PK_STR => V::S(self.pk.clone()),
            _ => self.cols[id as usize - 1].clone(),
        }
    }
}

fn key_datum(out: &mut Vec<u8>, id: i64, v: &V, layout: Layout) {
    match v {
        V::Null => out.push(0),
        V::I(x) => Datum::Int(*x).encode(Mode::Key, out).unwrap(),
        V::U(x) => Datum::Uint(*x).encode(Mode::Key, out).unwrap(),
        V::D(d) => encode_decimal_datum(out, d, 10, 2).unwrap().into_result().unwrap(),
        V::S(s) => {
            let n = if trims(id, layout) { s.len() - trailing_spaces(s) as usize } else { s.len() };
            Datum::Bytes(s[..n].to_vec()).encode(Mode::Key, out).unwrap();
        }
        V::T(t) => Datum::Time(*t).encode(Mode::Key, out).unwrap(),
        V::F(f) => Datum::Float(*f).encode(Mode::Key, out).unwrap(),
    }
}

fn row_col(enc: &mut RowEncoder, id: i64, v: &V) {
    match v {
        V::Null => enc.null(id),
        V::I(x) => enc.int(id, *x),
        V::U(x) => enc.uint(id, *x),
        V::D(d) => {
            enc.decimal(id, d, 10, 2).unwrap().into_result().unwrap();
            enc
        }
        V::S(s) => enc.bytes(id, s),
        V::T(t) => enc.time(id, *t),
        V::F(f) => enc.float(id, *f),
    };
}

/// The secondary indexes: id, unique, columns.
const INDEXES: [(i64, bool, &[i64]); 3] =
    [(1, false, &[1, 3, 5, 8]), (2, true, &[4, 2]), (3, false, &[6, 7, 9])];

fn common_handle(r: &Row, layout: Layout) -> Vec<u8> {
    let mut h = Vec::new();
    key_datum(&mut h, PK_STR, &r.get(PK_STR), layout);
    key_datum(&mut h, HANDLE, &V::I(r.handle), layout);
    h
}

/// The index entry TiDB writes for row `r`.
fn index_entry(
    r: &Row,
    index: i64,
    unique: bool,
    cols: &[i64],
    layout: Layout,
) -> (Vec<u8>, Vec<u8>) {
    let mut vals = Vec::new();
    for &c in cols {
        key_datum(&mut vals, c, &r.get(c), layout);
    }
    let distinct = unique && cols.iter().all(|&c| r.get(c) != V::Null);
    let ch = common_handle(r, layout);
    if !distinct {
        match layout {
            Layout::V1 => vals.extend_from_slice(&ch),
            _ => key_datum(&mut vals, HANDLE, &V::I(r.handle), layout),
        }
    }
    let mut k = Vec::new();
    key::encode_index_key(&mut k, TID, index, &vals);
    let mut v = Vec::new();
    let mut row = Vec::new();
    let mut opts = IndexValueOptions::new().untouched(r.untouched);
    match layout {
        Layout::Old => {
            if distinct {
                opts = opts.int_handle(r.handle);
            }
            encode_index_value_v0(&opts, &mut v);
        }
        Layout::V0 => {
            // Restored data (every index column) only when one needs it: a `_bin` VARCHAR.
            if cols.contains(&4) {
                let mut enc = RowEncoder::new();
                cols.iter().for_each(|&c| row_col(&mut enc, c, &r.get(c)));
                enc.finish(&mut row).unwrap();
                opts = opts.restored(&row);
            }
            if distinct {
                opts = opts.int_handle(r.handle);
            }
            encode_index_value_v0(&opts, &mut v);
        }
        Layout::V1 => {
            // `_bin` VARCHARs restore their trailing spaces: the index's, then the handle's.
            let mut enc = RowEncoder::new();
            for &c in cols.iter().filter(|&&c| c == 4) {
                if let V::S(s) = r.get(c) {
                    enc.uint(c, trailing_spaces(&s));
                } else {
                    enc.uint(c, 0);
                }
            }
            enc.uint(PK_STR, trailing_spaces(&r.pk));
            enc.finish(&mut row).unwrap();
            opts = opts.restored(&row);
            if distinct {
                opts = opts.common_handle(&ch);
            }
            encode_index_value_v1(&opts, &mut v).unwrap();
        }
    }
    (k, v)
}

fn load(rows: &[Row], layout: Layout) -> MemStore {
    let mut pairs = Vec::new();
    for r in rows {
        let mut k = Vec::new();
        if layout == Layout::V1 {
            key::encode_common_handle_record_key(&mut k, TID, &common_handle(r, layout));
        } else {
            key::encode_record_key(&mut k, TID, r.handle);
        }
        let mut enc = RowEncoder::new();
        (1..=NCOLS as i64).for_each(|c| row_col(&mut enc, c, &r.get(c)));
        if layout == Layout::V1 {
            row_col(&mut enc, PK_STR, &r.get(PK_STR));
            row_col(&mut enc, HANDLE, &V::I(r.handle));
        }
        let mut v = Vec::new();
        enc.finish(&mut v).unwrap();
        pairs.push((k, v));
        for (id, unique, cols) in INDEXES {
            pairs.push(index_entry(r, id, unique, cols, layout));
        }
    }
    MemStore::from_pairs(pairs)
}

/// The handle columns the scans return, after the index columns.
fn handle_ids(layout: Layout) -> Vec<i64> {
    if layout == Layout::V1 { vec![PK_STR, HANDLE] } else { vec![HANDLE] }
}

fn infos(ids: &[i64], layout: Layout) -> Vec<tipb::ColumnInfo> {
    ids.iter()
        .map(|&id| column_info(id, &col_ft(id, layout), id == HANDLE && layout != Layout::V1))
        .collect()
}

fn index_range(index: i64) -> coprocessor::KeyRange {
    let (mut s, mut e) = (Vec::new(), Vec::new());
    key::encode_index_prefix(&mut s, TID, index);
    key::encode_index_prefix(&mut e, TID, index + 1);
    coprocessor::KeyRange { start: s.into(), end: e.into() }
}

fn idx_exec(index: i64, ids: &[i64], layout: Layout, desc: bool, unique: bool) -> tipb::Executor {
    let primary_column_ids = if layout == Layout::V1 { vec![PK_STR, HANDLE] } else { vec![] };
    tipb::Executor {
        tp: Some(tipb::ExecType::TypeIndexScan as i32),
        idx_scan: Some(tipb::IndexScan {
            table_id: Some(TID),
            index_id: Some(index),
            columns: infos(ids, layout),
            desc: Some(desc),
            unique: Some(unique),
            primary_column_ids,
        }),
        executor_id: Some("IndexRangeScan_1".into()),
        ..Default::default()
    }
}

fn tbl_exec(ids: &[i64], layout: Layout) -> tipb::Executor {
    let mut e = scan(TID, infos(ids, layout), false);
    if let (Layout::V1, Some(ts)) = (layout, e.tbl_scan.as_mut()) {
        ts.primary_column_ids = vec![PK_STR, HANDLE];
    }
    e
}

fn run(
    store: &MemStore,
    executors: Vec<tipb::Executor>,
    width: usize,
    ranges: Vec<coprocessor::KeyRange>,
) -> Result<Vec<Vec<Datum>>, String> {
    let d = dag(executors, (0..width as u32).collect(), false);
    let resp = Engine::default().handle(&request(&d, ranges), &mut store.scanner());
    let sel = tipb::SelectResponse::decode(resp.data).unwrap();
    match sel.error {
        Some(e) => Err(e.msg.unwrap_or_default()),
        None => Ok(default_rows(&sel, width)),
    }
}

/// Checks every index of a table written in `layout`: the index scan returns the table
/// scan's rows (looked up by handle), in index key order, ascending and descending. (Whole
/// index ranges are scanned with `unique` off: `[prefix, prefix_next(prefix))` is a point
/// range, which a unique scan reads as a point get, as TiKV does.)
fn check_table(rows: &[Row], layout: Layout) {
    let store = load(rows, layout);
    let hids = handle_ids(layout);
    for (index, unique, cols) in INDEXES {
        let ids: Vec<i64> = cols.iter().copied().chain(hids.iter().copied()).collect();
        let w = ids.len();
        let table =
            run(&store, vec![tbl_exec(&ids, layout)], w, vec![table_range(TID, None)]).unwrap();
        let by_handle: HashMap<String, Vec<Datum>> =
            table.iter().map(|r| (format!("{:?}", &r[cols.len()..]), r.clone())).collect();
        let mut sorted: Vec<&Row> = rows.iter().collect();
        sorted.sort_by_key(|r| index_entry(r, index, unique, cols, layout).0);
        for desc in [false, true] {
            let got = run(
                &store,
                vec![idx_exec(index, &ids, layout, desc, false)],
                w,
                vec![index_range(index)],
            )
            .unwrap();
            assert_eq!(got.len(), rows.len(), "{layout:?} index {index}");
            let mut want_order: Vec<i64> = sorted.iter().map(|r| r.handle).collect();
            if desc {
                want_order.reverse();
            }
            let got_order: Vec<i64> = got
                .iter()
                .map(|r| match r.last() {
                    Some(Datum::Int(h)) => *h,
                    other => panic!("handle {other:?}"),
                })
                .collect();
            assert_eq!(got_order, want_order, "{layout:?} index {index} desc {desc}");
            for r in &got {
                let want = &by_handle[&format!("{:?}", &r[cols.len()..])];
                assert_eq!(r, want, "{layout:?} index {index}");
            }
        }
        // Selection and aggregation on top agree with the same plan over the table scan.
        let cond = not_null(col(0, col_ft(cols[0], layout)), cols[0], layout);
        let count = agg(3001, ft(mt::LONG_LONG), vec![col(0, col_ft(cols[0], layout))]);
        // Every column counted over the rows the selection kept: those the scan left raw are
        // decoded for the kept rows only, straight into dense columns (a value taken from
        // the wrong row changes a count where one row is NULL and the other is not).
        let counts: Vec<tipb::Expr> = ids
            .iter()
            .enumerate()
            .map(|(j, &id)| agg(3001, ft(mt::LONG_LONG), vec![col(j as i64, col_ft(id, layout))]))
            .collect();
        let plans = |scan: tipb::Executor| {
            vec![
                (vec![scan.clone(), selection(vec![cond.clone()])], w),
                (vec![scan.clone(), aggregation(vec![], vec![count.clone()])], 1),
                (vec![scan, selection(vec![cond.clone()]), aggregation(vec![], counts.clone())], w),
            ]
        };
        for ((ip, w1), (tp, _)) in plans(idx_exec(index, &ids, layout, false, false))
            .into_iter()
            .zip(plans(tbl_exec(&ids, layout)))
        {
            let mut a = run(&store, ip, w1, vec![index_range(index)]).unwrap();
            let mut b = run(&store, tp, w1, vec![table_range(TID, None)]).unwrap();
            a.sort_by_key(|r| format!("{r:?}"));
            b.sort_by_key(|r| format!("{r:?}"));
            assert_eq!(a, b, "{layout:?} index {index} with a plan on top");
        }
    }
}

/// `NOT (#0 IS NULL)` for the column's type (a condition every type supports).
fn not_null(c: tipb::Expr, id: i64, layout: Layout) -> tipb::Expr {
    let sig = match col_ft(id, layout).tp.unwrap_or(0) as u8 {
        mt::NEW_DECIMAL => 3111,
        mt::VARCHAR | mt::STRING => 3114,
        mt::DATETIME | mt::TIMESTAMP => 3115,
        mt::DOUBLE => 3113,
        _ => 3116,
    };
    let isnull = support::dag::func(sig, ft(mt::LONG_LONG), vec![c]);
    support::dag::func(3104, ft(mt::LONG_LONG), vec![isnull])
}

fn cents(m: i64) -> Decimal {
    let sign = if m < 0 { "-" } else { "" };
    format!("{sign}{}.{:02}", m.abs() / 100, m.abs() % 100).parse().unwrap()
}

fn time(s: &str, tp: TimeType) -> Time {
    Time::parse(s, tp, 0).unwrap()
}

fn opt<T: std::fmt::Debug + Clone + 'static>(
    s: impl Strategy<Value = T> + 'static,
) -> impl Strategy<Value = Option<T>> {
    prop_oneof![1 => Just(None), 4 => s.prop_map(Some)]
}

fn rows() -> impl Strategy<Value = Vec<Row>> {
    let row = (
        (opt(-40i64..40), any::<bool>(), opt(-99_999i64..99_999), opt("[ab]{0,2} {0,2}")),
        (opt("[xy]{0,2}"), opt("[a ]{0,3}"), opt(0usize..4), opt(0usize..4)),
        (opt(-8i64..8), 0usize..3, any::<bool>()),
    );
    proptest::collection::vec(row, 0..24).prop_map(|rs| {
        let days = [
            "1999-12-31 23:59:59",
            "2000-01-01 00:00:00",
            "2024-02-29 12:00:00",
            "1970-01-02 00:00:01",
        ];
        rs.into_iter()
            .enumerate()
            .map(|(i, ((c1, c2null, c3, c4), (c5, c6, c7, c8), (c9, pk_spaces, untouched)))| {
                let handle = i as i64 * 7 - 30;
                let s = |x: Option<String>| x.map_or(V::Null, |s| V::S(s.into_bytes()));
                let cols = vec![
                    c1.map_or(V::Null, V::I),
                    if c2null { V::Null } else { V::U(u64::MAX - (i as u64) * 3) },
                    c3.map_or(V::Null, |m| V::D(cents(m))),
                    s(c4),
                    s(c5),
                    s(c6),
                    c7.map_or(V::Null, |d| V::T(time(days[d], TimeType::DateTime))),
                    c8.map_or(V::Null, |d| V::T(time(days[d], TimeType::Timestamp))),
                    c9.map_or(V::Null, |f| V::F(f as f64 / 2.0)),
                ];
                let pk = format!("k{handle}{}", " ".repeat(pk_spaces)).into_bytes();
                Row { handle, cols, pk, untouched }
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn index_scan_equals_table_scan_old_layout(rows in rows()) {
        check_table(&rows, Layout::Old);
    }

    #[test]
    fn index_scan_equals_table_scan_version_0(rows in rows()) {
        check_table(&rows, Layout::V0);
    }

    #[test]
    fn index_scan_equals_table_scan_clustered_version_1(rows in rows()) {
        check_table(&rows, Layout::V1);
    }
}

fn point(k: &[u8]) -> coprocessor::KeyRange {
    coprocessor::KeyRange { start: k.to_vec().into(), end: key::prefix_next(k).into() }
}

#[test]
fn unique_point_ranges_are_point_gets() {
    // Unique index 2 over (4, 2): row 1 has both values (handle in the value), row 2 a NULL
    // (handle in the key, after the values).
    let mk = |handle: i64, c4: V, c2: V| {
        let mut cols = vec![V::Null; NCOLS];
        cols[3] = c4;
        cols[1] = c2;
        Row { handle, cols, pk: b"k".to_vec(), untouched: false }
    };
    let rows = [mk(1, V::S(b"ab".to_vec()), V::U(5)), mk(2, V::Null, V::U(5))];
    let store = load(&rows, Layout::Old);
    let ids = [4, 2, HANDLE];
    let prefix = |vals: &[(i64, V)]| {
        let mut b = Vec::new();
        vals.iter().for_each(|(c, v)| key_datum(&mut b, *c, v, Layout::Old));
        let mut k = Vec::new();
        key::encode_index_key(&mut k, TID, 2, &b);
        k
    };
    let full = prefix(&[(4, V::S(b"ab".to_vec())), (2, V::U(5))]);
    let null = prefix(&[(4, V::Null), (2, V::U(5))]);
    for unique in [true, false] {
        let got = run(
            &store,
            vec![idx_exec(2, &ids, Layout::Old, false, unique)],
            3,
            vec![point(&full), point(&null)],
        )
        .unwrap();
        let handles: Vec<Datum> = got.iter().map(|r| r[2].clone()).collect();
        // A point get of the NULL entry's values finds nothing: its key goes on with the handle.
        let want = if unique { vec![Datum::Int(1)] } else { vec![Datum::Int(1), Datum::Int(2)] };
        assert_eq!(handles, want, "unique {unique}");
        assert_eq!(got[0][0], Datum::Bytes(b"ab".to_vec()));
    }
}

#[test]
fn partition_and_physical_table_ids() {
    // A global index (version 0 with a partition id) and a local one (the table id).
    let mut vals = Vec::new();
    key_datum(&mut vals, 1, &V::I(-3), Layout::V0);
    let mut k = Vec::new();
    key::encode_index_key(&mut k, TID, 1, &vals);
    let mut v = Vec::new();
    encode_index_value_v0(&IndexValueOptions::new().int_handle(9).partition_id(77), &mut v);
    let store = MemStore::from_pairs([(k.clone(), v)]);
    let mut infos = infos(&[1, HANDLE], Layout::V0);
    infos.push(column_info(-2, &ft(mt::LONG_LONG), false));
    infos.push(column_info(-3, &ft(mt::LONG_LONG), false));
    let mut e = idx_exec(1, &[1, HANDLE], Layout::V0, false, false);
    e.idx_scan.as_mut().unwrap().columns = infos.clone();
    let got = run(&store, vec![e.clone()], 4, vec![index_range(1)]).unwrap();
    assert_eq!(got, [vec![Datum::Int(-3), Datum::Int(9), Datum::Int(77), Datum::Int(77)]]);
    // Without a partition id in the value, the physical table id is the key's table id and
    // a partition id column is an error.
    let mut v = Vec::new();
    encode_index_value_v0(&IndexValueOptions::new().int_handle(9), &mut v);
    let store = MemStore::from_pairs([(k, v)]);
    assert!(
        run(&store, vec![e.clone()], 4, vec![index_range(1)]).unwrap_err().contains("partition")
    );
    e.idx_scan.as_mut().unwrap().columns =
        vec![infos[0].clone(), infos[1].clone(), infos[3].clone()];
    let got = run(&store, vec![e], 3, vec![index_range(1)]).unwrap();
    assert_eq!(got, [vec![Datum::Int(-3), Datum::Int(9), Datum::Int(TID)]]);
}

/// Keys and values TiDB wrote for `insert into t values (1, "a ", "A ")` into
/// `t(a int, b char(10) collate utf8mb4_bin, c char(10) collate utf8mb4_unicode_ci)` (table
/// 49) and the same with VARCHARs (table 61), each column with a non-unique index (ids 1–3)
/// and a unique one (ids 5–7), as kept in tikv/tikv
/// `components/tidb_query_executors/src/index_scan_executor.rs` (`test_int_handle_char_index`,
/// `test_int_handle_varchar_index`).
#[test]
fn entries_tidb_wrote() {
    let h = |s: &str| hex::decode(s.replace(' ', "")).unwrap();
    let long = |c: i32| tipb::FieldType { collate: Some(c), ..ft(mt::LONG) };
    let cases: [(&str, &str, u8, &[u8]); 6] = [
        // i_a (non-unique) and i_ua (unique) over the int column.
        (
            "7480000000000000315f698000000000000001 038000000000000001 038000000000000001",
            "30",
            mt::LONG,
            b"",
        ),
        (
            "7480000000000000355f698000000000000005 038000000000000001",
            "0000000000000001",
            mt::LONG,
            b"",
        ),
        // i_b, i_ub over CHAR utf8mb4_bin: the key holds "a", no restored data.
        (
            "7480000000000000315f698000000000000002 016100000000000000f8 038000000000000001",
            "30",
            mt::STRING,
            b"a",
        ),
        (
            "7480000000000000355f698000000000000006 016100000000000000f8",
            "0000000000000001",
            mt::STRING,
            b"a",
        ),
        // i_b, i_ub over VARCHAR utf8mb4_bin: restored data (TiDB 4.0 layout) holds "a ".
        (
            "74800000000000003d5f698000000000000002 016100000000000000f8 038000000000000001",
            "008000010000000202006120",
            mt::VARCHAR,
            b"a ",
        ),
        (
            "74800000000000003d5f698000000000000006 016100000000000000f8",
            "0880000100000002020061200000000000000001",
            mt::VARCHAR,
            b"a ",
        ),
    ];
    for (i, (k, v, tp, want)) in cases.into_iter().enumerate() {
        let (k, v) = (h(k), h(v));
        let col_id = if tp == mt::LONG { 1 } else { 2 };
        let f = if tp == mt::LONG {
            long(63)
        } else {
            tipb::FieldType { collate: Some(-46), ..ft(tp) }
        };
        let (tid, index_id, _) = key::split_index_key(&k).unwrap();
        let store = MemStore::from_pairs([(k, v)]);
        let infos = vec![column_info(col_id, &f, false), column_info(3, &ft(mt::LONG_LONG), true)];
        let e = tipb::Executor {
            tp: Some(1),
            idx_scan: Some(tipb::IndexScan {
                table_id: Some(tid),
                index_id: Some(index_id),
                columns: infos,
                ..Default::default()
            }),
            ..Default::default()
        };
        let (mut s, mut end) = (Vec::new(), Vec::new());
        key::encode_index_prefix(&mut s, tid, index_id);
        key::encode_index_prefix(&mut end, tid, index_id + 1);
        let range = coprocessor::KeyRange { start: s.into(), end: end.into() };
        let got = run(&store, vec![e], 2, vec![range]).unwrap();
        let first = if tp == mt::LONG { Datum::Int(1) } else { Datum::Bytes(want.to_vec()) };
        assert_eq!(got, [vec![first, Datum::Int(1)]], "case {i}");
    }
    // i_c over utf8mb4_unicode_ci: the key holds a sort key, the value "A"; the collation is
    // not supported yet, so the scan is refused rather than answering the sort key.
    let e = tipb::Executor {
        tp: Some(1),
        idx_scan: Some(tipb::IndexScan {
            table_id: Some(49),
            index_id: Some(3),
            columns: vec![column_info(
                3,
                // gb18030_chinese_ci: a collation the engine does not have.
                &tipb::FieldType { collate: Some(-248), ..ft(mt::STRING) },
                false,
            )],
            ..Default::default()
        }),
        ..Default::default()
    };
    let err = run(&MemStore::default(), vec![e], 1, vec![index_range(3)]).unwrap_err();
    assert!(err.contains("collation"), "{err}");
}

fn corrupt_case(key: Vec<u8>, value: Vec<u8>, layout: Layout) {
    let store = MemStore::from_pairs([(key, value)]);
    let ids = [4, 2];
    let ids: Vec<i64> = ids.iter().copied().chain(handle_ids(layout)).collect();
    for (i, e) in [idx_exec(2, &ids, layout, false, false), idx_exec(2, &ids, layout, true, false)]
        .into_iter()
        .enumerate()
    {
        let mut range = index_range(2);
        range.start = Vec::new().into();
        range.end = vec![0xFF].into();
        // Typed errors or rows; never a panic (Engine::handle catches none).
        let _ = run(&store, vec![e], ids.len(), vec![range]).map(|r| assert!(r.len() <= 1, "{i}"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_values_never_panic(value in proptest::collection::vec(any::<u8>(), 0..40), layout in 0..3usize) {
        let layout = [Layout::Old, Layout::V0, Layout::V1][layout];
        let row = Row { handle: 3, cols: vec![V::S(b"a  ".to_vec()), V::U(7)].into_iter().chain(std::iter::repeat_n(V::Null, NCOLS - 2)).collect(), pk: b"k ".to_vec(), untouched: false };
        let mut row = row;
        row.cols.swap(0, 3);
        row.cols.swap(0, 1);
        let (k, _) = index_entry(&row, 2, true, &[4, 2], layout);
        corrupt_case(k, value, layout);
    }

    #[test]
    fn truncated_and_garbled_entries_never_panic(cut in 0usize..64, flip in 0usize..64, bits in 1u8..=255, layout in 0..3usize, in_key in any::<bool>()) {
        let layout = [Layout::Old, Layout::V0, Layout::V1][layout];
        let mut cols = vec![V::Null; NCOLS];
        cols[3] = V::S(b"ab  ".to_vec());
        cols[1] = if flip % 2 == 0 { V::U(9) } else { V::Null };
        let row = Row { handle: -4, cols, pk: b"kk  ".to_vec(), untouched: flip % 3 == 0 };
        let (mut k, mut v) = index_entry(&row, 2, true, &[4, 2], layout);
        let target = if in_key { &mut k } else { &mut v };
        let at = flip % target.len().max(1);
        if let Some(b) = target.get_mut(at) {
            *b ^= bits;
        }
        let keep = target.len().saturating_sub(cut % 8);
        target.truncate(keep);
        corrupt_case(k, v, layout);
    }

    #[test]
    fn random_keys_never_panic(key in proptest::collection::vec(any::<u8>(), 0..48), value in proptest::collection::vec(any::<u8>(), 0..24)) {
        let mut k = Vec::new();
        key::encode_index_prefix(&mut k, TID, 2);
        k.extend_from_slice(&key);
        corrupt_case(k, value.clone(), Layout::V1);
        corrupt_case(key, value, Layout::Old);
    }
}

#[test]
fn corrupt_entries_are_typed_errors() {
    let mut k = Vec::new();
    key::encode_index_key(&mut k, TID, 2, &[1, b'a', 0, 0, 0, 0, 0, 0, 0, 0xF8]);
    let ids = [4, HANDLE];
    let cases: [(&[u8], &str); 4] = [
        // A unique entry's handle cut short.
        (&[0, 0, 0, 1], "int handle"),
        // A tail length past the value.
        (&[40, 0, 0, 0, 0, 0, 0, 0, 0, 0], "tail"),
        // A common handle in an int-handle scan.
        (&[0, 127, 0, 7, 1, 2, 3, 4, 5, 6, 7], "common handle"),
        // Bytes after the options.
        (&[0, 5, 5, 5, 5, 5, 5, 5, 5, 5], "after the options"),
    ];
    for (v, want) in cases {
        let store = MemStore::from_pairs([(k.clone(), v.to_vec())]);
        let err = run(
            &store,
            vec![idx_exec(2, &ids, Layout::Old, false, false)],
            2,
            vec![index_range(2)],
        )
        .unwrap_err();
        assert!(err.contains(want), "{v:?}: {err}");
    }
}

/// An index over an `ENUM` column: TiDB writes the member index as a comparable Uint datum
/// in the key; the scan answers the index in TypeDefault (a Uint datum, TiKV
/// `write_evaluable_datum_enum_uint`) and index plus member name in TypeChunk (TiKV
/// `write_enum_to_chunk`), names from the `ColumnInfo.elems`. A SET column stays refused by
/// name, as TiKV's `EvalType::try_from(FieldTypeTp::Set)` refuses it.
#[test]
fn enum_index_columns_carry_their_member_names() {
    let elems: Vec<String> = vec!["x".into(), "yy".into(), "zzz".into()];
    let enum_info = |tp: u8| {
        let f = tipb::FieldType { elems: elems.clone(), ..ft(tp) };
        let mut c = column_info(1, &f, false);
        c.elems = elems.clone();
        c
    };
    let mut pairs = Vec::new();
    // Rows (handle, member): (1, 3), (2, 1), (3, NULL), (4, 0 — the empty value).
    for (h, m) in [(1, Some(3u64)), (2, Some(1)), (3, None), (4, Some(0))] {
        let mut vals = Vec::new();
        match m {
            Some(m) => Datum::Uint(m).encode(Mode::Key, &mut vals).unwrap(),
            None => vals.push(0),
        }
        Datum::Int(h).encode(Mode::Key, &mut vals).unwrap();
        let mut k = Vec::new();
        key::encode_index_key(&mut k, TID, 5, &vals);
        pairs.push((k, b"0".to_vec()));
    }
    let store = MemStore::from_pairs(pairs);
    let exec = |tp: u8| tipb::Executor {
        tp: Some(tipb::ExecType::TypeIndexScan as i32),
        idx_scan: Some(tipb::IndexScan {
            table_id: Some(TID),
            index_id: Some(5),
            columns: vec![enum_info(tp), column_info(2, &ft(mt::LONG_LONG), true)],
            ..Default::default()
        }),
        ..Default::default()
    };
    let got = run(&store, vec![exec(mt::ENUM)], 2, vec![index_range(5)]).unwrap();
    let u = Datum::Uint;
    assert_eq!(
        got,
        [
            vec![Datum::Null, Datum::Int(3)],
            vec![u(0), Datum::Int(4)],
            vec![u(1), Datum::Int(2)],
            vec![u(3), Datum::Int(1)]
        ]
    );
    // TypeChunk: u64 LE index then the name; NULL an empty slot.
    let d = dag(vec![exec(mt::ENUM)], vec![0], true);
    let resp = Engine::default().handle(&request(&d, vec![index_range(5)]), &mut store.scanner());
    let sel = tipb::SelectResponse::decode(resp.data).unwrap();
    assert!(sel.error.is_none(), "{:?}", sel.error);
    let data: Vec<u8> = sel.chunks.iter().flat_map(|c| c.rows_data.clone().unwrap()).collect();
    let mut r = rcop_datum::Reader::new(&data);
    let c = rcop_datum::chunk::ChunkColumnRef::decode(&mut r, None).unwrap();
    assert!(c.is_null(0));
    assert_eq!(c.get(1).unwrap(), [0u8; 8]);
    assert_eq!(c.get(2).unwrap(), [1, 0, 0, 0, 0, 0, 0, 0, b'x']);
    assert_eq!(c.get(3).unwrap(), [3, 0, 0, 0, 0, 0, 0, 0, b'z', b'z', b'z']);
    // A member index past the names is a typed error, not a panic.
    let mut k = Vec::new();
    let mut vals = Vec::new();
    Datum::Uint(9).encode(Mode::Key, &mut vals).unwrap();
    Datum::Int(9).encode(Mode::Key, &mut vals).unwrap();
    key::encode_index_key(&mut k, TID, 5, &vals);
    let bad = MemStore::from_pairs([(k, b"0".to_vec())]);
    let err = run(&bad, vec![exec(mt::ENUM)], 2, vec![index_range(5)]).unwrap_err();
    assert!(err.contains("enum value 9"), "{err}");
    // SET: refused by name.
    let err = run(&store, vec![exec(mt::SET)], 2, vec![index_range(5)]).unwrap_err();
    assert!(err.contains("Set (248)"), "{err}");
}
