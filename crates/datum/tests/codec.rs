//! Conformance and property tests of the byte-level codecs: the upstream vectors of the
//! formats reference §5.2, order preservation, round trips, and malformed input.

use proptest::prelude::*;
use rcop_datum::Reader;
use rcop_datum::codec::*;

#[expect(clippy::unwrap_used, reason = "test vectors are literal hex")]
fn h(s: &str) -> Vec<u8> {
    hex::decode(s.replace(' ', "")).unwrap()
}

fn enc(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut v = Vec::new();
    f(&mut v);
    v
}

/// TiKV `test_memcmp_encode_all` = TiDB `TestBytesCodec`.
#[test]
fn memcomparable_upstream_vectors() {
    let cases: &[(&str, &str, &str)] = &[
        ("", "0000000000000000 f7", "ffffffffffffffff 08"),
        ("00", "0000000000000000 f8", "ffffffffffffffff 07"),
        ("010203", "0102030000000000 fa", "fefdfcffffffffff 05"),
        ("01020300", "0102030000000000 fb", "fefdfcffffffffff 04"),
        ("01020304050607", "0102030405060700 fe", "fefdfcfbfaf9f8ff 01"),
        (
            "0000000000000000",
            "0000000000000000 ff 0000000000000000 f7",
            "ffffffffffffffff 00 ffffffffffffffff 08",
        ),
        (
            "0102030405060708",
            "0102030405060708 ff 0000000000000000 f7",
            "fefdfcfbfaf9f8f7 00 ffffffffffffffff 08",
        ),
        (
            "010203040506070809",
            "0102030405060708 ff 0900000000000000 f8",
            "fefdfcfbfaf9f8f7 00 f6ffffffffffffff 07",
        ),
    ];
    for &(input, asc, desc) in cases {
        let input = h(input);
        let a = enc(|o| encode_bytes(o, &input));
        let d = enc(|o| encode_bytes_desc(o, &input));
        assert_eq!(a, h(asc), "asc {input:02x?}");
        assert_eq!(d, h(desc), "desc {input:02x?}");
        assert_eq!(a.len(), memcomparable_len(input.len()));
        let mut r = Reader::new(&a);
        assert_eq!(decode_bytes(&mut r).unwrap(), input);
        assert!(r.is_empty());
        let mut r = Reader::new(&d);
        assert_eq!(decode_bytes_desc(&mut r).unwrap(), input);
        assert!(r.is_empty());
        assert_eq!(skip_bytes(&mut Reader::new(&a), false).unwrap(), &a[..]);
        assert_eq!(skip_bytes(&mut Reader::new(&d), true).unwrap(), &d[..]);
    }
}

/// TiKV `test_memcmp_try_decode_first_error` / TiDB's invalid inputs.
#[test]
fn memcomparable_invalid_upstream() {
    let bad = [
        "01020304",
        "00000000000000 f7",
        "0000000000000000 f6",
        "00000000000000 01 f7",
        "0102030405060708 00",
        "0102030405060708 ff 01",
        "0102030405060708 ff 0102030405060708",
        "0102030405060708 ff 0102030405060708 ff",
        "0102030405060708 ff 0102030405060708 00",
        "0102030405060708 ff 0100000000000000 f7",
    ];
    for b in bad {
        let b = h(b);
        assert!(decode_bytes(&mut Reader::new(&b)).is_err(), "accepted {b:02x?}");
        assert!(skip_bytes(&mut Reader::new(&b), false).is_err(), "skip accepted {b:02x?}");
        let inv: Vec<u8> = b.iter().map(|x| !x).collect();
        assert!(decode_bytes_desc(&mut Reader::new(&inv)).is_err(), "desc accepted {inv:02x?}");
    }
}

#[test]
fn compact_and_varint_upstream() {
    assert_eq!(enc(|o| encode_compact_bytes(o, b"hello")), h("0a 68656c6c6f"));
    assert_eq!(enc(|o| encode_var_u64(o, 0xDEAD_BEEF_BAAD)), h("adf5bef7dbd537"));
    // Compact length prefixes: zigzag varint of the length (TiKV test_encode_compact_byte_len).
    assert_eq!(enc(|o| encode_compact_bytes(o, &[])), [0]);
    assert_eq!(enc(|o| encode_compact_bytes(o, &[7; 63]))[0], 126);
    assert_eq!(&enc(|o| encode_compact_bytes(o, &[7; 64]))[..2], [0x80, 0x01]);
}

