//! Casts as TiKV's `impl_cast.rs` answers them: the `in_union` flag TiDB puts in a cast's
//! `Expr.val` (`tipb.InUnionMetadata`), and `produce_dec_with_specified_tp`'s rounding
//! warning. Expected values are TiKV's published unit-test expectations.
#![expect(clippy::unwrap_used, clippy::panic, reason = "fixture helpers outside #[test] fns")]

mod support;

use prost::Message;
use rcop_datum::chunk::mysql_type as mt;
use rcop_datum::{Datum, Decimal, Reader, key};
use rcop_exec::{Engine, EngineConfig, MemStore};
use rcop_proto::{coprocessor, tipb};
use support::dag::{column_info, dec, ft, ft_dec, func, int, real, scan, string};

const INT_AS_INT: i32 = 1;
const INT_AS_REAL: i32 = 2;
const INT_AS_DECIMAL: i32 = 4;
const REAL_AS_INT: i32 = 10;
const REAL_AS_REAL: i32 = 11;
const REAL_AS_DECIMAL: i32 = 13;
const DECIMAL_AS_INT: i32 = 20;
const DECIMAL_AS_REAL: i32 = 21;
const DECIMAL_AS_DECIMAL: i32 = 23;
const STRING_AS_INT: i32 = 30;
const STRING_AS_REAL: i32 = 31;
const STRING_AS_DECIMAL: i32 = 33;

const TRUNCATE_AS_WARNING: u64 = 1 << 1;
const OVERFLOW_AS_WARNING: u64 = 1 << 6;

fn unsigned(mut f: tipb::FieldType) -> tipb::FieldType {
    f.flag = Some(32);
    f
}

/// A cast of `arg` to `to`, with `InUnionMetadata { in_union }` in its `val`.
fn cast(sig: i32, to: tipb::FieldType, arg: tipb::Expr, in_union: bool) -> tipb::Expr {
    let mut e = func(sig, to, vec![arg]);
    e.val = Some(tipb::InUnionMetadata { in_union }.encode_to_vec().into());
    e
}

/// Evaluates `e` over one row (TypeDefault), returning the value and the warning codes.
fn eval_flags(e: tipb::Expr, flags: u64) -> Result<(Datum, Vec<i32>), String> {
    let projection = tipb::Executor {
        tp: Some(tipb::ExecType::TypeProjection as i32),
        projection: Some(Box::new(tipb::Projection { exprs: vec![e], ..Default::default() })),
        ..Default::default()
    };
    let dag = tipb::DagRequest {
        executors: vec![scan(1, vec![column_info(1, &ft(8), true)], false), projection],
        output_offsets: vec![0],
        time_zone_offset: Some(0),
        flags: Some(flags),
        ..Default::default()
    };
    let mut k = Vec::new();
    key::encode_record_key(&mut k, 1, 1);
    let mut row = Vec::new();
    rcop_datum::row::RowEncoder::new().finish(&mut row).unwrap();
    let store = MemStore::from_pairs(vec![(k, row)]);
    let mut start = Vec::new();
    key::encode_record_prefix(&mut start, 1);
    let req = coprocessor::Request {
        tp: 103,
        start_ts: 10,
        data: dag.encode_to_vec().into(),
        ranges: vec![coprocessor::KeyRange {
            end: key::prefix_next(&start).into(),
            start: start.into(),
        }],
        ..Default::default()
    };
    let resp = Engine::new(EngineConfig::default()).handle(&req, &mut store.scanner());
    if !resp.other_error.is_empty() {
        return Err(resp.other_error);
    }
    let sel = tipb::SelectResponse::decode(resp.data).unwrap();
    if let Some(err) = sel.error {
        return Err(format!("{err:?}"));
    }
    let rows = sel.chunks[0].rows_data.clone().unwrap_or_default();
    let d = Datum::decode(&mut Reader::new(&rows)).unwrap();
    Ok((d, sel.warnings.iter().filter_map(|w| w.code).collect()))
}

fn eval(e: tipb::Expr) -> (Datum, Vec<i32>) {
    eval_flags(e, TRUNCATE_AS_WARNING | OVERFLOW_AS_WARNING).unwrap_or_else(|e| panic!("{e}"))
}

