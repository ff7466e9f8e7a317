//! Datums, rows and keys: round trips against simple models, order preservation in key mode,
//! and malformed input (truncations, byte flips, random bytes) that must error, never panic.
#![expect(
    clippy::unwrap_used,
    reason = "strategies and helpers outside #[test] fns unwrap known-good values"
)]

use proptest::prelude::*;
use rcop_datum::datum::{self, Datum, Mode};
use rcop_datum::row::{Column, Row, RowEncoder, RowSlice, ValueKind, encode_row_v1, v2};
use rcop_datum::{Decimal, Duration, Reader, Time, TimeType, key};

fn simple_datum() -> impl Strategy<Value = Datum> {
    prop_oneof![
        Just(Datum::Null),
        any::<i64>().prop_map(Datum::Int),
        any::<u64>().prop_map(Datum::Uint),
        any::<f64>().prop_filter("not NaN", |f| !f.is_nan()).prop_map(Datum::Float),
        prop::collection::vec(any::<u8>(), 0..30).prop_map(Datum::Bytes),
        (-999_999_999i64..999_999_999).prop_map(|v| {
            let sign = if v < 0 { "-" } else { "" };
            let text = format!("{sign}{}.{:03}", v.unsigned_abs() / 1000, v.unsigned_abs() % 1000);
            Datum::Decimal(text.parse::<Decimal>().unwrap())
        }),
        (-838_000_000_000_000i64..838_000_000_000_000)
            .prop_map(|n| Datum::Duration(Duration::from_nanos(n / 1000 * 1000, 6).unwrap())),
    ]
}

fn encode(values: &[Datum], mode: Mode) -> Vec<u8> {
    let mut out = Vec::new();
    datum::encode_datums(values, mode, &mut out).unwrap();
    out
}

/// Decoding normalises: value-mode ints come back as the same logical ints, etc.
fn same(a: &Datum, b: &Datum) -> bool {
    match (a, b) {
        (Datum::Float(x), Datum::Float(y)) => x.to_bits() == y.to_bits(),
        (Datum::Duration(x), Datum::Duration(y)) => x.nanos() == y.nanos(),
        _ => a == b,
    }
}

#[test]
fn time_datum_is_packed_uint() {
    let t = Time::parse("2018-01-19 03:14:07", TimeType::DateTime, 0).unwrap();
    let enc = encode(&[Datum::Time(t)], Mode::Key);
    assert_eq!(hex::encode(&enc), "04199ee63387000000");
    let back = Datum::decode(&mut Reader::new(&enc)).unwrap();
    assert_eq!(back, Datum::Uint(0x199EE63387000000));
    assert_eq!(back.to_time(TimeType::DateTime, 0).unwrap(), Some(t));
    let mut r = Reader::new(&enc);
    assert_eq!(datum::decode_time_datum(&mut r, TimeType::DateTime, 0).unwrap(), Some(t));
}

#[test]
fn decimal_datum_upstream() {
    // decimal 1 in a row v2 is `01 00 81`; as a datum it gets flag 6 in front.
    let one = Decimal::from_i64(1);
    let enc = encode(&[Datum::Decimal(one)], Mode::Value);
    assert_eq!(hex::encode(&enc), "06010081");
    assert_eq!(datum::decode_decimal_datum(&mut Reader::new(&enc)).unwrap(), Some(one));
}

