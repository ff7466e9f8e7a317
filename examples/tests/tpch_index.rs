//! TPC-H in go-tpc's schema as TiDB stores it (primary-key handles, clustered `lineitem` and
//! `partsupp`, the foreign-key indexes), run through the engine locally: IndexScan DAGs
//! equal the TableScan answer of the same query and the rows `tpchgen` generates; the `_ci`
//! variant groups, compares and sorts strings case-insensitively, checked against a
//! reference that folds case itself.
#![expect(clippy::unwrap_used, clippy::panic, reason = "fixture builders outside #[test] fns")]

#[path = "../../crates/exec/tests/support/dag.rs"]
#[expect(clippy::unwrap_used, reason = "the shared builders' fixtures are known-valid")]
mod dag;

use std::collections::BTreeMap;

use dag::{agg, aggregation, col, column_info, default_rows, ft, request, scan, selection, string};
use prost::Message;
use rcop_datum::chunk::mysql_type as mt;
use rcop_datum::{Datum, Mode, key};
use rcop_examples::tpch::schema::{self, IndexDef, TableDef, Val};
use rcop_examples::tpch::{LoadOptions, go_tpc_entries, keyspace_prefix};
use rcop_exec::{Collation, Engine, MemStore};
use rcop_proto::{coprocessor, tipb};

const KS: u32 = 1;
const ORDERS: i64 = 107;
const LINEITEM: i64 = 108;
const GENERAL_CI: i32 = -45;

fn bigint() -> tipb::FieldType {
    tipb::FieldType { flag: Some(1), flen: Some(20), decimal: Some(0), ..ft(mt::LONG_LONG) }
}

fn char_ft(flen: i32, collate: i32) -> tipb::FieldType {
    tipb::FieldType { flag: Some(1), flen: Some(flen), collate: Some(collate), ..ft(mt::STRING) }
}

fn store(table: &str, sf: f64, opts: &LoadOptions) -> MemStore {
    MemStore::from_pairs(go_tpc_entries(KS, table, sf, opts).unwrap())
}

fn key_of(vals: &[Datum]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in vals {
        v.encode(Mode::Key, &mut out).unwrap();
    }
    out
}

/// `[start, end)` of index `index` entries whose first columns are `>= lo` and `< hi`.
fn index_range(table: i64, index: i64, lo: &[Datum], hi: &[Datum]) -> coprocessor::KeyRange {
    let p = keyspace_prefix(KS).unwrap();
    let (mut start, mut end) = (p.clone(), p);
    key::encode_index_key(&mut start, table, index, &key_of(lo));
    key::encode_index_key(&mut end, table, index, &key_of(hi));
    coprocessor::KeyRange { start: start.into(), end: end.into() }
}

fn record_range(table: i64, lo: Option<&[Datum]>, hi: Option<&[Datum]>) -> coprocessor::KeyRange {
    let p = keyspace_prefix(KS).unwrap();
    let (mut start, mut end) = (p.clone(), p);
    key::encode_record_prefix(&mut start, table);
    key::encode_record_prefix(&mut end, table);
    match (lo, hi) {
        (Some(lo), Some(hi)) => {
            start.extend_from_slice(&key_of(lo));
            end.extend_from_slice(&key_of(hi));
        }
        _ => key::prefix_next_in_place(&mut end),
    }
    coprocessor::KeyRange { start: start.into(), end: end.into() }
}

fn index_scan(
    table: i64,
    index: i64,
    columns: Vec<tipb::ColumnInfo>,
    primary_column_ids: Vec<i64>,
    desc: bool,
) -> tipb::Executor {
    tipb::Executor {
        tp: Some(tipb::ExecType::TypeIndexScan as i32),
        idx_scan: Some(tipb::IndexScan {
            table_id: Some(table),
            index_id: Some(index),
            columns,
            desc: Some(desc),
            unique: Some(false),
            primary_column_ids,
        }),
        executor_id: Some("IndexRangeScan_1".into()),
        ..Default::default()
    }
}

fn clustered_scan(table: i64, columns: Vec<tipb::ColumnInfo>, pk: Vec<i64>) -> tipb::Executor {
    let mut e = scan(table, columns, false);
    if let Some(ts) = e.tbl_scan.as_mut() {
        ts.primary_column_ids = pk;
    }
    e
}