#[test]
fn float_zero_mapping() {
    assert_eq!(enc(|o| encode_f64(o, 0.0)), h("8000000000000000"));
    assert_eq!(enc(|o| encode_f64(o, -0.0)), h("7fffffffffffffff"));
    assert!(f64_to_comparable(-0.0) < f64_to_comparable(0.0));
    assert!(f64_to_comparable(f64::NEG_INFINITY) < f64_to_comparable(f64::MIN));
    assert!(f64_to_comparable(f64::MAX) < f64_to_comparable(f64::INFINITY));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn i64_order_and_round_trip(a: i64, b: i64) {
        let (ea, eb) = (enc(|o| encode_i64(o, a)), enc(|o| encode_i64(o, b)));
        prop_assert_eq!(a.cmp(&b), ea.cmp(&eb));
        let (da, db) = (enc(|o| encode_i64_desc(o, a)), enc(|o| encode_i64_desc(o, b)));
        prop_assert_eq!(a.cmp(&b), db.cmp(&da));
        prop_assert_eq!(decode_i64(&mut Reader::new(&ea)).unwrap(), a);
        prop_assert_eq!(decode_i64_desc(&mut Reader::new(&da)).unwrap(), a);
    }

    #[test]
    fn u64_order_and_round_trip(a: u64, b: u64) {
        let (ea, eb) = (enc(|o| encode_u64(o, a)), enc(|o| encode_u64(o, b)));
        prop_assert_eq!(a.cmp(&b), ea.cmp(&eb));
        let (da, db) = (enc(|o| encode_u64_desc(o, a)), enc(|o| encode_u64_desc(o, b)));
        prop_assert_eq!(a.cmp(&b), db.cmp(&da));
        prop_assert_eq!(decode_u64(&mut Reader::new(&ea)).unwrap(), a);
        prop_assert_eq!(decode_u64_desc(&mut Reader::new(&da)).unwrap(), a);
    }

    #[test]
    fn f64_order_and_round_trip(a in any::<f64>().prop_filter("not NaN", |f| !f.is_nan()),
                                b in any::<f64>().prop_filter("not NaN", |f| !f.is_nan())) {
        let (ea, eb) = (enc(|o| encode_f64(o, a)), enc(|o| encode_f64(o, b)));
        if a < b { prop_assert!(ea < eb); }
        if a > b { prop_assert!(ea > eb); }
        let (da, db) = (enc(|o| encode_f64_desc(o, a)), enc(|o| encode_f64_desc(o, b)));
        if a < b { prop_assert!(da > db); }
        prop_assert_eq!(decode_f64(&mut Reader::new(&ea)).unwrap().to_bits(), a.to_bits());
        prop_assert_eq!(decode_f64_desc(&mut Reader::new(&da)).unwrap().to_bits(), a.to_bits());
    }

    #[test]
    fn varint_round_trip(u: u64, i: i64) {
        let e = enc(|o| encode_var_u64(o, u));
        let mut r = Reader::new(&e);
        prop_assert_eq!(decode_var_u64(&mut r).unwrap(), u);
        prop_assert!(r.is_empty());
        let e = enc(|o| encode_var_i64(o, i));
        prop_assert_eq!(decode_var_i64(&mut Reader::new(&e)).unwrap(), i);
        for cut in 0..e.len() {
            prop_assert!(decode_var_i64(&mut Reader::new(&e[..cut])).is_err());
        }
    }

    #[test]
    fn bytes_order_and_round_trip(a in prop::collection::vec(any::<u8>(), 0..40),
                                  b in prop::collection::vec(any::<u8>(), 0..40)) {
        let (ea, eb) = (enc(|o| encode_bytes(o, &a)), enc(|o| encode_bytes(o, &b)));
        prop_assert_eq!(a.cmp(&b), ea.cmp(&eb));
        let (da, db) = (enc(|o| encode_bytes_desc(o, &a)), enc(|o| encode_bytes_desc(o, &b)));
        prop_assert_eq!(a.cmp(&b), db.cmp(&da));
        // A value followed by more data decodes exactly and leaves the rest.
        let mut with_tail = ea.clone();
        with_tail.extend_from_slice(&eb);
        let mut r = Reader::new(&with_tail);
        prop_assert_eq!(decode_bytes(&mut r).unwrap(), a.clone());
        prop_assert_eq!(decode_bytes(&mut r).unwrap(), b);
        prop_assert_eq!(decode_bytes_desc(&mut Reader::new(&da)).unwrap(), a);
        for cut in 0..ea.len() {
            prop_assert!(decode_bytes(&mut Reader::new(&ea[..cut])).is_err());
        }
        let c = enc(|o| encode_compact_bytes(o, &with_tail));
        prop_assert_eq!(decode_compact_bytes(&mut Reader::new(&c)).unwrap(), &with_tail[..]);
        for cut in 0..c.len() {
            prop_assert!(decode_compact_bytes(&mut Reader::new(&c[..cut])).is_err());
        }
    }

    #[test]
    fn random_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..64)) {
        let _ = decode_bytes(&mut Reader::new(&data));
        let _ = decode_bytes_desc(&mut Reader::new(&data));
        let _ = skip_bytes(&mut Reader::new(&data), false);
        let _ = decode_compact_bytes(&mut Reader::new(&data));
        let _ = decode_var_u64(&mut Reader::new(&data));
        let _ = decode_i64(&mut Reader::new(&data));
        let _ = decode_f64(&mut Reader::new(&data));
    }
}
