use std::cmp::Ordering;

use proptest::prelude::*;

use super::*;

fn parse(s: &str) -> Json {
    Json::parse(s).unwrap()
}

fn text(s: &str) -> String {
    parse(s).as_ref().to_text().unwrap()
}

/// TiKV `codec/row/v2/encoder_for_test.rs` `test_encode`: column 15 is
/// `Json::from_str(r#"{"key":"value"}"#)`, bytes 36..65 of the expected row.
#[test]
fn tikv_row_v2_vector() {
    let expected: [u8; 29] = [
        1, 1, 0, 0, 0, 28, 0, 0, 0, 19, 0, 0, 0, 3, 0, 12, 22, 0, 0, 0, 107, 101, 121, 5, 118, 97,
        108, 117, 101,
    ];
    assert_eq!(parse(r#"{"key":"value"}"#).as_bytes(), expected);
    let j = JsonRef::decode(&expected).unwrap();
    assert_eq!(j.json_type(), JsonType::Object);
    assert_eq!(j.object_key(0).unwrap(), b"key");
    assert_eq!(j.object_val(0).unwrap().as_str_bytes(), Some(&b"value"[..]));
    assert_eq!(j.object_search(b"key").unwrap().unwrap().as_str_bytes(), Some(&b"value"[..]));
    assert!(j.object_search(b"kez").unwrap().is_none());
    assert_eq!(j.to_text().unwrap(), r#"{"key": "value"}"#);
}

/// TiKV `json/serde.rs` `test_from_str_for_object` and `test_to_str`.
#[test]
fn tikv_text_vectors() {
    assert_eq!(
        text(r#"{"a": [1, "2", {"aa": "bb"}, 4.0, null], "c": null,"b": true}"#),
        r#"{"a": [1, "2", {"aa": "bb"}, 4.0, null], "b": true, "c": null}"#
    );
    assert_eq!(text(r#"["d1","d2"]"#), r#"["d1", "d2"]"#);
    for (s, t) in [("-3", "-3"), ("3", "3"), ("3.0", "3.0"), ("null", "null")] {
        assert_eq!(text(s), t);
    }
    assert_eq!(text("true"), "true");
    assert_eq!(text("false"), "false");
    assert_eq!(
        Json::from_opaque(0xFD, &[0xAB, 0xCD]).as_ref().to_text().unwrap(),
        r#""base64:type253:q80=""#
    );
    assert_eq!(text("[]"), "[]");
    assert_eq!(text(" { } "), "{}");
}

/// TiKV `json/binary.rs` `test_type` and `json/serde.rs` `test_from_str`.
#[test]
fn number_types() {
    let cases = [
        (r#"{"key":"value"}"#, JsonType::Object),
        (r#"["d1","d2"]"#, JsonType::Array),
        ("-3", JsonType::I64),
        ("3", JsonType::I64),
        ("18446744073709551615", JsonType::U64),
        ("18446744073709551616", JsonType::Double),
        ("3.0", JsonType::Double),
        ("null", JsonType::Literal),
        ("true", JsonType::Literal),
        ("false", JsonType::Literal),
        // TiKV's visit_u64 keeps a literal signed only strictly below i64::MAX.
        ("9223372036854775806", JsonType::I64),
        ("9223372036854775807", JsonType::U64),
        ("9223372036854775808", JsonType::U64),
        ("-9223372036854775808", JsonType::I64),
        ("-9223372036854775809", JsonType::Double),
        ("-0", JsonType::Double),
        ("1e2", JsonType::Double),
    ];
    for (s, tp) in cases {
        assert_eq!(parse(s).as_ref().json_type(), tp, "{s}");
    }
    // TiKV's own case: equal to the double 9223372036854776000.0 (stored as U64).
    let big = parse("9223372036854776000");
    assert_eq!(big.as_ref().as_u64(), Some(9223372036854776000));
    assert_eq!(cmp(&big, &Json::from_f64(9223372036854776000.0)), Ordering::Equal);
    assert_eq!(parse("9223372036854775807").as_ref().as_u64(), Some(9223372036854775807));
    assert_eq!(parse("-0").as_ref().as_f64().map(f64::to_bits), Some((-0.0f64).to_bits()));
    assert_eq!(parse("-9223372036854775808").as_ref().as_i64(), Some(i64::MIN));
}

#[test]
fn bad_text() {
    for s in [
        "[pxx,apaa]",
        "hpeheh",
        "",
        "   ",
        "[1,]",
        "{\"a\" 1}",
        "{1: 2}",
        "01",
        "1.",
        ".5",
        "1e",
        "-",
        "1e400",
        "\"\\ud800\"",
        "\"\\udc00x\"",
        "\"a\u{1}\"",
        "\"\\x\"",
        "\"abc",
        "[1] 2",
        "nul",
        "tru",
    ] {
        assert!(Json::parse(s).is_err(), "{s:?}");
    }
    assert!(Json::parse(&format!("{}{}", "[".repeat(127), "]".repeat(127))).is_ok());
    assert!(Json::parse(&format!("{}{}", "[".repeat(128), "]".repeat(128))).is_err());
}

#[test]
fn strings_and_escapes() {
    assert_eq!(
        text(r#""a\"b\\c\/d\b\f\n\r\t\u0001\u00e9\ud83d\ude00""#),
        "\"a\\\"b\\\\c/d\\b\\f\\n\\r\\t\\u0001é😀\""
    );
    assert_eq!(parse(r#""\u00e9""#).as_ref().as_str_bytes(), Some("é".as_bytes()));
    // Of duplicate keys the last wins; keys sort by bytes.
    assert_eq!(text(r#"{"b": 1, "a": 2, "b": 3, "ab": 4}"#), r#"{"a": 2, "ab": 4, "b": 3}"#);
}

#[test]
fn doubles_as_tikv_prints_them() {
    let cases: [(f64, &str); 16] = [
        (3.0, "3.0"),
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (4.25, "4.25"),
        (-123.456, "-123.456"),
        (1e15, "1000000000000000.0"),
        (1e16, "1e16"),
        (1.5e16, "1.5e16"),
        (123456789012345680.0, "1.2345678901234568e17"),
        (0.00001, "0.00001"),
        (0.000012, "0.000012"),
        (1e-6, "1e-6"),
        (1.5e-7, "1.5e-7"),
        (f64::MAX, "1.7976931348623157e308"),
        (5e-324, "5e-324"),
        (0.1 + 0.2, "0.30000000000000004"),
    ];
    for (v, s) in cases {
        let mut out = String::new();
        write_mysql_f64(v, &mut out);
        assert_eq!(out, s, "{v:e}");
        assert_eq!(Json::from_f64(v).as_ref().to_text().unwrap(), s);
    }
    assert_eq!(Json::from_f64(f64::NAN).as_ref().to_text().unwrap(), "null");
}

#[test]
fn times_print_with_six_digits() {
    let dt = Time::parse("1998-06-13 12:13:14", crate::TimeType::DateTime, 0).unwrap();
    assert_eq!(Json::from_time(dt).as_ref().to_text().unwrap(), r#""1998-06-13 12:13:14.000000""#);
    let d = Time::parse("1998-06-13", crate::TimeType::Date, 0).unwrap();
    assert_eq!(Json::from_time(d).as_ref().to_text().unwrap(), r#""1998-06-13""#);
    let dur = Duration::parse("12:13:14", 0).unwrap();
    let j = Json::from_duration(dur);
    assert_eq!(j.as_ref().to_text().unwrap(), r#""12:13:14.000000""#);
    assert_eq!(j.as_ref().as_duration().unwrap().unwrap().nanos(), dur.nanos());
    // Layout: CoreTime LE for times, nanos LE + fsp LE for durations (TiDB json_binary.go).
    assert_eq!(&Json::from_time(dt).as_bytes()[1..], dt.to_chunk_u64().to_le_bytes());
    assert_eq!(j.as_bytes().len(), 13);
}

#[test]
fn build_and_read_containers() {
    let one = Json::from_i64(1);
    let t = Json::from_bool(true);
    let s = Json::from_string("x");
    let arr = Json::array(&[one.as_ref(), t.as_ref(), s.as_ref()]).unwrap();
    // Literals are inlined in their entry; other values follow the entries in order.
    assert_eq!(
        arr.as_bytes(),
        [
            3, 3, 0, 0, 0, 33, 0, 0, 0, // header: 3 elements, 8 + 15 + 8 + 2 bytes
            9, 23, 0, 0, 0, 4, 1, 0, 0, 0, 12, 31, 0, 0, 0, // entries
            1, 0, 0, 0, 0, 0, 0, 0, 1, b'x'
        ]
    );
    let a = arr.as_ref();
    assert_eq!(a.elem_count(), 3);
    assert_eq!(a.array_get(0).unwrap().as_i64(), Some(1));
    assert_eq!(a.array_get(1).unwrap().as_literal(), Some(Some(true)));
    assert!(a.array_get(3).is_err());
    assert_eq!(a.to_text().unwrap(), r#"[1, true, "x"]"#);
    let obj = Json::object(vec![(b"z", arr.as_ref()), (b"a", Json::null().as_ref())]).unwrap();
    assert_eq!(obj.as_ref().to_text().unwrap(), r#"{"a": null, "z": [1, true, "x"]}"#);
    assert_eq!(Json::from_binary(obj.as_bytes().to_vec()).unwrap(), obj);
    // The same document from text has the same bytes.
    assert_eq!(parse(r#"{"z": [1, true, "x"], "a": null}"#), obj);
}

#[test]
fn decode_rejects_malformed() {
    let good = parse(r#"{"a": [1, "bc", {"d": 2.5}], "e": false}"#);
    let b = good.as_bytes();
    for cut in 0..b.len() {
        assert!(JsonRef::decode(&b[..cut]).is_err(), "prefix {cut}");
    }
    let mut longer = b.to_vec();
    longer.push(0);
    assert!(JsonRef::decode(&longer).is_err());
    assert_eq!(JsonRef::decode_prefix(&longer).unwrap().1, b.len());
    // Unknown type and literal codes.
    assert!(JsonRef::decode(&[0x05, 0, 0]).is_err());
    assert!(JsonRef::decode(&[0x04, 0x03]).is_err());
    // An element count no entry area can hold: rejected before reading entries.
    let mut huge = vec![0x03];
    huge.extend_from_slice(&u32::MAX.to_le_bytes());
    huge.extend_from_slice(&8u32.to_le_bytes());
    assert!(JsonRef::decode(&huge).is_err());
    // A string whose length runs past the end, and a varint of 11 bytes.
    assert!(JsonRef::decode(&[0x0c, 5, b'a']).is_err());
    assert!(
        JsonRef::decode(&[0x0c, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F])
            .is_err()
    );
    // Two entries pointing at the same value.
    let mut shared = vec![0x03];
    shared.extend_from_slice(&2u32.to_le_bytes());
    shared.extend_from_slice(&26u32.to_le_bytes());
    shared.extend_from_slice(&[0x09, 18, 0, 0, 0, 0x09, 18, 0, 0, 0]);
    shared.extend_from_slice(&7i64.to_le_bytes());
    assert!(matches!(JsonRef::decode(&shared), Err(Error::Invalid { .. })));
    // Nesting beyond MAX_DEPTH.
    let mut deep = Json::from_i64(0);
    for _ in 0..MAX_DEPTH {
        deep = Json::array(&[deep.as_ref()]).unwrap();
    }
    assert!(JsonRef::decode(deep.as_bytes()).is_ok());
    deep = Json::array(&[deep.as_ref()]).unwrap();
    assert!(JsonRef::decode(deep.as_bytes()).is_err());
    // Invalid UTF-8 decodes (TiKV keeps the bytes) but cannot be printed.
    let bad = JsonRef::decode(&[0x0c, 1, 0xFF]).unwrap();
    assert!(bad.to_text().is_err());
}

fn cmp(a: &Json, b: &Json) -> Ordering {
    a.as_ref().compare(&b.as_ref()).unwrap()
}

/// TiKV `json/comparison.rs` `test_cmp_json_numberic_type`.
#[test]
fn tikv_numeric_comparisons() {
    use Ordering::*;
    let (i, u, f) = (Json::from_i64, Json::from_u64, Json::from_f64);
    let cases = [
        (i(922337203685477581), i(922337203685477580), Greater),
        (i(-1), u(18446744073709551615), Less),
        (i(922337203685477580), u(922337203685477581), Less),
        (i(2), u(1), Greater),
        (i(i64::MAX), u(i64::MAX as u64), Equal),
        (u(18446744073709551615), i(-1), Greater),
        (u(922337203685477581), i(922337203685477580), Greater),
        (u(1), i(2), Less),
        (u(i64::MAX as u64), i(i64::MAX), Equal),
        (f(9.0), i(9), Equal),
        (f(8.9), i(9), Less),
        (f(9.1), i(9), Greater),
        (f(9.0), u(9), Equal),
        (f(8.9), u(9), Less),
        (f(9.1), u(9), Greater),
        (i(9), f(9.0), Equal),
        (i(9), f(8.9), Greater),
        (i(9), f(9.1), Less),
        (u(9), f(9.0), Equal),
        (u(9), f(8.9), Greater),
        (u(9), f(9.1), Less),
    ];
    for (a, b, o) in cases {
        assert_eq!(cmp(&a, &b), o, "{a:?} {b:?}");
    }
}

/// TiKV `json/comparison.rs` `test_cmp_json_between_same_type` / `_diff_type`.
#[test]
fn tikv_ordering_cases() {
    let same = [
        ("false", "true"),
        ("-3", "3"),
        ("3", "5"),
        ("3.0", "4.9"),
        (r#""hello""#, r#""hello, world""#),
        (r#"["a", "b"]"#, r#"["a", "c"]"#),
        (r#"{"a": "b"}"#, r#"{"a": "c"}"#),
    ];
    let diff = [
        ("1.5", "2"),
        ("1.5", "false"),
        ("1.5", "true"),
        ("2", "true"),
        ("null", r#"{"a": "b"}"#),
        ("2", r#""hello, world""#),
        (r#""hello, world""#, r#"{"a": "b"}"#),
        (r#"{"a": "b"}"#, r#"["a", "b"]"#),
        (r#"["a", "b"]"#, "false"),
    ];
    for (a, b) in same.iter().chain(&diff) {
        let (a, b) = (parse(a), parse(b));
        assert_eq!(cmp(&a, &b), Ordering::Less, "{a:?} < {b:?}");
        assert_eq!(cmp(&b, &a), Ordering::Greater);
        assert_eq!(cmp(&a, &a), Ordering::Equal);
    }
    assert_eq!(cmp(&Json::null(), &Json::null()), Ordering::Equal);
    assert_eq!(cmp(&parse("[1, 2]"), &parse("[1, 2, 0]")), Ordering::Less);
}

/// TiKV `json/comparison.rs` `test_cmp_json_between_json_type`.
#[test]
fn tikv_time_comparisons() {
    let dt = |s| Json::from_time(Time::parse(s, crate::TimeType::DateTime, 0).unwrap());
    let date = |s| Json::from_time(Time::parse(s, crate::TimeType::Date, 0).unwrap());
    let dur = |s| Json::from_duration(Duration::parse(s, 0).unwrap());
    use Ordering::*;
    let cases = [
        (dt("1998-06-13 12:13:14"), dt("1998-06-14 13:14:15"), Less),
        (dt("1998-06-13 12:13:14"), dt("1998-06-12 13:14:15"), Greater),
        (dt("1998-06-13 12:13:14"), date("1998-06-14"), Greater),
        (dur("12:13:14"), dur("12:13:16"), Less),
        (dur("12:13:16"), dur("12:13:14"), Greater),
        (dur("12:13:16"), date("1998-06-12"), Greater),
        (dur("12:13:16"), dt("1998-06-12 11:11:11"), Less),
    ];
    for (a, b, o) in cases {
        assert_eq!(cmp(&a, &b), o);
    }
    assert!(Json::from_f64(f64::NAN).as_ref().compare(&Json::from_f64(1.0).as_ref()).is_err());
}

fn arb_text() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_owned()),
        any::<bool>().prop_map(|b| b.to_string()),
        any::<i64>().prop_map(|v| v.to_string()),
        any::<u64>().prop_map(|v| v.to_string()),
        any::<f64>().prop_filter("finite", |v| v.is_finite()).prop_map(|v| format!("{v:e}")),
        "[a-z\\\\\"\n\u{e9}]{0,6}".prop_map(|s| format!("{s:?}")),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec(("[a-c]{0,3}", inner), 0..6).prop_map(|v| {
                let m: Vec<String> = v.into_iter().map(|(k, x)| format!("{k:?}: {x}")).collect();
                format!("{{{}}}", m.join(", "))
            }),
        ]
    })
}

proptest! {
    #[test]
    fn random_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..96)) {
        if let Ok((j, n)) = JsonRef::decode_prefix(&data) {
            prop_assert!(n <= data.len());
            let _ = j.to_text();
            let _ = j.compare(&j);
        }
    }

    #[test]
    fn mutated_documents_never_panic(
        s in arb_text(),
        flips in prop::collection::vec((any::<usize>(), any::<u8>()), 1..4),
    ) {
        let mut b = Json::parse(&s).unwrap().into_bytes();
        for (at, v) in flips {
            let n = b.len();
            b[at % n] = v;
        }
        if let Ok(j) = JsonRef::decode(&b) {
            let _ = j.to_text();
            let _ = j.compare(&j);
        }
    }

    #[test]
    fn text_round_trips(s in arb_text()) {
        let j = Json::parse(&s).unwrap();
        let t = j.as_ref().to_text().unwrap();
        let again = Json::parse(&t).unwrap();
        prop_assert_eq!(again.as_bytes(), j.as_bytes());
        prop_assert_eq!(JsonRef::decode(j.as_bytes()).unwrap().to_text().unwrap(), t);
        prop_assert_eq!(j.as_ref().compare(&again.as_ref()).unwrap(), Ordering::Equal);
    }
}
