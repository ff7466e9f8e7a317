//! Integration tests of `rcop_datum::decimal`: upstream byte vectors, expected-value tables
//! from TiKV's `codec/mysql/decimal.rs` tests and TiDB's `mydecimal_test.go` (adapted where our
//! documented semantics differ, noted inline), malformed inputs, and property tests against
//! exact `i128` arithmetic.

#![expect(clippy::unwrap_used, clippy::panic, reason = "test helpers outside #[test] fns")]

use std::cmp::Ordering;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use proptest::prelude::*;
use rcop_datum::decimal::{
    BinI128Decoder, CHUNK_SIZE, DEFAULT_DIV_FRAC_INCR, Decimal, Res, RoundMode,
};
use rcop_datum::{Error, Reader};

fn dec(s: &str) -> Decimal {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn bin(d: &Decimal, prec: u8, frac: u8) -> (Vec<u8>, Res<()>) {
    let mut out = Vec::new();
    let r = d.write_bin(prec, frac, &mut out).unwrap();
    (out, r)
}

fn decode(b: &[u8]) -> rcop_datum::Result<(Decimal, u8, u8)> {
    let mut r = Reader::new(b);
    let v = Decimal::decode_bin(&mut r)?;
    assert_eq!(r.remaining(), 0, "decode_bin must consume exactly the encoding");
    Ok(v)
}

fn s<T: ToString>(r: Res<T>) -> Res<String> {
    r.map(|v| v.to_string())
}

fn ok(v: &str) -> Res<String> {
    Res::Ok(v.to_owned())
}
fn tr(v: &str) -> Res<String> {
    Res::Truncated(v.to_owned())
}
fn of(v: &str) -> Res<String> {
    Res::Overflow(v.to_owned())
}

// ---------------------------------------------------------------------------------------------
// Byte vectors (reference §2.4, §3.2, §5.2)

#[test]
fn binary_vectors() {
    assert_eq!(bin(&dec("1"), 1, 0), (vec![0x01, 0x00, 0x81], Res::Ok(())));
    assert_eq!(bin(&dec("-10.55"), 4, 2), (vec![0x04, 0x02, 0x75, 0xC8], Res::Ok(())));
    assert_eq!(
        bin(&dec("123.45"), 10, 3),
        (vec![0x0A, 0x03, 0x80, 0x00, 0x00, 0x7B, 0x01, 0xC2], Res::Ok(()))
    );
    assert_eq!(decode(&[0x01, 0x00, 0x81]).unwrap(), (dec("1"), 1, 0));
    let (d, p, f) = decode(&[0x04, 0x02, 0x75, 0xC8]).unwrap();
    assert_eq!((d.to_string(), p, f), ("-10.55".to_owned(), 4, 2));
    let (d, p, f) = decode(&[0x0A, 0x03, 0x80, 0x00, 0x00, 0x7B, 0x01, 0xC2]).unwrap();
    assert_eq!((d.to_string(), p, f), ("123.450".to_owned(), 10, 3));
    assert_eq!(Decimal::bin_size(10, 3).unwrap(), 6);
    assert_eq!(Decimal::bin_size(65, 30).unwrap(), 30);
    assert_eq!(Decimal::bin_size(1, 0).unwrap(), 1);
}

#[test]
fn chunk_vector() {
    let mut b = vec![0x03, 0x03, 0x03, 0x00, 0x7B, 0, 0, 0, 0x00, 0x02, 0x2E, 0x1B];
    b.resize(CHUNK_SIZE, 0);
    let d = Decimal::from_chunk_bytes(&b).unwrap();
    assert_eq!(d.to_string(), "123.456");
    assert_eq!(d, Decimal::from_f64(123.456).unwrap().value());
    assert_eq!(d.to_chunk_bytes().as_slice(), b.as_slice());
    assert_eq!(dec("123.456").to_chunk_bytes().as_slice(), b.as_slice());
}

// ---------------------------------------------------------------------------------------------
// TiKV test_codec: (value, prec, frac) → write_bin outcome and decoded text.

#[test]
fn codec_table() {
    let cases = [
        ("-10.55", 4, 2, ok("-10.55")),
        ("0.0123456789012345678912345", 30, 25, ok("0.0123456789012345678912345")),
        ("12345", 5, 0, ok("12345")),
        ("12345", 10, 3, ok("12345.000")),
        ("123.45", 10, 3, ok("123.450")),
        ("-123.45", 20, 10, ok("-123.4500000000")),
        // TiKV truncates here ("0.00012345000098"); we round half up like MySQL's
        // my_decimal2binary.
        (".00012345000098765", 15, 14, tr("0.00012345000099")),
        (".00012345000098765", 22, 20, ok("0.00012345000098765000")),
        (".12345000098765", 30, 20, ok("0.12345000098765000000")),
        // TiKV: "-0.00000001234500009876"; half up gives ...877.
        ("-.000000012345000098765", 30, 20, tr("-0.00000001234500009877")),
        ("1234500009876.5", 30, 5, ok("1234500009876.50000")),
        // TiKV writes garbage ("11111111.11") on overflow; we write the max of the type.
        ("111111111.11", 10, 2, of("99999999.99")),
        ("000000000.01", 7, 3, ok("0.010")),
        ("123.4", 10, 2, ok("123.40")),
        ("1000", 3, 0, of("999")),
        ("-1000", 3, 0, of("-999")),
        ("10000000000000000000.23", 23, 2, ok("10000000000000000000.23")),
    ];
    for (v, prec, frac, exp) in cases {
        let (b, r) = bin(&dec(v), prec, frac);
        assert_eq!(b.len(), 2 + Decimal::bin_size(prec, frac).unwrap());
        let (d, p, f) = decode(&b).unwrap();
        assert_eq!((p, f), (prec, frac));
        assert_eq!(r.map(|()| d.to_string()), exp, "{v} at ({prec},{frac})");
    }
}

#[test]
fn max_for_table() {
    // TiKV test_max_decimal / test_max_or_min_decimal
    let cases = [
        (1, 1, "0.9"),
        (1, 0, "9"),
        (2, 1, "9.9"),
        (4, 2, "99.99"),
        (6, 3, "999.999"),
        (10, 5, "99999.99999"),
        (18, 9, "999999999.999999999"),
        (20, 10, "9999999999.9999999999"),
        (20, 20, "0.99999999999999999999"),
        (20, 0, "99999999999999999999"),
        (40, 20, "99999999999999999999.99999999999999999999"),
    ];
    for (p, f, exp) in cases {
        assert_eq!(Decimal::max_for(p, f).to_string(), exp);
        assert_eq!((-Decimal::max_for(p, f)).to_string(), format!("-{exp}"));
    }
}

#[test]
fn round_trips_many_types() {
    let values = [
        "0",
        "1",
        "-1",
        "0.5",
        "-0.5",
        "123456789.987654321",
        "-123456789.987654321",
        "99999999999999999999999999999999999.999999999999999999999999999999",
        "-99999999999999999999999999999999999.999999999999999999999999999999",
        "12345678901234567890123456789012345678901234567890123456789012345",
        "-0.000000000000000000000000000001",
        "7.1",
        "-42",
    ];
    for prec in 1..=65u8 {
        for frac in 0..=prec.min(30) {
            for v in values {
                let d = dec(v);
                let (b, r) = bin(&d, prec, frac);
                let (back, p, f) = decode(&b).unwrap();
                assert_eq!((p, f), (prec, frac));
                assert_eq!(back.frac_cnt(), frac);
                match r {
                    Res::Ok(()) => assert_eq!(back, d, "{v} ({prec},{frac})"),
                    Res::Truncated(()) => {
                        assert_eq!(back, d.round(frac as i8, RoundMode::HalfUp).value())
                    }
                    Res::Overflow(()) => {
                        let m = Decimal::max_for(prec, frac);
                        assert_eq!(back, if d.is_negative() { -m } else { m });
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Parsing and formatting (TiKV test_string, test_from_i64/u64/f64, test_to_f64)

#[test]
fn parse_table() {
    let max81 = "9".repeat(81);
    let cases: Vec<(&str, Res<String>)> = vec![
        ("12345", ok("12345")),
        ("12345.", ok("12345")),
        ("-123.45", ok("-123.45")),
        (".00012345000098765", ok("0.00012345000098765")),
        (".12345000098765", ok("0.12345000098765")),
        ("-.000000012345000098765", ok("-0.000000012345000098765")),
        ("1234500009876.5", ok("1234500009876.5")),
        ("123E5", ok("12300000")),
        ("123E-2", ok("1.23")),
        ("123.123", ok("123.123")),
        ("123.1230", ok("123.1230")),
        ("00123.123", ok("123.123")),
        ("1.21", ok("1.21")),
        (".21", ok("0.21")),
        ("1.00", ok("1.00")),
        ("100", ok("100")),
        ("-100", ok("-100")),
        ("100.00", ok("100.00")),
        ("00100.00", ok("100.00")),
        ("-100.00", ok("-100.00")),
        ("-0.00", ok("0.00")),
        ("00.00", ok("0.00")),
        ("0.00", ok("0.00")),
        ("-2.010", ok("-2.010")),
        ("-3.", ok("-3")),
        ("1.456e3", ok("1456")),
        ("3.", ok("3")),
        ("314e-2", ok("3.14")),
        ("1e2", ok("100")),
        ("2E-1", ok("0.2")),
        ("2E0", ok("2")),
        ("2.2E-1", ok("0.22")),
        ("2.23E2", ok("223")),
        ("1e -1", ok("0.1")),
        ("1e001", ok("10")),
        ("1e00", ok("1")),
        ("  +7.5  ", ok("7.5")),
        // Trailing garbage: TiKV says Ok, TiDB raises ErrTruncated; we follow TiDB.
        ("123.45.", tr("123.45")),
        ("-123.45.", tr("-123.45")),
        ("2.23E2abc", tr("223")),
        ("2.23a2", tr("2.23")),
        ("1eabc", tr("1")),
        ("1e", tr("1")),
        ("1e - 1", tr("1")),
        ("1e1073741823", of(&max81)),
        ("-1e1073741823", Res::Overflow(format!("-{max81}"))),
        // More than 30 fraction digits round half up to 30.
        ("0.1234567890123456789012345678904", tr("0.123456789012345678901234567890")),
        ("0.1234567890123456789012345678905", tr("0.123456789012345678901234567891")),
        ("1.0000000000000000000000000000000000", ok("1.000000000000000000000000000000")),
        ("-0.9999999999999999999999999999999", tr("-1.000000000000000000000000000000")),
        ("1e-40", tr("0.000000000000000000000000000000")),
    ];
    for (input, exp) in cases {
        assert_eq!(s(Decimal::parse(input).unwrap()), exp, "{input:?}");
    }
    for bad in ["", " ", "abc", ".", "-", "+.", "e5", "-e1", "\u{e0}1"] {
        assert!(matches!(Decimal::parse(bad), Err(Error::Parse { .. })), "{bad:?} must not parse");
    }
    // FromStr is strict.
    assert!("2.23a2".parse::<Decimal>().is_err());
    assert!("1e100".parse::<Decimal>().is_err());
    assert_eq!(" 1.5 ".parse::<Decimal>().unwrap().to_string(), "1.5");
}

#[test]
fn integer_conversions() {
    for (v, exp) in [
        (-12345i64, "-12345"),
        (-1, "-1"),
        (1, "1"),
        (0, "0"),
        (i64::MAX, "9223372036854775807"),
        (i64::MIN, "-9223372036854775808"),
    ] {
        assert_eq!(Decimal::from_i64(v).to_string(), exp);
        assert_eq!(Decimal::from_i64(v).as_i64(), Res::Ok(v));
    }
    for (v, exp) in [(12345u64, "12345"), (0, "0"), (u64::MAX, "18446744073709551615")] {
        assert_eq!(Decimal::from_u64(v).to_string(), exp);
        assert_eq!(Decimal::from_u64(v).as_u64(), Res::Ok(v));
    }
    // TiKV test_to_i64
    let cases = [
        ("18446744073709551615", Res::Overflow(i64::MAX)),
        ("-1", Res::Ok(-1)),
        ("1", Res::Ok(1)),
        ("-1.23", Res::Truncated(-1)),
        ("-1.5", Res::Truncated(-2)),
        ("2.5", Res::Truncated(3)),
        ("7.00", Res::Ok(7)),
        ("-9223372036854775807", Res::Ok(-9223372036854775807)),
        ("-9223372036854775808", Res::Ok(i64::MIN)),
        ("9223372036854775808", Res::Overflow(i64::MAX)),
        ("-9223372036854775809", Res::Overflow(i64::MIN)),
        ("99999999999999999999999999999999999999999", Res::Overflow(i64::MAX)),
    ];
    for (v, exp) in cases {
        assert_eq!(dec(v).as_i64(), exp, "{v}");
    }
    // TiKV test_to_u64
    let cases = [
        ("12345", Res::Ok(12345u64)),
        ("0", Res::Ok(0)),
        ("18446744073709551615", Res::Ok(u64::MAX)),
        ("18446744073709551616", Res::Overflow(u64::MAX)),
        ("-1", Res::Overflow(0)),
        ("1.23", Res::Truncated(1)),
        ("9999999999999999999999999.000", Res::Overflow(u64::MAX)),
    ];
    for (v, exp) in cases {
        assert_eq!(dec(v).as_u64(), exp, "{v}");
    }
}

#[test]
fn float_conversions() {
    for (f, exp) in [
        (10.123, "10.123"),
        (-10.123, "-10.123"),
        (10.111, "10.111"),
        (18446744073709552000.0, "18446744073709552000"),
        (-18446744073709552000.0, "-18446744073709552000"),
        (36893488147419103000.0, "36893488147419103000.0"),
        (0.1, "0.1"),
        (1e-7, "0.0000001"),
        (0.0, "0"),
    ] {
        assert_eq!(Decimal::from_f64(f).unwrap(), Res::Ok(dec(exp)), "{f}");
    }
    for f in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert!(matches!(Decimal::from_f64(f), Err(Error::Invalid { .. })));
    }
    assert!(Decimal::from_f64(1e300).unwrap().is_overflow());
    assert!(Decimal::from_f64(1e-40).unwrap().is_truncated());
    // TiKV test_to_f64
    for (v, exp) in [
        ("12345", 12345f64),
        ("123.45", 123.45),
        ("-123.45", -123.45),
        ("0.00012345000098765", 0.00012345000098765),
        ("1234500009876.5", 1234500009876.5),
        ("3.141592653589793", std::f64::consts::PI),
        ("1234567890123456000", 1234567890123456000f64),
        ("0.1111111111111119", 0.1111111111111119),
        ("0.000000000000000001", 0.000000000000000001),
        ("0", 0f64),
    ] {
        assert_eq!(dec(v).to_string(), v);
        assert_eq!(dec(v).as_f64(), exp, "{v}");
    }
}

#[test]
fn prec_and_frac_table() {
    for (v, exp) in [
        ("0", (1, 0)),
        ("0.00", (2, 2)),
        ("123.45", (5, 2)),
        ("-0.001", (3, 3)),
        ("1000000000", (10, 0)),
        ("00012.3", (3, 1)),
    ] {
        assert_eq!(dec(v).prec_and_frac(), exp, "{v}");
    }
}

// ---------------------------------------------------------------------------------------------
// Arithmetic tables (TiKV test_add, test_sub, test_mul, test_div_mod; TiDB mydecimal_test.go)

#[test]
fn add_table() {
    let a = "2".to_owned() + &"1".repeat(71);
    let b = "8".repeat(81);
    let c = "8888888890".to_owned() + &"9".repeat(71);
    let neg_max = format!("-{}", "9".repeat(81));
    let cases: Vec<(&str, &str, Res<String>)> = vec![
        (".00012345000098765", "123.45", ok("123.45012345000098765")),
        (".1", ".45", ok("0.55")),
        ("1234500009876.5", ".00012345000098765", ok("1234500009876.50012345000098765")),
        ("9999909999999.5", ".555", ok("9999910000000.055")),
        ("99999999", "1", ok("100000000")),
        ("989999999", "1", ok("990000000")),
        ("999999999", "1", ok("1000000000")),
        ("12345", "123.45", ok("12468.45")),
        ("-12345", "-123.45", ok("-12468.45")),
        ("-12345", "123.45", ok("-12221.55")),
        ("12345", "-123.45", ok("12221.55")),
        ("123.45", "-12345", ok("-12221.55")),
        ("-123.45", "12345", ok("12221.55")),
        ("5", "-6.0", ok("-1.0")),
        ("2", "3", ok("5")),
        ("2454495034", "3451204593", ok("5905699627")),
        ("24544.95034", ".3451204593", ok("24545.2954604593")),
        (".1", ".1", ok("0.2")),
        // TiKV prints "0"; MySQL keeps the scale max(frac1, frac2).
        (".1", "-.1", ok("0.0")),
        ("0", "1.001", ok("1.001")),
        (&a, &b, ok(&c)),
        (&b, &b, of(&"9".repeat(81))),
        ("-1", &neg_max, Res::Overflow(format!("-{}", "9".repeat(81)))),
    ];
    for (l, r, exp) in cases {
        assert_eq!(s(dec(l).add(&dec(r))), exp, "{l} + {r}");
        assert_eq!(s(dec(r).add(&dec(l))), exp, "{r} + {l}");
    }
}

#[test]
fn sub_table() {
    let cases = [
        (".00012345000098765", "123.45", ok("-123.44987654999901235")),
        ("1234500009876.5", ".00012345000098765", ok("1234500009876.49987654999901235")),
        ("9999900000000.5", ".555", ok("9999899999999.945")),
        ("1111.5551", "1111.555", ok("0.0001")),
        // TiKV prints "0"; MySQL: 0.000.
        (".555", ".555", ok("0.000")),
        ("10000000", "1", ok("9999999")),
        ("1000001000", ".1", ok("1000000999.9")),
        ("1000000000", ".1", ok("999999999.9")),
        ("12345", "123.45", ok("12221.55")),
        ("-12345", "-123.45", ok("-12221.55")),
        ("123.45", "12345", ok("-12221.55")),
        ("-123.45", "-12345", ok("12221.55")),
        ("-12345", "123.45", ok("-12468.45")),
        ("12345", "-123.45", ok("12468.45")),
        ("3.10000000000", "2.00", ok("1.10000000000")),
        ("3.00", "2.0000000000000", ok("1.0000000000000")),
        (
            "-20048271934704078000000000000000000000000000000000000",
            "-20048271934734512000000000000000000000000000000000000",
            ok("30434000000000000000000000000000000000000"),
        ),
    ];
    for (l, r, exp) in cases {
        assert_eq!(s(dec(l).sub(&dec(r))), exp, "{l} - {r}");
    }
}

#[test]
fn mul_table() {
    let a = "1".to_owned() + &"0".repeat(60);
    let cases: Vec<(&str, &str, Res<String>)> = vec![
        ("12", "10", ok("120")),
        ("0", "-1.1", ok("0.0")),
        ("-123.456", "98765.4321", ok("-12193185.1853376")),
        ("-123456000000", "98765432100000", ok("-12193185185337600000000000")),
        ("123456", "987654321", ok("121931851853376")),
        ("123456", "9876543210", ok("1219318518533760")),
        ("123", "0.01", ok("1.23")),
        ("123", "0", ok("0")),
        (&a, &a, of(&"9".repeat(81))),
        // frac1 + frac2 > 31: truncated to 31 digits (TiKV's NOT_FIXED_DEC), outcome Ok.
        ("0.000000000000000001", "0.000000000000000005", ok("0.0000000000000000000000000000000")),
        ("0.000000000000001", "0.000000000000000500000", ok("0.0000000000000000000000000000005")),
        ("0.000000000000001", "0.000000000000000460000", ok("0.0000000000000000000000000000004")),
        ("-1.5", "2.5", ok("-3.75")),
    ];
    for (l, r, exp) in cases {
        assert_eq!(s(dec(l).mul(&dec(r))), exp, "{l} * {r}");
        assert_eq!(s(dec(r).mul(&dec(l))), exp, "{r} * {l}");
    }
}

#[test]
fn div_rem_table() {
    // TiKV test_div_mod inputs. TiKV's internal quotient keeps whole words of digits; the
    // quotient we return is the one TiDB/MySQL display: rounded half up to
    // min(frac1 + frac_incr, 30) digits. Remainders follow MySQL MOD (sign of the dividend,
    // scale max(frac1, frac2)); TiKV prints "0" for some zero remainders.
    let cases = [
        (5, "120", "10", "12.00000", "0"),
        (5, "123", "0.01", "12300.00000", "0.00"),
        (5, "120", "100000000000.00000", "0.00000", "120.00000"),
        (5, "-12193185.1853376", "98765.4321", "-123.456000000000", "-45037.0370376"),
        (5, "121931851853376", "987654321", "123456.00000", "0"),
        (5, "0", "987", "0.00000", "0"),
        (5, "0.0", "987", "0.000000", "0.0"),
        (5, "0.0000000000", "987", "0.000000000000000", "0.0000000000"),
        (5, "1", "3", "0.33333", "1"),
        (5, "1.000000000000", "3", "0.33333333333333333", "1.000000000000"),
        (5, "1", "1", "1.00000", "0"),
        (
            5,
            "0.0123456789012345678912345",
            "9999999999",
            "0.000000000001234567890246913578",
            "0.0123456789012345678912345",
        ),
        (5, "10.333000000", "12.34500", "0.83701903604698", "10.333000000"),
        (5, "10.000000000060", "2", "5.00000000003000000", "0.000000000060"),
        (0, "234", "10", "23", "4"),
        (0, "234.567", "10.555", "22.223", "2.357"),
        (0, "-234.567", "10.555", "-22.223", "-2.357"),
        (0, "234.567", "-10.555", "-22.223", "2.357"),
        (
            0,
            "99999999999999999999999999999999999999",
            "3",
            "33333333333333333333333333333333333333",
            "0",
        ),
        (4, "1", "1", "1.0000", "0"),
        (4, "1.00", "1", "1.000000", "0.00"),
        (4, "1", "1.000", "1.0000", "0.000"),
        (4, "0.0000000001", "1.0", "0.00000000010000", "0.0000000001"),
        (4, "2", "3", "0.6667", "2"),
        (0, "1", "2.0", "1", "1.0"),
        (0, "1.0", "2", "0.5", "1.0"),
        (0, "2.23", "3", "0.74", "2.23"),
        (4, "51", "0.003430", "14868.8047", "0.002760"),
        (5, "51", "0.003430", "14868.80466", "0.002760"),
        (0, "51", "0.003430", "14869", "0.002760"),
        (4, "-125", "489466941506", "0.0000", "-125"),
        (4, "-56", "489466941506", "0.0000", "-56"),
        (4, "123.45", "-10.5", "-11.757143", "7.95"),
        (4, "1", "7", "0.1429", "1"),
        (6, "22", "7", "3.142857", "1"),
        (30, "1", "3", "0.333333333333333333333333333333", "1"),
        (
            4,
            "0.000000000000000000000000000001",
            "3",
            "0.000000000000000000000000000000",
            "0.000000000000000000000000000001",
        ),
        (4, "-0.5", "1000", "-0.00050", "-0.5"),
    ];
    for (incr, l, r, q, m) in cases {
        let (l, r) = (dec(l), dec(r));
        assert_eq!(s(l.div(&r, incr).unwrap()), ok(q), "{l} / {r} (+{incr})");
        assert_eq!(s(l.rem(&r).unwrap()), ok(m), "{l} % {r}");
    }
    for (l, r) in
        [("123", "0"), ("123", "0.0"), ("123", "00.0000000000"), ("0", "0"), ("0.0", "0.0")]
    {
        assert!(dec(l).div(&dec(r), DEFAULT_DIV_FRAC_INCR).is_none());
        assert!(dec(l).rem(&dec(r)).is_none());
    }
    // A quotient with more than 81 integer digits overflows.
    let big = dec(&"9".repeat(70));
    assert!(big.div(&dec("0.000000000000001"), 4).unwrap().is_overflow());
}

#[test]
fn round_table() {
    // TiKV test_round: (value, frac, half up, truncate, ceiling)
    let cases = [
        ("123456789.987654321", 1, "123456790.0", "123456789.9", "123456790.0"),
        ("15.1", 0, "15", "15", "16"),
        ("15.5", 0, "16", "15", "16"),
        ("15.9", 0, "16", "15", "16"),
        ("-15.1", 0, "-15", "-15", "-16"),
        ("-15.5", 0, "-16", "-15", "-16"),
        ("-15.9", 0, "-16", "-15", "-16"),
        ("15.1", 1, "15.1", "15.1", "15.1"),
        ("-15.1", 1, "-15.1", "-15.1", "-15.1"),
        ("15.17", 1, "15.2", "15.1", "15.2"),
        ("15.4", -1, "20", "10", "20"),
        ("-15.4", -1, "-20", "-10", "-20"),
        ("5.4", -1, "10", "0", "10"),
        (".999", 0, "1", "0", "1"),
        ("999999999", -9, "1000000000", "0", "1000000000"),
        // TiDB mydecimal_test TestRoundWithHalfUp and more
        ("0.4", 0, "0", "0", "1"),
        ("1.5", 0, "2", "1", "2"),
        ("5.5", 0, "6", "5", "6"),
        ("-0.5", 0, "-1", "0", "-1"),
        ("1.25", 1, "1.3", "1.2", "1.3"),
        ("15.1", 3, "15.100", "15.100", "15.100"),
        ("12345", -3, "12000", "12000", "13000"),
        ("99999999999999999999", -20, "100000000000000000000", "0", "100000000000000000000"),
        ("0.001", -2, "0", "0", "100"),
    ];
    for (v, frac, half, trunc, ceil) in cases {
        let d = dec(v);
        assert_eq!(s(d.round(frac, RoundMode::HalfUp)), ok(half), "{v} half up {frac}");
        assert_eq!(s(d.round(frac, RoundMode::Truncate)), ok(trunc), "{v} truncate {frac}");
        assert_eq!(s(d.round(frac, RoundMode::Ceiling)), ok(ceil), "{v} ceiling {frac}");
    }
    assert!(dec(&"9".repeat(81)).round(-1, RoundMode::HalfUp).is_overflow());
    assert_eq!(dec("1.5").round(40, RoundMode::HalfUp).value().frac_cnt(), 30);
}

#[test]
fn ceil_floor_table() {
    // TiKV test_ceil / test_floor
    for (v, c, f) in [
        ("12345", "12345", "12345"),
        ("0.99999", "1", "0"),
        ("-0.99999", "0", "-1"),
        ("18446744073709551616", "18446744073709551616", "18446744073709551616"),
        ("-1", "-1", "-1"),
        ("1.23", "2", "1"),
        ("-1.23", "-1", "-2"),
        ("1.00000", "1", "1"),
        (
            "9999999999999999999999999.001",
            "10000000000000000000000000",
            "9999999999999999999999999",
        ),
    ] {
        assert_eq!(dec(v).ceil(), Res::Ok(dec(c)), "ceil {v}");
        assert_eq!(dec(v).floor(), Res::Ok(dec(f)), "floor {v}");
    }
}

#[test]
fn compare_hash_neg() {
    // TiKV test_cmp
    for (l, r, exp) in [
        ("12", "13", Ordering::Less),
        ("13", "12", Ordering::Greater),
        ("-10", "10", Ordering::Less),
        ("10", "-10", Ordering::Greater),
        ("-12", "-13", Ordering::Greater),
        ("0", "12", Ordering::Less),
        ("-10", "0", Ordering::Less),
        ("4", "4", Ordering::Equal),
        ("4", "4.00", Ordering::Equal),
        ("-1.1", "-1.2", Ordering::Greater),
        ("1.2", "1.1", Ordering::Greater),
        ("1.1", "1.2", Ordering::Less),
        ("0.000000001", "0", Ordering::Greater),
        ("1000000000", "999999999.999999999", Ordering::Greater),
    ] {
        assert_eq!(dec(l).cmp(&dec(r)), exp, "{l} vs {r}");
    }
    // TiKV test_hash
    let h = |d: Decimal| {
        let mut s = DefaultHasher::new();
        d.hash(&mut s);
        s.finish()
    };
    for (l, r) in [
        ("1.00", "1"),
        ("-1.11", "-1.11000000"),
        ("30.20", "30.2"),
        ("0", "-0"),
        ("0.001", "0.001000"),
    ] {
        assert_eq!(dec(l), dec(r));
        assert_eq!(h(dec(l)), h(dec(r)), "{l} vs {r}");
    }
    // TiKV test_neg
    for (p, n) in
        [("123.45", "-123.45"), ("1", "-1"), ("0.555", "-0.555"), ("0", "0"), ("0.00", "0.00")]
    {
        assert_eq!((-dec(p)).to_string(), n);
        assert_eq!((-dec(n)).to_string(), p);
        assert!(dec(p).add(&-dec(p)).value().is_zero());
    }
    assert_eq!(format!("{:?}", dec("-1.50")), "-1.50");
    assert_eq!(Decimal::default(), Decimal::zero());
}

#[test]
fn write_str_matches_display() {
    for v in ["0", "-0.5", "123456789012345678901234567890.123456789012345678901234567890"] {
        let mut out = b"x=".to_vec();
        dec(v).write_str(&mut out);
        assert_eq!(out, format!("x={}", dec(v)).into_bytes());
    }
}

// ---------------------------------------------------------------------------------------------
// Malformed input

#[test]
fn malformed_binary() {
    for (p, f) in [(0, 0), (66, 0), (40, 31), (3, 4)] {
        assert!(matches!(Decimal::bin_size(p, f), Err(Error::Invalid { .. })), "({p},{f})");
        let body = decode(&[p, f, 0x80, 0, 0, 0, 0, 0]);
        if p == 66 || f == 31 {
            // A computed value's own precision may pass 65 (TiKV writes such response
            // datums): the header is read, and this body is too short.
            assert!(body.is_err());
        } else {
            assert!(matches!(body, Err(Error::Invalid { .. })), "({p},{f})");
        }
        assert!(dec("1").write_bin(p, f, &mut Vec::new()).is_err());
    }
    // A full word ≥ 10^9: 9 digits at (9,0) → 4 bytes 0x3B9ACA00 = 10^9.
    assert!(matches!(decode(&[9, 0, 0x80 ^ 0x3B, 0x9A, 0xCA, 0x00]), Err(Error::Invalid { .. })));
    assert!(decode(&[9, 0, 0x80 ^ 0x3B, 0x9A, 0xC9, 0xFF]).is_ok());
    // A partial word of 2 digits (1 byte) holding 100.
    assert!(matches!(decode(&[2, 0, 0x80 ^ 100]), Err(Error::Invalid { .. })));
    // A partial fraction word of 1 digit holding 10.
    assert!(matches!(decode(&[2, 1, 0x81, 10]), Err(Error::Invalid { .. })));
    // Negative encodings are checked after undoing the mask.
    assert!(matches!(decode(&[2, 0, !(0x80 ^ 100)]), Err(Error::Invalid { .. })));
    // Truncated body and header.
    assert!(matches!(decode(&[10, 3, 0x80, 0, 0, 0x7B, 1]), Err(Error::Eof { .. })));
    assert!(matches!(decode(&[10]), Err(Error::Eof { .. })));
    assert!(matches!(decode(&[]), Err(Error::Eof { .. })));
}

#[test]
fn malformed_chunk() {
    let good = dec("-123.456").to_chunk_bytes();
    assert_eq!(Decimal::from_chunk_bytes(&good).unwrap(), dec("-123.456"));
    assert!(matches!(Decimal::from_chunk_bytes(&good[..39]), Err(Error::Eof { .. })));
    let with = |i: usize, v: u8| {
        let mut b = good;
        b[i] = v;
        Decimal::from_chunk_bytes(&b)
    };
    // int_cnt 73 (9 words) + frac_cnt 3 (1 word) > 9 words.
    assert!(matches!(with(0, 73), Err(Error::Invalid { .. })));
    assert!(matches!(with(1, 31), Err(Error::Invalid { .. })));
    assert!(matches!(with(3, 2), Err(Error::Invalid { .. })));
    // Word ≥ 10^9.
    let mut b = good;
    b[4..8].copy_from_slice(&1_000_000_000u32.to_le_bytes());
    assert!(matches!(Decimal::from_chunk_bytes(&b), Err(Error::Invalid { .. })));
    // int_cnt 2 but the word is 123 (3 digits).
    assert!(matches!(with(0, 2), Err(Error::Invalid { .. })));
    // frac_cnt 2 but the word holds 456000000 (3 digits).
    assert!(matches!(with(1, 2), Err(Error::Invalid { .. })));
    // Leading zeros in int_cnt (a zero first word) are accepted and normalised.
    let mut b = [0u8; CHUNK_SIZE];
    b[..4].copy_from_slice(&[12, 3, 3, 1]);
    b[8..12].copy_from_slice(&123u32.to_le_bytes());
    b[12..16].copy_from_slice(&456_000_000u32.to_le_bytes());
    let d = Decimal::from_chunk_bytes(&b).unwrap();
    assert_eq!((d.to_string(), d.int_cnt()), ("-123.456".to_owned(), 3));
}

// ---------------------------------------------------------------------------------------------
// Properties

/// A decimal with up to 18 significant digits as (unscaled i128, frac).
fn small() -> impl Strategy<Value = (i128, u8)> {
    (-999_999_999_999_999_999i128..=999_999_999_999_999_999, 0u8..=12)
}

fn from_scaled(v: i128, frac: u8) -> Decimal {
    let mag = v.unsigned_abs();
    let p = 10u128.pow(u32::from(frac));
    let text = if frac == 0 {
        format!("{}{}", if v < 0 { "-" } else { "" }, mag)
    } else {
        format!("{}{}.{:0w$}", if v < 0 { "-" } else { "" }, mag / p, mag % p, w = frac as usize)
    };
    dec(&text)
}

fn scale(v: i128, from: u8, to: u8) -> i128 {
    v * 10i128.pow(u32::from(to - from))
}

/// Any valid decimal: up to 81 digits, up to 30 fraction digits, both signs.
fn any_decimal() -> impl Strategy<Value = Decimal> {
    (any::<bool>(), "[0-9]{0,50}", "[0-9]{0,30}").prop_map(|(neg, i, f)| {
        let text =
            format!("{}{}.{}", if neg { "-" } else { "" }, if i.is_empty() { "0" } else { &i }, f);
        dec(&text)
    })
}

proptest! {
    #[test]
    fn prop_arith_matches_i128((a, fa) in small(), (b, fb) in small()) {
        let (x, y) = (from_scaled(a, fa), from_scaled(b, fb));
        let f = fa.max(fb);
        let (sa, sb) = (scale(a, fa, f), scale(b, fb, f));
        prop_assert_eq!(x.cmp(&y), sa.cmp(&sb));
        prop_assert_eq!(x == y, sa == sb);
        prop_assert_eq!(x.add(&y), Res::Ok(from_scaled(sa + sb, f)));
        prop_assert_eq!(x.add(&y).value().frac_cnt(), f);
        prop_assert_eq!(x.sub(&y), Res::Ok(from_scaled(sa - sb, f)));
        let p = x.mul(&y);
        prop_assert!(p.is_ok());
        prop_assert_eq!(p.value(), from_scaled(a * b, fa + fb));
        prop_assert_eq!(p.value().frac_cnt(), fa + fb);
        if b != 0 {
            // rem: exact, sign of the dividend.
            let r = x.rem(&y).unwrap().value();
            prop_assert_eq!(r, from_scaled(sa % sb, f));
            // div: |q − a/b| ≤ half an ulp at the result scale, checked exactly in i128 when
            // the scaled numbers fit.
            let qf = (fa + 4).min(30);
            let q = x.div(&y, 4).unwrap().value();
            prop_assert_eq!(q.frac_cnt(), qf);
            let num = a.checked_mul(10i128.pow(u32::from(qf + fb + 1)));
            if let Some(num) = num {
                // fa <= qf, so this division is exact.
                let num = num / 10i128.pow(u32::from(fa));
                let t = num / b; // truncated toward zero, one extra digit
                let rounded = if t.abs() % 10 >= 5 { t / 10 + t.signum() } else { t / 10 };
                prop_assert_eq!(q, from_scaled(rounded, qf));
            }
        }
    }

    #[test]
    fn prop_text_round_trip(d in any_decimal()) {
        let text = d.to_string();
        let back = Decimal::parse(&text).unwrap();
        prop_assert_eq!(back, Res::Ok(d));
        prop_assert_eq!(back.value().frac_cnt(), d.frac_cnt());
        prop_assert_eq!(back.value().to_string(), text);
    }

    #[test]
    fn prop_chunk_round_trip(d in any_decimal()) {
        let b = d.to_chunk_bytes();
        let back = Decimal::from_chunk_bytes(&b).unwrap();
        prop_assert_eq!(back, d);
        prop_assert_eq!(back.to_chunk_bytes(), b);
    }

    #[test]
    fn prop_decode_random_bytes(b in proptest::collection::vec(any::<u8>(), 0..40)) {
        let mut r = Reader::new(&b);
        let _ = Decimal::decode_bin(&mut r);
        let _ = Decimal::from_chunk_bytes(&b);
    }

    #[test]
    fn prop_decode_bodies(prec in 1u8..=65, frac in 0u8..=30, body in proptest::collection::vec(any::<u8>(), 30)) {
        prop_assume!(frac <= prec);
        let mut b = vec![prec, frac];
        b.extend_from_slice(&body);
        // Either an error or a value that re-encodes to the same bytes.
        if let Ok((d, p, f)) = Decimal::decode_bin(&mut Reader::new(&b)) {
            let size = Decimal::bin_size(p, f).unwrap();
            let (again, r) = bin(&d, p, f);
            prop_assert!(r.is_ok());
            if !d.is_zero() {
                prop_assert_eq!(&again[..], &b[..2 + size]);
            }
        }
    }

    #[test]
    fn prop_bin_round_trip_and_truncations(d in any_decimal(), prec in 1u8..=65, frac in 0u8..=30) {
        prop_assume!(frac <= prec);
        let (b, r) = bin(&d, prec, frac);
        let (back, _, _) = decode(&b).unwrap();
        if r.is_ok() {
            prop_assert_eq!(back, d);
        }
        for cut in 0..b.len() {
            prop_assert!(decode(&b[..cut]).is_err());
        }
    }

    #[test]
    fn prop_bin_order(x in any_decimal(), y in any_decimal(), prec in 30u8..=65, frac in 0u8..=30) {
        prop_assume!(frac <= prec);
        let (bx, _) = bin(&x, prec, frac);
        let (by, _) = bin(&y, prec, frac);
        let (dx, _, _) = decode(&bx).unwrap();
        let (dy, _, _) = decode(&by).unwrap();
        prop_assert_eq!(bx.cmp(&by), dx.cmp(&dy));
        if x < y {
            prop_assert!(bx <= by);
        }
    }

    #[test]
    fn prop_add_sub_inverse(x in any_decimal(), y in any_decimal()) {
        let s = x.add(&y);
        prop_assume!(s.is_ok());
        prop_assert_eq!(s.value().sub(&y).value(), x);
        // (x + y) vs x ordering follows the sign of y.
        prop_assert_eq!(s.value().cmp(&x), y.cmp(&Decimal::zero()));
    }

    #[test]
    fn prop_div_rem_consistent(x in any_decimal(), y in any_decimal()) {
        prop_assume!(!y.is_zero());
        let r = x.rem(&y).unwrap();
        prop_assert!(r.is_ok());
        let r = r.value();
        // |r| < |y|, r has the sign of x (or is zero), and (x − r) / y is an integer n with
        // n · y == x − r.
        let abs = |d: Decimal| if d.is_negative() { -d } else { d };
        prop_assert!(abs(r) < abs(y));
        prop_assert!(r.is_zero() || r.is_negative() == x.is_negative());
        // x − r may not fit in nine words (then it is truncated, and no longer a multiple).
        let diff = x.sub(&r);
        prop_assume!(diff.is_ok());
        let diff = diff.value();
        let n = diff.div(&y, 0).unwrap();
        prop_assume!(n.is_ok());
        let n = n.value();
        prop_assert_eq!(n.round(0, RoundMode::Truncate).value(), n);
        let back = n.mul(&y);
        prop_assume!(back.is_ok());
        prop_assert_eq!(back.value(), diff);
    }
}

/// A huge negative exponent must neither hang nor panic (found in review: the digit scan used
/// to walk every implicit leading zero).
#[test]
fn huge_negative_exponent_is_fast() {
    for s in ["1e-1099511627776", "1e-9999999999", "-5e-99999999999999999999", "9.99e-4000000000"] {
        let r = Decimal::parse(s).unwrap();
        assert!(r.value().is_zero(), "{s}");
        assert!(r.is_truncated(), "{s}");
    }
}

/// `m / 10^scale` as a decimal string with exactly `scale` fraction digits.
fn fixed_str(m: i128, scale: u8) -> String {
    let digits = m.unsigned_abs().to_string();
    let s = usize::from(scale);
    let padded = format!("{digits:0>width$}", width = s + 1);
    let (int, frac) = padded.split_at(padded.len() - s);
    let sign = if m < 0 { "-" } else { "" };
    if s == 0 { format!("{sign}{int}") } else { format!("{sign}{int}.{frac}") }
}

/// `decode_bin_i128` must agree with `decode_bin` whenever it answers, and the decoder of
/// `b`'s declared type (its shift-and-mask path for short bodies, its word loop for the
/// others) with `decode_bin_i128`, on well-formed and malformed input alike.
fn check_i128(b: &[u8]) -> Result<(), TestCaseError> {
    if let [prec, frac, ..] = *b
        && let Some(d) = BinI128Decoder::new(prec, frac)
    {
        prop_assert_eq!(d.decode(b), Decimal::decode_bin_i128(b).map(|x| x.0), "{:02x?}", b);
        prop_assert_eq!((d.prec(), d.frac()), (prec, frac));
        // A decoder of another declared type never reads the value.
        if let Some(other) = BinI128Decoder::new(prec.max(frac + 1).min(38), frac.saturating_sub(1))
            && (other.prec(), other.frac()) != (prec, frac)
        {
            prop_assert_eq!(other.decode(b), None);
        }
    }
    if let Some((m, s)) = Decimal::decode_bin_i128(b) {
        let slow = decode(b);
        prop_assert!(slow.is_ok(), "{:02x?}: fast path accepted what decode_bin rejects", b);
        let (d, _, frac) = slow.unwrap();
        prop_assert_eq!(s, frac);
        prop_assert_eq!(fixed_str(m, s), d.to_string());
    }
    Ok(())
}

#[test]
fn decode_bin_i128_known_values() {
    let cases: [(&str, u8, u8, i128); 7] = [
        ("1234.56", 15, 2, 123456),
        ("-1234.56", 15, 2, -123456),
        ("0", 1, 0, 0),
        ("-0.05", 4, 2, -5),
        ("99999999999999999999999999999999999999", 38, 0, 10i128.pow(38) - 1),
        ("-1.000000000000000000000000000001", 38, 30, -(10i128.pow(30) + 1)),
        ("123456789.987654321", 18, 9, 123456789987654321),
    ];
    for (text, prec, frac, m) in cases {
        let (b, res) = bin(&dec(text), prec, frac);
        assert!(res.is_ok(), "{text}");
        assert_eq!(Decimal::decode_bin_i128(&b), Some((m, frac)), "{text}");
    }
    // Above 38 digits, trailing or missing bytes, bad headers, digit words out of range.
    let (b, _) = bin(&dec("1.5"), 39, 1);
    assert!(decode(&b).is_ok());
    assert_eq!(Decimal::decode_bin_i128(&b), None);
    let (mut b, _) = bin(&dec("1.5"), 15, 2);
    b.push(0);
    assert_eq!(Decimal::decode_bin_i128(&b), None);
    assert_eq!(Decimal::decode_bin_i128(&b[..b.len() - 2]), None);
    assert_eq!(Decimal::decode_bin_i128(&[]), None);
    assert_eq!(Decimal::decode_bin_i128(&[0, 0]), None);
    assert_eq!(Decimal::decode_bin_i128(&[2, 3, 0x80]), None);
    // DECIMAL(2,0) is one byte holding 0..=99: 100 is out of range.
    assert_eq!(Decimal::decode_bin_i128(&[2, 0, 0x80 | 99]), Some((99, 0)));
    assert_eq!(Decimal::decode_bin_i128(&[2, 0, 0x80 | 100]), None);
    assert!(decode(&[2, 0, 0x80 | 100]).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn decode_bin_i128_matches_decode_bin(
        neg: bool,
        int in "[0-9]{1,20}",
        frac_digits in "[0-9]{0,18}",
        prec in 1u8..=40,
        frac in 0u8..=30,
    ) {
        let frac = frac.min(prec);
        let text = format!(
            "{}{int}{}{frac_digits}",
            if neg { "-" } else { "" },
            if frac_digits.is_empty() { "" } else { "." },
        );
        let (b, _) = bin(&dec(&text), prec, frac);
        let (d, _, _) = decode(&b).unwrap();
        check_i128(&b)?;
        match Decimal::decode_bin_i128(&b) {
            Some((m, s)) => {
                prop_assert_eq!(s, frac);
                prop_assert_eq!(fixed_str(m, s), d.to_string());
            }
            None => prop_assert!(prec > 38, "DECIMAL({}, {}) {} not decoded", prec, frac, text),
        }
        // Flipped bytes and truncations: the fast path never disagrees with decode_bin.
        for i in 0..b.len() {
            for x in [0x01u8, 0x5A, 0x80, 0xFF] {
                let mut bad = b.clone();
                bad[i] ^= x;
                check_i128(&bad)?;
            }
            check_i128(&b[..i])?;
        }
    }

    #[test]
    fn decode_bin_i128_random_bytes(data in prop::collection::vec(any::<u8>(), 0..24)) {
        check_i128(&data)?;
    }
}