#[test]
fn v2_value_to_datum_kinds() {
    let cases: &[(&[u8], ValueKind, &str)] = &[
        (&[0xFF], ValueKind::Int, "037fffffffffffffff"),
        (&[0xFF], ValueKind::Uint, "0400000000000000ff"),
        (&[0xE8, 0x03], ValueKind::Int, "0380000000000003e8"),
        (b"ab", ValueKind::Bytes, "02046162"),
        (&[0x01, 0x00, 0x81], ValueKind::Decimal, "06010081"),
        (&[0x00, 0x00, 0x00, 0x87, 0x33, 0xE6, 0x9E, 0x19], ValueKind::Time, "04199ee63387000000"),
        (&[0x04, 0x01], ValueKind::Json, "0a0401"),
    ];
    for &(v, kind, want) in cases {
        let mut out = Vec::new();
        v2::v2_value_to_datum(v, kind, &mut out).unwrap();
        assert_eq!(hex::encode(&out), want, "{kind:?} {v:02x?}");
    }
    let mut out = Vec::new();
    v2::v2_value_to_datum(
        &[0xBF, 0xFC, 0xCC, 0xCC, 0xCC, 0xCC, 0xCC, 0xCD],
        ValueKind::Float,
        &mut out,
    )
    .unwrap();
    assert_eq!(Datum::decode(&mut Reader::new(&out)).unwrap(), Datum::Float(1.8));
}

#[test]
fn v2_derived_example() {
    // (col1 = int 10, col2 = NULL, col3 = "ab")
    let mut out = Vec::new();
    RowEncoder::new().int(1, 10).null(2).bytes(3, b"ab").finish(&mut out).unwrap();
    assert_eq!(hex::encode(&out), "80000200010001030201000300 0a6162".replace(' ', ""));
    let row = Row::parse(&out).unwrap();
    assert_eq!(row.get(1).unwrap(), Column::V2(&[10]));
    assert_eq!(row.get(2).unwrap(), Column::Null);
    assert_eq!(row.get(4).unwrap(), Column::Missing);
}

#[derive(Debug, Clone)]
enum Col {
    Int(i64),
    Uint(u64),
    Bytes(Vec<u8>),
    Null,
}