/// Runs `executors` over `ranges` (TypeDefault) and returns rows of `width` datums.
fn run(
    s: &MemStore,
    executors: Vec<tipb::Executor>,
    width: usize,
    ranges: Vec<coprocessor::KeyRange>,
) -> Vec<Vec<Datum>> {
    let offsets = (0..width as u32).collect();
    let req = request(&dag::dag(executors, offsets, false), ranges);
    let resp = Engine::default().handle(&req, &mut s.scanner());
    assert!(resp.other_error.is_empty(), "{}", resp.other_error);
    let sel = tipb::SelectResponse::decode(resp.data).unwrap();
    assert!(sel.error.is_none(), "{:?}", sel.error);
    default_rows(&sel, width)
}

fn int(d: &Datum) -> i64 {
    match d {
        Datum::Int(x) => *x,
        Datum::Uint(x) => i64::try_from(*x).unwrap(),
        other => panic!("not an integer: {other:?}"),
    }
}

fn bytes(d: &Datum) -> Vec<u8> {
    match d {
        Datum::Bytes(b) => b.clone(),
        other => panic!("not a string: {other:?}"),
    }
}

fn ints(rows: &[Vec<Datum>]) -> Vec<Vec<i64>> {
    rows.iter().map(|r| r.iter().map(int).collect()).collect()
}

#[test]
fn orders_custkey_index_scan_equals_table_scan_and_the_generator() {
    let s = store("orders", 0.01, &LoadOptions::go_tpc());
    let (lo, hi) = (100, 180);
    // IndexScan of ORDERS_FK1 (o_custkey) for o_custkey in [lo, hi): the index column and
    // the handle (o_orderkey), in index order.
    let cols = || vec![column_info(2, &bigint(), false), column_info(1, &bigint(), true)];
    let range = || index_range(ORDERS, 1, &[Datum::Int(lo)], &[Datum::Int(hi)]);
    let got = ints(&run(&s, vec![index_scan(ORDERS, 1, cols(), vec![], false)], 2, vec![range()]));
    // The same query as a table scan: o_orderkey from the int handle, o_custkey from the row.
    let b = || ft(mt::LONG_LONG);
    let conds = vec![
        dag::func(tipb::ScalarFuncSig::GeInt as i32, b(), vec![col(1, bigint()), dag::int(lo)]),
        dag::func(tipb::ScalarFuncSig::LtInt as i32, b(), vec![col(1, bigint()), dag::int(hi)]),
    ];
    let tcols = vec![column_info(1, &bigint(), true), column_info(2, &bigint(), false)];
    let table = run(
        &s,
        vec![scan(ORDERS, tcols, false), selection(conds)],
        2,
        vec![record_range(ORDERS, None, None)],
    );
    let mut by_index: Vec<Vec<i64>> = table.iter().map(|r| vec![int(&r[1]), int(&r[0])]).collect();
    by_index.sort();
    assert_eq!(got, by_index);
    // And what tpchgen generates.
    let mut want: Vec<Vec<i64>> = tpchgen::generators::OrderGenerator::new(0.01, 1, 1)
        .iter()
        .filter(|o| (lo..hi).contains(&o.o_custkey))
        .map(|o| vec![o.o_custkey, o.o_orderkey])
        .collect();
    want.sort();
    assert!(want.len() > 50, "{}", want.len());
    assert_eq!(got, want);
    // Descending: the same entries in reverse.
    let desc = ints(&run(&s, vec![index_scan(ORDERS, 1, cols(), vec![], true)], 2, vec![range()]));
    want.reverse();
    assert_eq!(desc, want);
    // A COUNT/SUM over the index scan equals the table scan's aggregate of the same rows.
    let aggs = || {
        vec![
            agg(3001, bigint(), vec![dag::int(1)]),
            agg(3002, dag::ft_dec(41, 0), vec![col(1, bigint())]),
        ]
    };
    let over_index = run(
        &s,
        vec![index_scan(ORDERS, 1, cols(), vec![], false), aggregation(vec![], aggs())],
        2,
        vec![range()],
    );
    let n = want.len() as i64;
    let sum: i64 = want.iter().map(|r| r[1]).sum();
    assert_eq!(int(&over_index[0][0]), n);
    assert_eq!(over_index[0][1], Datum::Decimal(sum.to_string().parse().unwrap()));
}

