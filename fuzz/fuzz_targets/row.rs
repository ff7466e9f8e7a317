//! Row format v1 and v2 decoders: parse, look columns up, convert every value under every kind.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rcop_datum::Reader;
use rcop_datum::datum::Datum;
use rcop_datum::row::{Column, Projection, Row, RowSlice, RowV1, ValueKind, v2};

const KINDS: [ValueKind; 8] = [
    ValueKind::Int,
    ValueKind::Uint,
    ValueKind::Float,
    ValueKind::Bytes,
    ValueKind::Decimal,
    ValueKind::Time,
    ValueKind::Duration,
    ValueKind::Json,
];

fuzz_target!(|data: &[u8]| {
    let mut scratch = Vec::new();
    if let Ok(row) = Row::parse(data) {
        for id in [-1i64, 0, 1, 2, 3, 8, 12, 255, 256, 335, i64::MAX] {
            match row.get(id) {
                Ok(Column::V2(v)) => {
                    for kind in KINDS {
                        scratch.clear();
                        if v2::v2_value_to_datum(v, kind, &mut scratch).is_ok() {
                            // What the conversion writes is one well-formed datum.
                            let mut r = Reader::new(&scratch);
                            assert!(Datum::decode(&mut r).is_ok());
                            assert!(r.is_empty());
                        }
                    }
                }
                Ok(Column::Datum(d)) => {
                    let _ = Datum::decode(&mut Reader::new(d));
                }
                Ok(Column::Null | Column::Missing) | Err(_) => {}
            }
        }
    }
    // The one-pass projection never panics, and on every row the full parser accepts it
    // agrees with per-column lookups.
    let ids = [1i64, 3, 8, 12, 33, 335, 2, 1];
    let projection = Projection::new(&ids);
    let mut got = Vec::new();
    let projected = projection.decode(data, &mut got);
    if let Ok(row) = RowSlice::parse(data) {
        assert!(projected.is_ok(), "projection rejected a row RowSlice accepts");
        for (id, lookup) in ids.iter().zip(&got) {
            assert_eq!(*lookup, row.get(*id), "column {id}");
        }
    }
    if let Ok(row) = RowSlice::parse(data) {
        for (id, v) in row.non_null_columns() {
            // Ids of a corrupt row need not be sorted: a lookup may miss, but stays in bounds.
            let _ = row.search_in_non_null_ids(i64::from(id));
            let _ = v2::decode_v2_i64(v);
        }
        let _ = row.null_columns().count();
    }
    let v1 = RowV1::new(data);
    let _ = v1.validate();
    for c in v1.columns().take(64) {
        if let Ok((_, d)) = c {
            let _ = Datum::decode(&mut Reader::new(d));
        }
    }
});