fn columns() -> impl Strategy<Value = Vec<(i64, Col)>> {
    let col = prop_oneof![
        any::<i64>().prop_map(Col::Int),
        any::<u64>().prop_map(Col::Uint),
        prop::collection::vec(any::<u8>(), 0..20).prop_map(Col::Bytes),
        Just(Col::Null),
    ];
    prop::collection::btree_map(prop_oneof![1i64..300, 1i64..20], col, 0..12)
        .prop_map(|m| m.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn datum_round_trip(values in prop::collection::vec(simple_datum(), 0..8)) {
        for mode in [Mode::Key, Mode::Value, Mode::Response] {
            let enc = encode(&values, mode);
            let dec = Datum::decode_all(&enc).unwrap();
            prop_assert_eq!(dec.len(), values.len());
            for (a, b) in values.iter().zip(&dec) {
                prop_assert!(same(a, b), "{:?} vs {:?} in {:?}", a, b, mode);
            }
            // Cutting the encoding anywhere inside the last datum is an error.
            if let Some(last) = values.last() {
                let one = encode(std::slice::from_ref(last), mode);
                for cut in 0..one.len() {
                    prop_assert!(Datum::decode_all(&one[..cut]).map(|v| v.is_empty()).unwrap_or(true));
                    if cut > 0 {
                        prop_assert!(Datum::decode_all(&one[..cut]).is_err());
                    }
                }
            }
        }
    }

    #[test]
    fn key_mode_preserves_order(a: i64, b: i64, x in prop::collection::vec(any::<u8>(), 0..20),
                                y in prop::collection::vec(any::<u8>(), 0..20)) {
        let ea = encode(&[Datum::Int(a), Datum::Bytes(x.clone())], Mode::Key);
        let eb = encode(&[Datum::Int(b), Datum::Bytes(y.clone())], Mode::Key);
        prop_assert_eq!((a, &x).cmp(&(b, &y)), ea.cmp(&eb));
        // NULL sorts first, Max last.
        prop_assert!(encode(&[Datum::Null], Mode::Key) < ea);
        prop_assert!(encode(&[Datum::Max], Mode::Key) > ea);
    }

    #[test]
    fn row_v2_round_trip(cols in columns()) {
        let mut enc = RowEncoder::new();
        for (id, c) in &cols {
            match c {
                Col::Int(v) => { enc.int(*id, *v); }
                Col::Uint(v) => { enc.uint(*id, *v); }
                Col::Bytes(v) => { enc.bytes(*id, v); }
                Col::Null => { enc.null(*id); }
            }
        }
        let mut out = Vec::new();
        enc.finish(&mut out).unwrap();
        let row = RowSlice::parse(&out).unwrap();
        prop_assert_eq!(row.is_big(), cols.iter().any(|c| c.0 > 255));
        for (id, c) in &cols {
            let got = row.get(*id);
            match c {
                Col::Int(v) => prop_assert_eq!(v2::decode_v2_i64(v2_value(got)?).unwrap(), *v),
                Col::Uint(v) => prop_assert_eq!(v2::decode_v2_u64(v2_value(got)?).unwrap(), *v),
                Col::Bytes(v) => prop_assert_eq!(v2_value(got)?, &v[..]),
                Col::Null => prop_assert_eq!(got, v2::Lookup::Null),
            }
        }
        prop_assert_eq!(row.get(1000), v2::Lookup::Missing);
        // Every strict prefix is rejected.
        for cut in 0..out.len() {
            prop_assert!(RowSlice::parse(&out[..cut]).is_err(), "prefix {} accepted", cut);
        }
        // Flipping any byte never panics, and lookups on whatever parses stay in bounds.
        for i in 0..out.len() {
            let mut bad = out.clone();
            bad[i] ^= 0x5A;
            if let Ok(r) = RowSlice::parse(&bad) {
                for (id, _) in &cols {
                    let _ = r.get(*id);
                }
                let _ = r.non_null_columns().count();
            }
        }
    }

    #[test]
    fn row_v1_round_trip(cols in columns()) {
        let datums: Vec<(i64, Datum)> = cols.iter().map(|(id, c)| (*id, match c {
            Col::Int(v) => Datum::Int(*v),
            Col::Uint(v) => Datum::Uint(*v),
            Col::Bytes(v) => Datum::Bytes(v.clone()),
            Col::Null => Datum::Null,
        })).collect();
        let mut out = Vec::new();
        encode_row_v1(&datums, &mut out).unwrap();
        let row = Row::parse(&out).unwrap();
        for (id, d) in &datums {
            match row.get(*id).unwrap() {
                Column::Datum(raw) => {
                    prop_assert_eq!(&Datum::decode(&mut Reader::new(raw)).unwrap(), d);
                }
                Column::Null => prop_assert_eq!(d, &Datum::Null),
                other => prop_assert!(false, "column {} gave {:?}", id, other),
            }
        }
        for i in 0..out.len() {
            let mut bad = out.clone();
            bad[i] = bad[i].wrapping_add(0x81);
            if let Ok(r) = Row::parse(&bad) {
                for (id, _) in &datums {
                    let _ = r.get(*id);
                }
            }
        }
    }

    #[test]
    fn record_keys_round_trip(table: i64, handle: i64, t2: i64, h2: i64) {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        key::encode_record_key(&mut a, table, handle);
        key::encode_record_key(&mut b, t2, h2);
        prop_assert_eq!(key::decode_record_key(&a).unwrap(), (table, handle));
        prop_assert_eq!((table, handle).cmp(&(t2, h2)), a.cmp(&b));
        let next = key::prefix_next(&a);
        prop_assert!(next > a);
        prop_assert!(key::is_point(&a, &next));
        prop_assert!(!key::is_point(&a, &key::prefix_next(&next)));
    }

    #[test]
    fn random_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..80)) {
        let _ = Datum::decode_all(&data);
        let _ = datum::split_datum(&data);
        let _ = datum::json_len(&data);
        if let Ok(r) = Row::parse(&data) {
            for id in 0..5 {
                let _ = r.get(id);
            }
        }
        let mut with_ver = vec![128u8];
        with_ver.extend_from_slice(&data);
        if let Ok(r) = RowSlice::parse(&with_ver) {
            let _ = r.non_null_columns().count();
            let _ = r.get(1);
        }
        let _ = key::decode_record_key(&data);
        let _ = key::split_index_key(&data);
        let _ = key::split_keyspace(&data);
        for kind in [ValueKind::Int, ValueKind::Uint, ValueKind::Float, ValueKind::Decimal, ValueKind::Json] {
            let _ = v2::v2_value_to_datum(&data, kind, &mut Vec::new());
        }
    }
}