#[test]
fn lineitem_clustered_primary_key_and_fk2_index_scan() {
    let s = store("lineitem", 0.01, &LoadOptions::go_tpc());
    let generated: Vec<[i64; 4]> = tpchgen::generators::LineItemGenerator::new(0.01, 1, 1)
        .iter()
        .map(|l| [l.l_orderkey, l.l_partkey, l.l_suppkey, i64::from(l.l_linenumber)])
        .collect();
    let pk = vec![1, 4];
    let all_cols = || (1..=4).map(|id| column_info(id, &bigint(), false)).collect::<Vec<_>>();

    // A clustered primary-key range on l_orderkey in [1000, 1200): a table scan of the common
    // handle records, l_orderkey and l_linenumber decoded from the key (the row leaves them
    // out), in (orderkey, linenumber) order.
    let (lo, hi) = (1000, 1200);
    let range = record_range(LINEITEM, Some(&[Datum::Int(lo)]), Some(&[Datum::Int(hi)]));
    let got =
        ints(&run(&s, vec![clustered_scan(LINEITEM, all_cols(), pk.clone())], 4, vec![range]));
    let mut want: Vec<Vec<i64>> =
        generated.iter().filter(|l| (lo..hi).contains(&l[0])).map(|l| l.to_vec()).collect();
    want.sort_by_key(|l| (l[0], l[3]));
    assert!(want.len() > 100);
    assert_eq!(got, want);

    // IndexScan of LINEITEM_FK2 (l_partkey, l_suppkey) for l_partkey in [100, 140): the
    // covering columns and the common handle, in (partkey, suppkey, orderkey, linenumber).
    let (plo, phi) = (100, 140);
    let icols = vec![
        column_info(2, &bigint(), false),
        column_info(3, &bigint(), false),
        column_info(1, &bigint(), false),
        column_info(4, &bigint(), false),
    ];
    let irange = index_range(LINEITEM, 2, &[Datum::Int(plo)], &[Datum::Int(phi)]);
    let got =
        ints(&run(&s, vec![index_scan(LINEITEM, 2, icols, pk.clone(), false)], 4, vec![irange]));
    let table = ints(&run(
        &s,
        vec![clustered_scan(LINEITEM, all_cols(), pk)],
        4,
        vec![record_range(LINEITEM, None, None)],
    ));
    assert_eq!(table.len(), generated.len());
    let mut by_index: Vec<Vec<i64>> = table
        .iter()
        .filter(|r| (plo..phi).contains(&r[1]))
        .map(|r| vec![r[1], r[2], r[0], r[3]])
        .collect();
    by_index.sort();
    assert!(by_index.len() > 50);
    assert_eq!(got, by_index);
    let mut want: Vec<Vec<i64>> = generated
        .iter()
        .filter(|l| (plo..phi).contains(&l[1]))
        .map(|l| vec![l[1], l[2], l[0], l[3]])
        .collect();
    want.sort();
    assert_eq!(got, want);
}

/// The priorities as generated, and as stored in the `_ci` variant (every second row lower
/// case).
fn priorities() -> Vec<(Vec<u8>, Vec<u8>)> {
    tpchgen::generators::OrderGenerator::new(0.01, 1, 1)
        .iter()
        .enumerate()
        .map(|(n, o)| {
            let original = o.o_orderpriority.as_bytes().to_vec();
            let stored = if n % 2 == 1 { original.to_ascii_lowercase() } else { original.clone() };
            (original, stored)
        })
        .collect()
}

