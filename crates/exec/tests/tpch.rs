//! TPC-H Q1 and Q6 pushdowns over lineitem (SF 0.01) stored as TiDB stores it: table 108,
//! `_tidb_rowid` handles, row format v2, API v2 keyspace prefix. The expected answers are
//! computed from the generated rows with plain integer arithmetic.

mod support;

use prost::Message;
use rcop_datum::Datum;
use rcop_exec::Engine;
use rcop_proto::tipb;
use support::dag::{default_rows, request, table_range};
use support::tpch::{self, KEYSPACE, LINEITEM_ID};

const SF: f64 = 0.01;

fn s(d: &Datum) -> String {
    match d {
        Datum::Decimal(x) => x.to_string(),
        Datum::Int(x) => x.to_string(),
        Datum::Uint(x) => x.to_string(),
        Datum::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        other => format!("{other:?}"),
    }
}

#[test]
fn q6_and_q1_give_the_known_answers() {
    let (store, lines) = tpch::lineitem(SF);
    assert_eq!(lines.len(), store.len());
    assert!(lines.len() > 50_000);
    let engine = Engine::default();
    let range = table_range(LINEITEM_ID, Some(KEYSPACE));

    // Q6, TypeDefault.
    let resp = engine.handle(&request(&tpch::q6(false), vec![range.clone()]), &mut store.scanner());
    let sel = tipb::SelectResponse::decode(resp.data).unwrap();
    assert!(sel.error.is_none(), "{:?}", sel.error);
    assert_eq!(sel.output_counts, [lines.len() as i64]);
    let rows = default_rows(&sel, 1);
    assert_eq!(rows.len(), 1);
    assert_eq!(s(&rows[0][0]), tpch::q6_expected(&lines));

    // Q1, TypeDefault.
    let resp = engine.handle(&request(&tpch::q1(false), vec![range.clone()]), &mut store.scanner());
    let sel = tipb::SelectResponse::decode(resp.data).unwrap();
    assert!(sel.error.is_none(), "{:?}", sel.error);
    let rows = default_rows(&sel, 13);
    let expected = tpch::q1_expected(&lines);
    assert_eq!(rows.len(), expected.len());
    for r in &rows {
        let key = (s(&r[11]).as_bytes()[0], s(&r[12]).as_bytes()[0]);
        let e = expected[&key];
        let got: Vec<String> = r.iter().map(s).collect();
        let want = vec![
            tpch::fixed(e[0], 2),
            tpch::fixed(e[1], 2),
            tpch::fixed(e[2], 4),
            tpch::fixed(e[3], 6),
            e[4].to_string(),
            tpch::fixed(e[0], 2),
            e[4].to_string(),
            tpch::fixed(e[1], 2),
            e[4].to_string(),
            tpch::fixed(e[5], 2),
            e[4].to_string(),
        ];
        assert_eq!(&got[..11], &want[..], "group {key:?}");
    }
    // Groups come out in first-seen order.
    assert_eq!(rows.len(), 4);
}

#[test]
fn q6_type_chunk_matches() {
    let (store, lines) = tpch::lineitem(0.002);
    let range = table_range(LINEITEM_ID, Some(KEYSPACE));
    let resp =
        Engine::default().handle(&request(&tpch::q6(true), vec![range]), &mut store.scanner());
    let sel = tipb::SelectResponse::decode(resp.data).unwrap();
    assert!(sel.error.is_none(), "{:?}", sel.error);
    assert_eq!(sel.encode_type, Some(1));
    let data = sel.chunks[0].rows_data.as_deref().unwrap();
    // One decimal column, one row, no nulls: len, null count, 40-byte element.
    assert_eq!(&data[..8], &[1, 0, 0, 0, 0, 0, 0, 0]);
    let d = rcop_datum::Decimal::from_chunk_bytes(&data[8..48]).unwrap();
    assert_eq!(d.to_string(), tpch::q6_expected(&lines));
}