fn v2_value(l: v2::Lookup<'_>) -> Result<&[u8], TestCaseError> {
    match l {
        v2::Lookup::Value(v) => Ok(v),
        other => Err(TestCaseError::fail(format!("expected a value, got {other:?}"))),
    }
}

/// TiKV `encoder_for_test.rs::test_encode`: 11 non-null columns of every kind and one NULL.
#[test]
fn upstream_row_v2_test_encode() {
    let json: Vec<u8> = vec![
        1, 1, 0, 0, 0, 28, 0, 0, 0, 19, 0, 0, 0, 3, 0, 12, 22, 0, 0, 0, 107, 101, 121, 5, 118, 97,
        108, 117, 101,
    ];
    let mut enc = RowEncoder::new();
    enc.int(1, 1000)
        .int(12, 2)
        .null(33)
        .uint(3, 3)
        .int(8, 32767)
        .bytes(7, b"abc")
        .float(9, 1.8)
        .float(6, -1.8)
        .time(13, Time::parse("2018-01-19 03:14:07", TimeType::DateTime, 0).unwrap())
        .json(15, &json)
        .duration(16, Duration::from_nanos(1_000_000_000, 0).unwrap());
    assert!(enc.decimal(14, &Decimal::from_i64(1), 1, 0).unwrap().is_ok());
    let mut out = Vec::new();
    enc.finish(&mut out).unwrap();
    let want: Vec<u8> = vec![
        128, 0, 11, 0, 1, 0, 1, 3, 6, 7, 8, 9, 12, 13, 14, 15, 16, 33, 2, 0, 3, 0, 11, 0, 14, 0,
        16, 0, 24, 0, 25, 0, 33, 0, 36, 0, 65, 0, 69, 0, 232, 3, 3, 64, 3, 51, 51, 51, 51, 51, 50,
        97, 98, 99, 255, 127, 191, 252, 204, 204, 204, 204, 204, 205, 2, 0, 0, 0, 135, 51, 230,
        158, 25, 1, 0, 129, 1, 1, 0, 0, 0, 28, 0, 0, 0, 19, 0, 0, 0, 3, 0, 12, 22, 0, 0, 0, 107,
        101, 121, 5, 118, 97, 108, 117, 101, 0, 202, 154, 59,
    ];
    assert_eq!(out, want);
    assert_eq!(out.len(), 109);
    let row = RowSlice::parse(&out).unwrap();
    let mut datum = Vec::new();
    let v = v2_value(row.get(15)).unwrap();
    v2::v2_value_to_datum(v, ValueKind::Json, &mut datum).unwrap();
    assert_eq!(datum.len(), 30);
    let v = v2_value(row.get(13)).unwrap();
    datum.clear();
    v2::v2_value_to_datum(v, ValueKind::Time, &mut datum).unwrap();
    assert_eq!(hex::encode(&datum), "04199ee63387000000");
    let v = v2_value(row.get(16)).unwrap();
    assert_eq!(v2::decode_v2_i64(v).unwrap(), 1_000_000_000);
}

