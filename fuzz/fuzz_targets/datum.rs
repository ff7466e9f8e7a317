//! Datum, decimal, time, duration, binary JSON, chunk-column and key decoders. Whatever decodes must
//! re-encode and decode to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rcop_datum::chunk::ChunkColumnRef;
use rcop_datum::datum::{self, Datum, Mode};
use rcop_datum::json::{Json, JsonRef};
use rcop_datum::{Decimal, Duration, Reader, Time, TimeType, key};

fuzz_target!(|data: &[u8]| {
    // Generic datums, and a re-encode round trip in value mode.
    if let Ok(values) = Datum::decode_all(data) {
        let mut out = Vec::new();
        if datum::encode_datums(&values, Mode::Value, &mut out).is_ok() {
            let again = Datum::decode_all(&out).expect("re-encoded datums decode");
            assert_eq!(again.len(), values.len());
        }
    }
    let mut rest = data;
    while let Ok((one, tail)) = datum::split_datum(rest) {
        assert!(!one.is_empty());
        rest = tail;
    }
    let mut scratch = Vec::new();
    let _ = datum::decode_int_datum(&mut Reader::new(data));
    let _ = datum::decode_float_datum(&mut Reader::new(data));
    let _ = datum::decode_bytes_datum(&mut Reader::new(data), &mut scratch);
    let _ = datum::decode_decimal_datum(&mut Reader::new(data));
    let _ = datum::decode_time_datum(&mut Reader::new(data), TimeType::Timestamp, 6);
    let _ = datum::decode_duration_datum(&mut Reader::new(data), 3);

    // Decimal: binary and chunk layouts, text.
    if let Ok((d, prec, frac)) = Decimal::decode_bin(&mut Reader::new(data)) {
        let mut out = Vec::new();
        d.write_bin(prec, frac, &mut out).expect("valid prec/frac");
        let (back, p2, f2) = Decimal::decode_bin(&mut Reader::new(&out)).expect("round trip");
        assert_eq!((back, p2, f2), (d, prec, frac));
    }
    if let Ok(d) = Decimal::from_chunk_bytes(data) {
        assert_eq!(Decimal::from_chunk_bytes(&d.to_chunk_bytes()).ok(), Some(d));
    }
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(res) = Decimal::parse(text) {
            let d = res.value();
            assert_eq!(Decimal::parse(&d.to_string()).map(|r| r.value()).ok(), Some(d));
        }
        let _ = Time::parse(text, TimeType::DateTime, 6);
        let _ = Time::parse(text, TimeType::Date, 0);
        let _ = Duration::parse(text, 6);
    }

    // Binary JSON: whatever decodes prints, compares with itself, and re-parses from its text
    // to an equal value; JSON text that parses decodes again.
    if let Ok(j) = JsonRef::decode(data) {
        assert_eq!(j.compare(&j).ok(), j.compare(&j).ok());
        if let Ok(text) = j.to_text()
            && let Ok(again) = Json::parse(&text)
        {
            assert_eq!(again.as_ref().to_text().ok(), Some(text));
        }
    }
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(j) = Json::parse(text)
    {
        assert!(JsonRef::decode(j.as_bytes()).is_ok());
    }

    // Time: packed and chunk layouts.
    if let Ok(b) = <[u8; 8]>::try_from(data.get(..8).unwrap_or_default()) {
        let v = u64::from_le_bytes(b);
        if let Ok(t) = Time::from_packed_u64(v, TimeType::DateTime, 6) {
            assert_eq!(Time::from_packed_u64(t.to_packed_u64(), TimeType::DateTime, 6).ok(), Some(t));
        }
        if let Ok(t) = Time::from_chunk_u64(v) {
            assert_eq!(Time::from_chunk_u64(t.to_chunk_u64()).ok(), Some(t));
        }
    }

    // Chunk columns and keys.
    let mut r = Reader::new(data);
    if let Ok(col) = ChunkColumnRef::decode(&mut r, None) {
        for i in 0..col.len().min(64) {
            let _ = (col.is_null(i), col.get(i));
        }
    }
    let _ = ChunkColumnRef::decode(&mut Reader::new(data), Some(8));
    let _ = ChunkColumnRef::decode(&mut Reader::new(data), Some(40));
    let _ = key::decode_record_key(data);
    let _ = key::split_index_key(data);
    let _ = key::split_keyspace(data);
});