fn d(s: &str) -> Datum {
    Datum::Decimal(s.parse::<Decimal>().unwrap())
}

fn bits(d: &Datum) -> u64 {
    match d {
        Datum::Int(x) => *x as u64,
        Datum::Uint(x) => *x,
        other => panic!("not an integer: {other:?}"),
    }
}

fn uint_ft() -> tipb::FieldType {
    unsigned(ft(mt::LONG_LONG))
}

#[test]
fn signed_int_as_unsigned_int_in_union() {
    // TiKV's test_signed_int_as_unsigned_int: (origin, result, in_union).
    for (v, want, in_union) in [
        (-10, 0u64, true),
        (10, 10, true),
        (i64::MIN, 0, true),
        (i64::MAX, i64::MAX as u64, true),
        (-10, -10i64 as u64, false),
        (i64::MIN, i64::MIN as u64, false),
    ] {
        let (got, w) = eval(cast(INT_AS_INT, uint_ft(), int(v), in_union));
        assert_eq!(bits(&got), want, "{v} in_union={in_union}");
        assert!(w.is_empty());
    }
}

#[test]
fn real_as_uint_in_union() {
    // TiKV's test_real_as_uint, in a union.
    for (v, want) in [(-10.0, 0u64), (i64::MIN as f64, 0), (10.0, 10), (i64::MAX as f64, 1 << 63)] {
        let (got, w) = eval(cast(REAL_AS_INT, uint_ft(), real(v), true));
        assert_eq!(bits(&got), want, "{v}");
        assert!(w.is_empty());
    }
    // Outside a union a negative value keeps its two's complement, with an overflow.
    let (got, w) = eval(cast(REAL_AS_INT, uint_ft(), real(-1.0), false));
    assert_eq!(bits(&got), -1i64 as u64);
    assert_eq!(w, [1690]);
}

#[test]
fn string_as_int_in_union() {
    // TiKV's test_cast_string_as_int, Cond::InUnionAndUnsigned: 0 and no warning.
    for s in ["-10", "-9223372036854775808"] {
        let (got, w) = eval(cast(STRING_AS_INT, uint_ft(), string(s, 46), true));
        assert_eq!(bits(&got), 0, "{s}");
        assert!(w.is_empty(), "{s}: {w:?}");
    }
    // Unsigned but not in a union: the wrap and TiKV's 1105.
    let (got, w) = eval(cast(STRING_AS_INT, uint_ft(), string("-10", 46), false));
    assert_eq!(bits(&got), -10i64 as u64);
    assert_eq!(w, [1105]);
    // In a union but signed: no clamp.
    let (got, _) = eval(cast(STRING_AS_INT, ft(mt::LONG_LONG), string("-10", 46), true));
    assert_eq!(got, Datum::Int(-10));
}

#[test]
fn decimal_as_uint_and_real_in_union() {
    let (got, w) = eval(cast(DECIMAL_AS_INT, uint_ft(), dec("-10.5"), true));
    assert_eq!(bits(&got), 0);
    assert!(w.is_empty());
    let (got, w) = eval(cast(DECIMAL_AS_INT, uint_ft(), dec("-10.5"), false));
    assert_eq!(bits(&got), 0);
    assert_eq!(w, [1292]);
    let (got, _) = eval(cast(DECIMAL_AS_REAL, unsigned(ft(mt::DOUBLE)), dec("-1.5"), true));
    assert_eq!(got, Datum::Float(0.0));
    let (got, _) = eval(cast(DECIMAL_AS_REAL, unsigned(ft(mt::DOUBLE)), dec("-1.5"), false));
    assert_eq!(got, Datum::Float(-1.5));
}