/// Inputs that once failed a fuzz target (fuzz/regressions/<target>/), replayed here.
#[test]
fn fuzz_regressions_row() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions/row");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        n += 1;
        let Ok(row) = Row::parse(&data) else { continue };
        for id in [-1i64, 0, 1, 2, 3, 8, 12, 255, 256, 335, i64::MAX] {
            let Ok(Column::V2(v)) = row.get(id) else { continue };
            for kind in [
                ValueKind::Int,
                ValueKind::Uint,
                ValueKind::Float,
                ValueKind::Bytes,
                ValueKind::Decimal,
                ValueKind::Time,
                ValueKind::Duration,
                ValueKind::Json,
            ] {
                let mut out = Vec::new();
                if v2::v2_value_to_datum(v, kind, &mut out).is_ok() {
                    let mut r = Reader::new(&out);
                    assert!(Datum::decode(&mut r).is_ok(), "{kind:?} {v:02x?} -> {out:02x?}");
                    assert!(r.is_empty());
                }
            }
        }
    }
    assert!(n > 0);
}

/// What [`RowSlice::parse`] then [`RowSlice::get`] give for `ids`, or `None` when the row
/// does not parse.
fn lookups_by_get<'a>(row: &'a [u8], ids: &[i64]) -> Option<Vec<v2::Lookup<'a>>> {
    let r = RowSlice::parse(row).ok()?;
    Some(ids.iter().map(|&id| r.get(id)).collect())
}

