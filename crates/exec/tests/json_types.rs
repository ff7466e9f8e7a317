//! JSON, ENUM and BIT columns through TableScan → Selection / Projection → both response
//! encodings, with the bytes TiKV writes (TiKV `datum_codec.rs` / `vector.rs` for TypeDefault,
//! `chunk/column.rs` / `enums.rs` for TypeChunk).
#![expect(clippy::unwrap_used, reason = "fixtures are known-valid; a failure should be loud")]

mod support;

use prost::Message;
use rcop_datum::chunk::{ChunkColumnRef, mysql_type as mt};
use rcop_datum::{Datum, Json, Reader, codec, key};
use rcop_exec::{Engine, EngineConfig, MemStore};
use rcop_proto::tipb;
use support::dag::{column_info, dag, ft, func, projection, request, scan, selection, table_range};

const TABLE: i64 = 7;
const FLAG_UNSIGNED: u32 = 32;

fn ft_enum() -> tipb::FieldType {
    tipb::FieldType { elems: vec!["a".into(), "bb".into(), "ccc".into()], ..ft(mt::ENUM) }
}

fn ft_bit() -> tipb::FieldType {
    tipb::FieldType { flag: Some(FLAG_UNSIGNED), flen: Some(8), ..ft(mt::BIT) }
}

fn columns() -> Vec<tipb::ColumnInfo> {
    let mut e = column_info(3, &ft_enum(), false);
    e.elems = ft_enum().elems;
    vec![
        column_info(1, &ft(mt::LONG_LONG), true),
        column_info(2, &ft(mt::JSON), false),
        e,
        column_info(4, &ft_bit(), false),
    ]
}