#[test]
fn ci_variant_groups_and_compares_case_insensitively() {
    let s = store("orders", 0.01, &LoadOptions::go_tpc_ci(GENERAL_CI));
    let data = priorities();
    let all = || vec![record_range(ORDERS, None, None)];
    let group_count = |collate: i32| {
        let cols = vec![column_info(6, &char_ft(15, collate), false)];
        let aggs = vec![agg(3001, bigint(), vec![dag::int(1)])];
        let group = vec![col(0, char_ft(15, collate))];
        let rows = run(&s, vec![scan(ORDERS, cols, false), aggregation(group, aggs)], 2, all());
        rows.iter().map(|r| (bytes(&r[1]), int(&r[0]))).collect::<Vec<_>>()
    };
    // utf8mb4_general_ci: one group per priority, case folded (MySQL's grouping).
    let mut want: BTreeMap<Vec<u8>, i64> = BTreeMap::new();
    for (original, _) in &data {
        *want.entry(original.to_ascii_uppercase()).or_default() += 1;
    }
    let got = group_count(GENERAL_CI);
    let folded: BTreeMap<Vec<u8>, i64> =
        got.iter().map(|(k, n)| (k.to_ascii_uppercase(), *n)).collect();
    assert_eq!(got.len(), 5);
    assert_eq!(folded, want);
    // utf8mb4_bin over the same bytes: the cases stay apart.
    let mut want_bin: BTreeMap<Vec<u8>, i64> = BTreeMap::new();
    for (_, stored) in &data {
        *want_bin.entry(stored.clone()).or_default() += 1;
    }
    let bin: BTreeMap<Vec<u8>, i64> = group_count(-46).into_iter().collect();
    assert_eq!(bin.len(), 10);
    assert_eq!(bin, want_bin);

    // Equality with a lower-case constant matches both cases (TiDB puts the comparison's
    // collation on the function's own field type).
    let eq_ft = tipb::FieldType { collate: Some(GENERAL_CI), ..ft(mt::LONG_LONG) };
    let eq = dag::func(
        tipb::ScalarFuncSig::EqString as i32,
        eq_ft,
        vec![col(0, char_ft(15, GENERAL_CI)), string("1-urgent", GENERAL_CI)],
    );
    let cols = vec![column_info(6, &char_ft(15, GENERAL_CI), false)];
    let rows = run(
        &s,
        vec![
            scan(ORDERS, cols, false),
            selection(vec![eq]),
            aggregation(vec![], vec![agg(3001, bigint(), vec![dag::int(1)])]),
        ],
        1,
        all(),
    );
    assert_eq!(int(&rows[0][0]), want[&b"1-URGENT".to_vec()]);

    // ORDER BY o_clerk LIMIT 20 (TopN): the clerks in case-folded order.
    let clerks: Vec<Vec<u8>> = tpchgen::generators::OrderGenerator::new(0.01, 1, 1)
        .iter()
        .map(|o| o.o_clerk.to_string().to_ascii_uppercase().into_bytes())
        .collect();
    let mut sorted = clerks.clone();
    sorted.sort();
    let cols = vec![column_info(7, &char_ft(15, GENERAL_CI), false)];
    let top = run(
        &s,
        vec![
            scan(ORDERS, cols, false),
            dag::top_n(vec![(col(0, char_ft(15, GENERAL_CI)), false)], 20),
        ],
        1,
        all(),
    );
    let top: Vec<Vec<u8>> = top.iter().map(|r| bytes(&r[0])).collect();
    // Both cases come out among equals: the order really is case-insensitive.
    assert!(top.iter().any(|c| c[0] == b'c') && top.iter().any(|c| c[0] == b'C'), "{top:?}");
    let top: Vec<Vec<u8>> = top.iter().map(|c| c.to_ascii_uppercase()).collect();
    assert_eq!(top, sorted[..20]);
}

/// go-tpc indexes no string column; an index on `o_orderpriority` added to its `orders`
/// shows the `_ci` layout: the key holds the collation's sort key, the value restores the
/// original string.
#[test]
fn ci_string_index_holds_sort_keys_and_restores_values() {
    static IDX: [IndexDef; 2] = [
        IndexDef { id: 1, name: "ORDERS_FK1", cols: &[2] },
        IndexDef { id: 2, name: "O_PRIORITY", cols: &[6] },
    ];
    let base = schema::table("orders").unwrap();
    let t = TableDef { indexes: &IDX, ..*base };
    let prefix = keyspace_prefix(KS).unwrap();
    let mut pairs = Vec::new();
    for (n, row) in schema::rows("orders", 0.01).unwrap().enumerate() {
        let mut row = row.unwrap();
        if n % 2 == 1 {
            schema::lower_strings(&mut row);
        }
        schema::row_entries(&t, &prefix, &row, GENERAL_CI, &mut pairs).unwrap();
        assert!(matches!(row[5], Val::Str(_)));
    }
    let s = MemStore::from_pairs(pairs);
    // Point range on the sort key of '2-high' (any case).
    let mut sk = Vec::new();
    Collation::GeneralCi.sort_key(b"2-high", &mut sk);
    let mut start = keyspace_prefix(KS).unwrap();
    key::encode_index_key(&mut start, ORDERS, 2, &key_of(&[Datum::Bytes(sk)]));
    let end = key::prefix_next(&start);
    let range = coprocessor::KeyRange { start: start.into(), end: end.into() };
    let cols =
        vec![column_info(6, &char_ft(15, GENERAL_CI), false), column_info(1, &bigint(), true)];
    let got = run(&s, vec![index_scan(ORDERS, 2, cols, vec![], false)], 2, vec![range]);
    let mut got: Vec<(i64, Vec<u8>)> = got.iter().map(|r| (int(&r[1]), bytes(&r[0]))).collect();
    got.sort();
    let mut want: Vec<(i64, Vec<u8>)> = tpchgen::generators::OrderGenerator::new(0.01, 1, 1)
        .iter()
        .zip(priorities())
        .filter(|(_, (original, _))| original.as_slice() == b"2-HIGH")
        .map(|(o, (_, stored))| (o.o_orderkey, stored))
        .collect();
    want.sort();
    assert!(want.iter().any(|(_, v)| v == b"2-high") && want.iter().any(|(_, v)| v == b"2-HIGH"));
    assert_eq!(got, want);
}
