//! `VECTOR(FLOAT32)` columns (TiKV ≥ v8.4) through TableScan → Projection / TopN → both
//! response encodings: row v2 values and v1 datums (flag 20) in, TiKV's bytes out (TypeDefault
//! `write_evaluable_datum`: flag 20 + binary form; TypeChunk `append_vector_float32`: the
//! binary form in a variable-length column), constants (`ExprType::TiDBVectorFloat32`) and
//! TiKV's vector order.
#![expect(clippy::unwrap_used, reason = "fixtures are known-valid; a failure should be loud")]

mod support;

use prost::Message;
use rcop_datum::chunk::{ChunkColumnRef, mysql_type as mt};
use rcop_datum::vector::encode_vector;
use rcop_datum::{Datum, Reader, key};
use rcop_exec::{Engine, EngineConfig, MemStore};
use rcop_proto::tipb;
use support::dag::{col, column_info, dag, ft, projection, request, scan, table_range, top_n};

const TABLE: i64 = 8;

fn vec_bytes(x: &[f32]) -> Vec<u8> {
    let mut b = Vec::new();
    encode_vector(x, &mut b).unwrap();
    b
}

fn columns() -> Vec<tipb::ColumnInfo> {
    vec![
        column_info(1, &ft(mt::LONG_LONG), true),
        column_info(2, &ft(mt::TIDB_VECTOR_FLOAT32), false),
    ]
}

/// Row 1 (v2): [1.1, 2.2]. Row 2 (v2): NULL. Row 3 (v1, a flag-20 datum): [1]. Row 4 (v2): [].
fn store(extra: Option<(i64, Vec<u8>)>) -> MemStore {
    let k = |h| {
        let mut k = Vec::new();
        key::encode_record_key(&mut k, TABLE, h);
        k
    };
    let v2 = |b: Option<Vec<u8>>| {
        let mut v = Vec::new();
        let mut e = rcop_datum::row::RowEncoder::new();
        match b {
            Some(b) => e.bytes(2, &b).finish(&mut v).unwrap(),
            None => e.null(2).finish(&mut v).unwrap(),
        }
        v
    };
    // Row v1: column id 2 as VarInt datum, then the vector datum.
    let mut v1 = Vec::new();
    Datum::Int(2).encode(rcop_datum::Mode::Value, &mut v1).unwrap();
    v1.push(20);
    v1.extend(vec_bytes(&[1.0]));
    let mut pairs = vec![
        (k(1), v2(Some(vec_bytes(&[1.1, 2.2])))),
        (k(2), v2(None)),
        (k(3), v1),
        (k(4), v2(Some(vec_bytes(&[])))),
    ];
    if let Some((h, v)) = extra {
        pairs.push((k(h), v));
    }
    MemStore::from_pairs(pairs)
}

fn run(d: &tipb::DagRequest, s: &MemStore) -> tipb::SelectResponse {
    let req = request(d, vec![table_range(TABLE, None)]);
    let resp = Engine::new(EngineConfig::default()).handle(&req, &mut s.scanner());
    tipb::SelectResponse::decode(resp.data).unwrap()
}

fn rows_data(sel: &tipb::SelectResponse) -> Vec<u8> {
    assert!(sel.error.is_none(), "{:?}", sel.error);
    sel.chunks.iter().flat_map(|c| c.rows_data.clone().unwrap_or_default()).collect()
}

#[test]
fn type_default_and_chunk_bytes() {
    let sel = run(&dag(vec![scan(TABLE, columns(), false)], vec![1], false), &store(None));
    // Flag 20 then TiDB's binary form (TiKV `vector.rs` test vector for [1.1, 2.2]).
    assert_eq!(
        hex::encode(rows_data(&sel)),
        "1402000000cdcc8c3fcdcc0c40".to_owned() + "00" + "14010000000000803f" + "1400000000"
    );
    let sel = run(&dag(vec![scan(TABLE, columns(), false)], vec![1], true), &store(None));
    let data = rows_data(&sel);
    let mut r = Reader::new(&data);
    let c = ChunkColumnRef::decode(&mut r, None).unwrap();
    assert!(r.is_empty());
    assert_eq!(c.len(), 4);
    assert_eq!(c.get(0).unwrap(), vec_bytes(&[1.1, 2.2]));
    assert!(c.is_null(1));
    assert_eq!(c.get(2).unwrap(), vec_bytes(&[1.0]));
    assert_eq!(c.get(3).unwrap(), [0, 0, 0, 0]);
}