fn doc() -> Json {
    Json::parse(r#"{"key":"value"}"#).unwrap()
}

/// Row 1 (v2): JSON object, enum 2, bit 5. Row 2 (v2): all NULL. Row 3 (v1): JSON `[1, 2]`,
/// enum 3 (as VarUint), bit 255.
fn store() -> MemStore {
    let mut pairs = Vec::new();
    let k = |h| {
        let mut k = Vec::new();
        key::encode_record_key(&mut k, TABLE, h);
        k
    };
    let mut v = Vec::new();
    rcop_datum::row::RowEncoder::new()
        .json(2, doc().as_bytes())
        .uint(3, 2)
        .uint(4, 5)
        .finish(&mut v)
        .unwrap();
    pairs.push((k(1), v));
    let mut v = Vec::new();
    rcop_datum::row::RowEncoder::new().null(2).null(3).null(4).finish(&mut v).unwrap();
    pairs.push((k(2), v));
    let mut v = Vec::new();
    let arr = Json::parse("[1, 2]").unwrap().into_bytes();
    rcop_datum::row::encode_row_v1(
        &[(2, Datum::Json(arr)), (3, Datum::Uint(3)), (4, Datum::Uint(255))],
        &mut v,
    )
    .unwrap();
    pairs.push((k(3), v));
    MemStore::from_pairs(pairs)
}

fn run(d: &tipb::DagRequest) -> tipb::SelectResponse {
    let req = request(d, vec![table_range(TABLE, None)]);
    let resp = Engine::new(EngineConfig::default()).handle(&req, &mut store().scanner());
    tipb::SelectResponse::decode(resp.data).unwrap()
}

fn rows_data(sel: &tipb::SelectResponse) -> Vec<u8> {
    assert!(sel.error.is_none(), "{:?}", sel.error);
    sel.chunks.iter().flat_map(|c| c.rows_data.clone().unwrap_or_default()).collect()
}

fn uint_datum(v: u64) -> Vec<u8> {
    let mut b = vec![4];
    codec::encode_u64(&mut b, v);
    b
}

#[test]
fn type_default_bytes() {
    let sel = run(&dag(vec![scan(TABLE, columns(), false)], vec![1, 2, 3], false));
    let mut want = Vec::new();
    // Row 1: JSON datum `0A` + binary; ENUM as a Uint datum of its index; BIT (unsigned) Uint.
    want.push(10);
    want.extend_from_slice(doc().as_bytes());
    want.extend(uint_datum(2));
    want.extend(uint_datum(5));
    want.extend([0, 0, 0]);
    want.push(10);
    want.extend_from_slice(Json::parse("[1, 2]").unwrap().as_bytes());
    want.extend(uint_datum(3));
    want.extend(uint_datum(255));
    assert_eq!(hex::encode(rows_data(&sel)), hex::encode(want));
}

#[test]
fn type_chunk_bytes() {
    let sel = run(&dag(vec![scan(TABLE, columns(), false)], vec![1, 2], true));
    let data = rows_data(&sel);
    let mut r = Reader::new(&data);
    let j = ChunkColumnRef::decode(&mut r, None).unwrap();
    let e = ChunkColumnRef::decode(&mut r, None).unwrap();
    assert!(r.is_empty());
    assert_eq!(j.len(), 3);
    assert_eq!(j.get(0).unwrap(), doc().as_bytes());
    assert!(j.is_null(1));
    assert_eq!(j.get(2).unwrap(), Json::parse("[1,2]").unwrap().as_bytes());
    // TiKV `write_enum_to_chunk`: u64 LE index, then the name.
    assert_eq!(e.get(0).unwrap(), [2, 0, 0, 0, 0, 0, 0, 0, b'b', b'b']);
    assert!(e.is_null(1));
    assert_eq!(e.get(2).unwrap(), [3, 0, 0, 0, 0, 0, 0, 0, b'c', b'c', b'c']);
    // BIT(8) in TypeChunk: a variable-length column of the value's low (flen + 7) / 8
    // big-endian bytes (TiKV `Column::from_vector_value`, TiDB `NewBinaryLiteralFromUint`):
    // 3 rows, 1 NULL, bitmap 0b101, offsets 0 1 1 2, data 05 ff.
    let sel = run(&dag(vec![scan(TABLE, columns(), false)], vec![3], true));
    assert_eq!(
        hex::encode(rows_data(&sel)),
        "03000000010000000500000000000000000100000000000000010000000000000002000000000000\
         0005ff"
    );
    // Wider than TiKV encodes (BIT flen > 64): refused by name.
    let mut cols = columns();
    cols[3] = column_info(4, &tipb::FieldType { flen: Some(65), ..ft_bit() }, false);
    let sel = run(&dag(vec![scan(TABLE, cols, false)], vec![3], true));
    let err = format!("{:?}", sel.error);
    assert!(err.contains("Bit (16) of flen 65"), "{err}");
}

fn col_ref(offset: i64, f: tipb::FieldType) -> tipb::Expr {
    support::dag::col(offset, f)
}

#[test]
fn selection_and_projection_over_json() {
    // WHERE j IS NULL → row 2 only.
    let cond = func(3117, ft(mt::LONG_LONG), vec![col_ref(1, ft(mt::JSON))]);
    let sel = run(&dag(vec![scan(TABLE, columns(), false), selection(vec![cond])], vec![0], false));
    let rows = support::dag::default_rows(&sel, 1);
    assert_eq!(rows, vec![vec![Datum::Int(2)]]);

    // SELECT CAST(j AS CHAR), j = '{"key": "value"}' (a MysqlJson constant), j, e.
    let constant = tipb::Expr {
        tp: Some(108),
        val: Some(doc().into_bytes().into()),
        field_type: Some(ft(mt::JSON)),
        ..Default::default()
    };
    let exprs = vec![
        func(62, ft(mt::VAR_STRING), vec![col_ref(1, ft(mt::JSON))]),
        func(146, ft(mt::LONG_LONG), vec![col_ref(1, ft(mt::JSON)), constant]),
        col_ref(1, ft(mt::JSON)),
        col_ref(2, ft_enum()),
    ];
    let d = dag(vec![scan(TABLE, columns(), false), projection(exprs)], vec![0, 1, 2, 3], false);
    let sel = run(&d);
    assert!(sel.error.is_none(), "{:?}", sel.error);
    let rows = support::dag::default_rows(&sel, 4);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0][0], Datum::Bytes(br#"{"key": "value"}"#.to_vec()));
    assert_eq!(rows[0][1], Datum::Int(1));
    assert_eq!(rows[0][2], Datum::Json(doc().into_bytes()));
    assert_eq!(rows[0][3], Datum::Uint(2));
    assert_eq!(rows[1], vec![Datum::Null; 4]);
    assert_eq!(rows[2][0], Datum::Bytes(b"[1, 2]".to_vec()));
    assert_eq!(rows[2][1], Datum::Int(0));
}

#[test]
fn casts_to_json() {
    const PARSE_TO_JSON: u32 = 1 << 18;
    let parse_ft = tipb::FieldType { flag: Some(PARSE_TO_JSON), ..ft(mt::JSON) };
    let exprs = vec![
        // CAST('{"b": 1, "a": [true]}' AS JSON) then back to text.
        func(
            62,
            ft(mt::VAR_STRING),
            vec![func(36, parse_ft, vec![support::dag::string(r#"{"b": 1, "a": [true]}"#, -46)])],
        ),
        // CAST(-3 AS JSON), CAST(2.5 AS JSON), a string without PARSE_TO_JSON is a JSON string.
        func(62, ft(mt::VAR_STRING), vec![func(7, ft(mt::JSON), vec![support::dag::int(-3)])]),
        func(62, ft(mt::VAR_STRING), vec![func(16, ft(mt::JSON), vec![support::dag::real(2.5)])]),
        func(
            62,
            ft(mt::VAR_STRING),
            vec![func(36, ft(mt::JSON), vec![support::dag::string("x\"y", -46)])],
        ),
    ];
    let d = dag(vec![scan(TABLE, columns(), false), projection(exprs)], vec![0, 1, 2, 3], false);
    let sel = run(&d);
    assert!(sel.error.is_none(), "{:?}", sel.error);
    let rows = support::dag::default_rows(&sel, 4);
    assert_eq!(
        rows[0],
        vec![
            Datum::Bytes(br#"{"a": [true], "b": 1}"#.to_vec()),
            Datum::Bytes(b"-3".to_vec()),
            Datum::Bytes(b"2.5".to_vec()),
            Datum::Bytes(br#""x\"y""#.to_vec()),
        ]
    );
}

#[test]
fn unsupported_json_functions_and_set_are_named() {
    // JSON_EXTRACT (5001) is not evaluated: the error names it.
    let e = func(5001, ft(mt::JSON), vec![col_ref(1, ft(mt::JSON))]);
    let sel = run(&dag(vec![scan(TABLE, columns(), false), projection(vec![e])], vec![0], false));
    let err = format!("{:?}", sel.error);
    assert!(err.contains("JsonExtractSig"), "{err}");
    // A SET column is refused by name, as TiKV's EvalType::try_from refuses it.
    let mut cols = columns();
    cols.push(column_info(5, &ft(mt::SET), false));
    let sel = run(&dag(vec![scan(TABLE, cols, false)], vec![4], false));
    let err = format!("{:?}", sel.error);
    assert!(err.contains("Set (248)"), "{err}");
}

#[test]
fn order_by_json_and_enum() {
    // ORDER BY j DESC LIMIT 3: the array (precedence above objects) first, NULL last.
    let by = vec![(col_ref(1, ft(mt::JSON)), true)];
    let d = dag(vec![scan(TABLE, columns(), false), support::dag::top_n(by, 3)], vec![0], false);
    let rows = support::dag::default_rows(&run(&d), 1);
    assert_eq!(rows, vec![vec![Datum::Int(3)], vec![Datum::Int(1)], vec![Datum::Int(2)]]);
    // ORDER BY e LIMIT 3: NULL, then index 2 before 3.
    let by = vec![(col_ref(2, ft_enum()), false)];
    let d = dag(vec![scan(TABLE, columns(), false), support::dag::top_n(by, 3)], vec![0], false);
    let rows = support::dag::default_rows(&run(&d), 1);
    assert_eq!(rows, vec![vec![Datum::Int(2)], vec![Datum::Int(1)], vec![Datum::Int(3)]]);
}