#[test]
fn casts_to_real_in_union() {
    // Signed int to unsigned real: 0 in a union, else the two's complement (TiKV's
    // cast_signed_int_as_unsigned_real).
    let ureal = unsigned(ft(mt::DOUBLE));
    assert_eq!(eval(cast(INT_AS_REAL, ureal.clone(), int(-1), true)).0, Datum::Float(0.0));
    assert_eq!(
        eval(cast(INT_AS_REAL, ureal.clone(), int(-1), false)).0,
        Datum::Float(u64::MAX as f64)
    );
    // TiKV's real-to-real casts are chosen the wrong way round: the SIGNED target clamps
    // in a union, the UNSIGNED one does not.
    assert_eq!(eval(cast(REAL_AS_REAL, ft(mt::DOUBLE), real(-1.5), true)).0, Datum::Float(0.0));
    assert_eq!(eval(cast(REAL_AS_REAL, ureal.clone(), real(-1.5), true)).0, Datum::Float(-1.5));
    assert_eq!(eval(cast(REAL_AS_REAL, ft(mt::DOUBLE), real(-1.5), false)).0, Datum::Float(-1.5));
    // A negative string to an unsigned real in a union.
    assert_eq!(eval(cast(STRING_AS_REAL, ureal, string("-3", 46), true)).0, Datum::Float(0.0));
}

#[test]
fn casts_to_decimal_in_union() {
    let udec = unsigned(ft_dec(10, 2));
    assert_eq!(eval(cast(INT_AS_DECIMAL, udec.clone(), int(-5), true)).0, d("0.00"));
    // Outside a union the unsigned target takes the two's complement; it does not fit
    // DECIMAL(10, 2), so the overflow gives the type's largest value.
    let (got, w) = eval(cast(INT_AS_DECIMAL, udec.clone(), int(-5), false));
    assert_eq!((got, w), (d("99999999.99"), vec![1690]));
    // TiKV's cast_real_as_decimal clamps in a union whatever the target's sign.
    assert_eq!(eval(cast(REAL_AS_DECIMAL, ft_dec(10, 2), real(-1.5), true)).0, d("0.00"));
    assert_eq!(eval(cast(REAL_AS_DECIMAL, ft_dec(10, 2), real(-1.5), false)).0, d("-1.50"));
    assert_eq!(eval(cast(STRING_AS_DECIMAL, udec.clone(), string("-2.5", 46), true)).0, d("0.00"));
    assert_eq!(eval(cast(DECIMAL_AS_DECIMAL, udec.clone(), dec("-2.5"), true)).0, d("0.00"));
    // A negative value for an UNSIGNED decimal is 0 without a warning even outside a union.
    assert_eq!(eval(cast(DECIMAL_AS_DECIMAL, udec, dec("-2.5"), false)), (d("0"), vec![]));
}

#[test]
fn malformed_union_metadata_is_an_error() {
    let mut e = func(INT_AS_INT, uint_ft(), vec![int(1)]);
    e.val = Some(vec![0xff, 0xff].into());
    assert!(eval_flags(e, 0).is_err());
}

#[test]
fn decimal_rounding_warns_1265() {
    // produce_dec_with_specified_tp: rounding that changes the value is "data truncated".
    let (got, w) = eval(cast(DECIMAL_AS_DECIMAL, ft_dec(10, 1), dec("1.25"), false));
    assert_eq!((got, w), (d("1.3"), vec![1265]));
    // Dropping zeros does not change the value: no warning.
    let (got, w) = eval(cast(DECIMAL_AS_DECIMAL, ft_dec(10, 1), dec("1.50"), false));
    assert_eq!((got, w), (d("1.5"), vec![]));
    // Rounding to zero does not warn either.
    let (got, w) = eval(cast(DECIMAL_AS_DECIMAL, ft_dec(10, 1), dec("0.04"), false));
    assert_eq!((got, w), (d("0.0"), vec![]));
    // Outside TRUNCATE_AS_WARNING it is the error.
    assert!(eval_flags(cast(DECIMAL_AS_DECIMAL, ft_dec(10, 1), dec("1.25"), false), 0).is_err());
    // The integer digits are checked before rounding: 9.96 fits DECIMAL(2, 1) as 10.0.
    let (got, w) = eval(cast(DECIMAL_AS_DECIMAL, ft_dec(2, 1), dec("9.96"), false));
    assert_eq!((got, w), (d("10.0"), vec![1265]));
    let (got, w) = eval(cast(DECIMAL_AS_DECIMAL, ft_dec(2, 1), dec("99.5"), false));
    assert_eq!((got, w), (d("9.9"), vec![1690]));
}