/// Checks the projection of `ids` against `parse` + `get` on `row`: equal whenever `parse`
/// accepts the row; otherwise an error or (for defects outside the walk) some answer, but
/// never a panic, and values always inside the row.
fn check_projection(row: &[u8], ids: &[i64]) -> Result<(), TestCaseError> {
    let p = v2::Projection::new(ids);
    prop_assert_eq!(p.len(), ids.len());
    let mut out = Vec::new();
    let got = p.decode(row, &mut out);
    match lookups_by_get(row, ids) {
        Some(want) => {
            prop_assert!(got.is_ok(), "projection rejected a valid row: {:?}", got);
            prop_assert_eq!(out, want);
        }
        None => {
            if got.is_ok() {
                prop_assert_eq!(out.len(), ids.len());
                for l in &out {
                    if let v2::Lookup::Value(v) = l {
                        let inside = row.as_ptr_range();
                        prop_assert!(v.is_empty() || inside.contains(&v.as_ptr()));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Checks that decoding `row` through `shape` (which earlier rows taught) gives exactly what
/// decoding it alone gives: the same lookups, or an error for both; and that a row the shape
/// views reads, slot by slot, what decoding it alone gives (a slot it cannot read only in a
/// row that does not decode).
fn check_cached(
    p: &v2::Projection,
    shape: &mut v2::RowShape,
    row: &[u8],
) -> Result<(), TestCaseError> {
    let mut alone = vec![v2::Lookup::Missing; p.len()];
    let a = p.decode_into(row, &mut alone);
    // One value a row (`value_of`) is the view's value, cut, corrupt or another layout.
    for pos in 0..p.len() {
        if let Some(slot) = shape.value_slot(pos) {
            for s in [slot, slot + 1, slot + 1000] {
                let viewed = shape.view(row).and_then(|v| v.value(s));
                prop_assert_eq!(shape.value_of(row, s), viewed, "slot {}", s);
            }
        }
    }
    if let Some(view) = shape.view(row) {
        for (pos, want) in alone.iter().enumerate() {
            match view.get(pos) {
                Some(got) => {
                    if a.is_ok() {
                        prop_assert_eq!(got, *want, "slot {}", pos);
                    }
                }
                None => prop_assert!(a.is_err(), "slot {} unread in a row that decodes", pos),
            }
        }
        prop_assert!(view.get(p.len()).is_none());
    }
    let mut cached = vec![v2::Lookup::Missing; p.len()];
    let c = p.decode_into_cached(row, &mut cached, shape);
    prop_assert_eq!(a.is_ok(), c.is_ok(), "alone {:?}, cached {:?}", a, c);
    if a.is_ok() {
        prop_assert_eq!(alone, cached);
    }
    Ok(())
}

#[test]
fn a_shape_taught_by_one_projection_is_relearned_by_another() {
    let mut enc = RowEncoder::new();
    enc.int(1, 10).int(2, 20).null(3);
    let mut row = Vec::new();
    enc.finish(&mut row).unwrap();
    let (p12, p21) = (v2::Projection::new(&[1, 2]), v2::Projection::new(&[2, 1]));
    let mut shape = v2::RowShape::new();
    let mut out = [v2::Lookup::Missing; 2];
    for _ in 0..2 {
        p12.decode_into_cached(&row, &mut out, &mut shape).unwrap();
        assert_eq!(out, [v2::Lookup::Value(&[10]), v2::Lookup::Value(&[20])]);
        p21.decode_into_cached(&row, &mut out, &mut shape).unwrap();
        assert_eq!(out, [v2::Lookup::Value(&[20]), v2::Lookup::Value(&[10])]);
    }
    // The shape views rows for the projection that taught it last.
    let view = shape.view(&row).unwrap();
    assert_eq!(view.get(0), Some(v2::Lookup::Value(&[20])));
    // A value slot reads the same value without the lookup; a slot past the row's two
    // values reads nothing.
    let slot = shape.value_slot(0).unwrap();
    assert_eq!(view.value(slot), Some(&[20][..]));
    assert_eq!(shape.value_slot(1).and_then(|s| view.value(s)), Some(&[10][..]));
    assert_eq!(view.value(2), None);
    assert_eq!(view.value(usize::MAX), None);
    // Column 3 is NULL in the learned row: no value slot.
    let p3 = v2::Projection::new(&[3, 9]);
    p3.decode_into_cached(&row, &mut out, &mut shape).unwrap();
    assert_eq!((shape.value_slot(0), shape.value_slot(1), shape.value_slot(2)), (None, None, None));
}

#[test]
fn projection_known_rows() {
    // The upstream big row: ids 1, 3, 8, 12 non-NULL, 335 NULL.
    let mut enc = RowEncoder::new();
    enc.int(1, 1000).int(12, 2).null(335).int(3, 3).int(8, 32767);
    let mut row = Vec::new();
    enc.finish(&mut row).unwrap();
    assert!(RowSlice::parse(&row).unwrap().is_big());
    let p = v2::Projection::new(&[335, 12, 4, 1, -1, 12, 8]);
    let mut out = Vec::new();
    p.decode(&row, &mut out).unwrap();
    use v2::Lookup::{Missing, Null, Value};
    assert_eq!(
        out,
        [Null, Value(&[2]), Missing, Value(&[0xe8, 3]), Missing, Value(&[2]), Value(&[0xff, 0x7f])]
    );
    // Straight into row columns, in a slice of exactly the projection's length.
    let mut cols = [Column::Datum(b"x"); 7];
    p.decode_into(&row, &mut cols).unwrap();
    assert_eq!(cols[0], Column::Null);
    assert_eq!(cols[1], Column::V2(&[2]));
    assert_eq!(cols[2], Column::Missing);
    assert_eq!(cols[4], Column::Missing);
    assert_eq!(cols[6], Column::V2(&[0xff, 0x7f]));
    assert!(p.decode_into(&row, &mut cols[..6]).is_err());
    // An empty projection still checks the header.
    let empty = v2::Projection::new(&[]);
    assert!(empty.is_empty());
    empty.decode(&row, &mut out).unwrap();
    assert!(out.is_empty());
    assert!(empty.decode(&row[..5], &mut out).is_err());
    assert!(empty.decode(&[0x81, 0, 0, 0, 0, 0], &mut out).is_err());
    // A wanted id both NULL and non-NULL, descending ids before a wanted id, descending
    // offsets of a wanted value: errors.
    let p1 = v2::Projection::new(&[1]);
    assert!(p1.decode(&[0x80, 0, 1, 0, 1, 0, 1, 1, 1, 0, 0xAA], &mut out).is_err());
    let p5 = v2::Projection::new(&[5]);
    assert!(p5.decode(&[0x80, 0, 2, 0, 0, 0, 3, 1, 1, 0, 2, 0, 0xAA, 0xBB], &mut out).is_err());
    let p2 = v2::Projection::new(&[2]);
    assert!(p2.decode(&[0x80, 0, 2, 0, 0, 0, 1, 2, 2, 0, 1, 0, 9, 9], &mut out).is_err());
    // Values ending past the row, and a checksum flag without its trailer.
    assert!(p1.decode(&[0x80, 0, 1, 0, 0, 0, 1, 5, 0, 1], &mut out).is_err());
    assert!(p1.decode(&[0x80, 2, 1, 0, 0, 0, 1, 1, 0, 7, 1, 0, 0], &mut out).is_err());
    p1.decode(&[0x80, 2, 1, 0, 0, 0, 1, 1, 0, 7, 1, 0, 0, 0, 0], &mut out).unwrap();
    assert_eq!(out, [Value(&[7])]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn projection_matches_get(
        cols in columns(),
        extra in prop::collection::vec(prop_oneof![-3i64..300, 250i64..260], 0..6),
        pick in prop::collection::vec(any::<bool>(), 12),
        checksum: bool,
    ) {
        let mut enc = RowEncoder::new();
        for (id, c) in &cols {
            match c {
                Col::Int(v) => { enc.int(*id, *v); }
                Col::Uint(v) => { enc.uint(*id, *v); }
                Col::Bytes(v) => { enc.bytes(*id, v); }
                Col::Null => { enc.null(*id); }
            }
        }
        let mut row = Vec::new();
        enc.finish(&mut row).unwrap();
        if checksum {
            row[1] |= v2::FLAG_CHECKSUM;
            row.extend_from_slice(&[1, 0xDE, 0xAD, 0xBE, 0xEF]);
        }
        // Some of the row's ids, in reverse order, plus ids that may be absent or repeated.
        let mut ids: Vec<i64> = cols.iter().zip(&pick).filter(|(_, p)| **p).map(|(c, _)| c.0).collect();
        ids.reverse();
        ids.extend(&extra);
        check_projection(&row, &ids)?;
        let all: Vec<i64> = cols.iter().map(|c| c.0).collect();
        check_projection(&row, &all)?;
        for cut in 0..row.len() {
            check_projection(&row[..cut], &ids)?;
        }
        for i in 0..row.len() {
            for x in [0x01u8, 0x5A, 0x80] {
                let mut bad = row.clone();
                bad[i] ^= x;
                check_projection(&bad, &ids)?;
                check_projection(&bad, &all)?;
            }
        }
        // Through a shape cache: the good row between every corrupt one (so the cache holds
        // its layout when a row with the same ids but broken offsets or values comes), then
        // cut rows and rows of another layout.
        for want in [&ids, &all] {
            let p = v2::Projection::new(want);
            let mut cache = v2::RowShape::new();
            for i in 0..row.len() {
                for x in [0x01u8, 0x5A, 0x80] {
                    let mut bad = row.clone();
                    bad[i] ^= x;
                    check_cached(&p, &mut cache, &row)?;
                    check_cached(&p, &mut cache, &bad)?;
                }
            }
            for cut in 0..row.len() {
                check_cached(&p, &mut cache, &row)?;
                check_cached(&p, &mut cache, &row[..cut])?;
            }
        }
    }

    #[test]
    fn projection_on_random_bytes(
        data in prop::collection::vec(any::<u8>(), 0..60),
        ids in prop::collection::vec(-2i64..20, 0..6),
        big: bool,
    ) {
        let mut row = vec![128u8, u8::from(big)];
        row.extend_from_slice(&data);
        check_projection(&row, &ids)?;
        check_projection(&data, &ids)?;
    }
}