#[test]
fn constants_and_order() {
    // SELECT v, '[3,4]' (a TiDBVectorFloat32 constant).
    let constant = tipb::Expr {
        tp: Some(tipb::ExprType::TiDbVectorFloat32 as i32),
        val: Some(vec_bytes(&[3.0, 4.0]).into()),
        field_type: Some(ft(mt::TIDB_VECTOR_FLOAT32)),
        ..Default::default()
    };
    let v = || col(1, ft(mt::TIDB_VECTOR_FLOAT32));
    let d =
        dag(vec![scan(TABLE, columns(), false), projection(vec![v(), constant])], vec![1], true);
    let data = rows_data(&run(&d, &store(None)));
    let mut r = Reader::new(&data);
    let c = ChunkColumnRef::decode(&mut r, None).unwrap();
    assert_eq!(
        (0..4).map(|i| c.get(i).unwrap().to_vec()).collect::<Vec<_>>(),
        vec![vec_bytes(&[3.0, 4.0]); 4]
    );
    // A constant that is not a whole vector is a typed error.
    let bad = tipb::Expr { val: Some(vec![2, 0, 0, 0, 1].into()), ..constant_clone() };
    let d = dag(vec![scan(TABLE, columns(), false), projection(vec![bad])], vec![0], true);
    assert!(run(&d, &store(None)).error.is_some());
    // ORDER BY v: NULL, [], [1], [1.1,2.2] (TiKV `test_compare`: a prefix sorts first).
    let d = dag(vec![scan(TABLE, columns(), false), top_n(vec![(v(), false)], 4)], vec![0], false);
    let rows = support::dag::default_rows(&run(&d, &store(None)), 1);
    let want: Vec<Vec<Datum>> = [2, 4, 3, 1].iter().map(|&h| vec![Datum::Int(h)]).collect();
    assert_eq!(rows, want);
}

fn constant_clone() -> tipb::Expr {
    tipb::Expr {
        tp: Some(tipb::ExprType::TiDbVectorFloat32 as i32),
        field_type: Some(ft(mt::TIDB_VECTOR_FLOAT32)),
        ..Default::default()
    }
}

#[test]
fn corrupt_vectors_are_typed_errors() {
    // A v2 value whose count says more elements than it holds, and one with a stray byte.
    for bad in [vec![3, 0, 0, 0, 0, 0, 128, 63], {
        let mut b = vec_bytes(&[1.0]);
        b.push(7);
        b
    }] {
        let mut v = Vec::new();
        rcop_datum::row::RowEncoder::new().bytes(2, &bad).finish(&mut v).unwrap();
        let sel =
            run(&dag(vec![scan(TABLE, columns(), false)], vec![1], true), &store(Some((9, v))));
        assert!(sel.error.is_some(), "{bad:?}");
    }
}

proptest::proptest! {
    /// Any bytes as a v2 vector value or as a v1 datum payload: rows or a typed error.
    #[test]
    fn random_values_never_panic(b in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..32), v1 in proptest::prelude::any::<bool>()) {
        let mut v = Vec::new();
        if v1 {
            Datum::Int(2).encode(rcop_datum::Mode::Value, &mut v).unwrap();
            v.push(20);
            v.extend_from_slice(&b);
        } else {
            rcop_datum::row::RowEncoder::new().bytes(2, &b).finish(&mut v).unwrap();
        }
        for chunk in [false, true] {
            let _ = run(&dag(vec![scan(TABLE, columns(), false)], vec![1], chunk), &store(Some((9, v.clone()))));
        }
    }
}
