//! A table scan decodes row v2 values exactly as walking each row alone does: rows of one
//! layout read from the layout learned once, rows of other layouts (NULLs, missing columns,
//! another column set) and corrupt rows (any byte flipped, cut) anywhere in a batch — the
//! answer is the row-by-row decode, or an error when a row does not decode.

#![expect(clippy::unwrap_used, reason = "fixture builders outside #[test] fns")]

mod support;

use proptest::prelude::*;
use prost::Message;
use rcop_datum::chunk::mysql_type as mt;
use rcop_datum::row::RowEncoder;
use rcop_datum::row::v2::{self, Lookup, Projection};
use rcop_datum::{Datum, key};
use rcop_exec::{Engine, MemStore};
use rcop_proto::tipb;
use support::dag::*;

const TID: i64 = 77;

/// The columns read, in output order after the handle: ids 1, 2, 4 (BIGINT) and 5
/// (VARCHAR). Id 3 is stored but not read.
const INT_IDS: [i64; 3] = [1, 2, 4];
const STR_ID: i64 = 5;

/// Row `h` in one of five layouts: all columns; column 2 NULL; column 4 missing; a long
/// string (big values change offsets, not ids); only ids 1 and 5.
fn row(h: i64, layout: u8) -> Vec<u8> {
    let mut enc = RowEncoder::new();
    enc.int(1, h * 3 - 50);
    match layout {
        1 => {
            enc.null(2);
        }
        4 => {}
        _ => {
            enc.int(2, h * 1000);
        }
    }
    if layout != 4 {
        enc.int(3, -h);
    }
    if layout != 2 && layout != 4 {
        enc.int(4, h % 5);
    }
    let s = if layout == 3 { vec![b'x'; 300] } else { format!("s{h}").into_bytes() };
    enc.bytes(STR_ID, &s);
    let mut v = Vec::new();
    enc.finish(&mut v).unwrap();
    v
}

/// What walking `value` alone gives for the columns read: the row, or `None` when it does
/// not decode.
fn expected(h: i64, value: &[u8]) -> Option<Vec<Datum>> {
    let ids = [INT_IDS[0], INT_IDS[1], INT_IDS[2], STR_ID];
    let mut cells = vec![Lookup::Missing; ids.len()];
    Projection::new(&ids).decode_into(value, &mut cells).ok()?;
    let mut out = vec![Datum::Int(h)];
    for (k, cell) in cells.into_iter().enumerate() {
        out.push(match (cell, k == 3) {
            (Lookup::Value(b), false) => Datum::Int(v2::decode_v2_i64(b).ok()?),
            (Lookup::Value(b), true) => Datum::Bytes(b.to_vec()),
            (Lookup::Null | Lookup::Missing, _) => Datum::Null,
        });
    }
    Some(out)
}

fn dag_all() -> tipb::DagRequest {
    let i = ft(mt::LONG_LONG);
    let mut cols = vec![column_info(-1, &i, true)];
    cols.extend(INT_IDS.iter().map(|&id| column_info(id, &i, false)));
    cols.push(column_info(STR_ID, &ft(mt::VARCHAR), false));
    dag(vec![scan(TID, cols, false)], (0..5).collect(), false)
}

/// Runs the scan over `rows` (handle, value) and checks it against [`expected`].
fn check(rows: Vec<(i64, Vec<u8>)>) -> Result<(), TestCaseError> {
    let want: Option<Vec<Vec<Datum>>> = rows.iter().map(|(h, v)| expected(*h, v)).collect();
    let store = MemStore::from_pairs(rows.into_iter().map(|(h, v)| {
        let mut k = Vec::new();
        key::encode_record_key(&mut k, TID, h);
        (k, v)
    }));
    let resp = Engine::default()
        .handle(&request(&dag_all(), vec![table_range(TID, None)]), &mut store.scanner());
    let sel = tipb::SelectResponse::decode(resp.data.clone()).unwrap();
    let failed = !resp.other_error.is_empty() || sel.error.is_some();
    match want {
        Some(want) => {
            prop_assert!(!failed, "{:?} {:?}", resp.other_error, sel.error);
            prop_assert_eq!(default_rows(&sel, 5), want);
        }
        None => prop_assert!(failed, "a row that does not decode was answered"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Layouts mixed at random (runs of one layout, so learned layouts are reused and then
    /// change), and at most one corrupt row: a flipped byte or a cut value.
    #[test]
    fn scan_decodes_as_rows_walked_alone(
        layouts in prop::collection::vec((0u8..5, 1usize..40), 1..12),
        corrupt in prop::option::of((any::<prop::sample::Index>(), any::<prop::sample::Index>(), 1u8..=255, any::<bool>())),
    ) {
        let mut rows = Vec::new();
        for (layout, run) in layouts {
            for _ in 0..run {
                let h = rows.len() as i64 + 1;
                rows.push((h, row(h, layout)));
            }
        }
        if let Some((r, at, x, cut)) = corrupt {
            let n = rows.len();
            let value = &mut rows[r.index(n)].1;
            // Byte 0 stays the v2 marker (another first byte makes a v1 row, decoded
            // elsewhere); a cut keeps it too.
            let at = 1 + at.index(value.len() - 1);
            if cut {
                value.truncate(at);
            } else {
                value[at] ^= x;
            }
        }
        check(rows)?;
    }
}

/// The answer of `dag` over the whole table in `store`, which must have no error.
fn answer(store: &MemStore, dag: &tipb::DagRequest) -> tipb::SelectResponse {
    let resp =
        Engine::default().handle(&request(dag, vec![table_range(TID, None)]), &mut store.scanner());
    assert!(resp.other_error.is_empty(), "{}", resp.other_error);
    let sel = tipb::SelectResponse::decode(resp.data).unwrap();
    assert!(sel.error.is_none(), "{:?}", sel.error);
    sel
}

#[test]
fn a_corrupt_offset_after_a_learned_layout_is_an_error() {
    // 100 rows of one layout, then one whose last offset points past its values: same
    // header and ids as the learned layout, so only the per-row checks catch it.
    let mut rows: Vec<(i64, Vec<u8>)> = (1..=100).map(|h| (h, row(h, 0))).collect();
    let mut bad = row(101, 0);
    // Small row: 6-byte header, 5 one-byte ids, then 2-byte offsets; the first offset is
    // the end of column 1's value.
    bad[6 + 5] = 0xF0;
    assert!(expected(101, &bad).is_none());
    rows.push((101, bad));
    rows.extend((102..=120).map(|h| (h, row(h, 0))));
    check(rows).unwrap();
    // And the same rows without the corruption decode.
    check((1..=120).map(|h| (h, row(h, (h % 5) as u8))).collect()).unwrap();
}

/// Column 6 of [`mixed_decimal_row`]: `DECIMAL(15, 2)`, stored as `DECIMAL(12, 2)` by some rows.
fn cents(c: i64) -> rcop_datum::Decimal {
    format!("{}.{:02}", c / 100, c % 100).parse().unwrap()
}

/// Row `h`: column 1 = h, column 2 NULL for h in 300..=350 (another layout), column 6 =
/// h * 7 cents stored as DECIMAL(15, 2), or DECIMAL(12, 2) for h in 201..=450 (another
/// decimal header).
fn mixed_decimal_row(h: i64) -> Vec<u8> {
    let mut enc = RowEncoder::new();
    enc.int(1, h);
    if (300..=350).contains(&h) {
        enc.null(2);
    } else {
        enc.int(2, -h);
    }
    let prec = if (201..=450).contains(&h) { 12 } else { 15 };
    enc.decimal(6, &cents(h * 7), prec, 2).unwrap();
    let mut v = Vec::new();
    enc.finish(&mut v).unwrap();
    v
}

#[test]
fn what_one_batch_learns_holds_for_the_next_ones() {
    // 700 rows span batches of 32, 64, … 256; the layout and the decimal header change
    // inside and across them. The selection decodes column 1 of every row, the encoder
    // column 6 of the rows kept: two column lists, each decoder kept from batch to batch.
    let store = MemStore::from_pairs((1..=700).map(|h| {
        let mut k = Vec::new();
        key::encode_record_key(&mut k, TID, h);
        (k, mixed_decimal_row(h))
    }));
    let i = ft(mt::LONG_LONG);
    let d = ft_dec(15, 2);
    let cols =
        vec![column_info(-1, &i, true), column_info(1, &i, false), column_info(6, &d, false)];
    let keep = func(130, i.clone(), vec![col(1, i.clone()), int(100)]); // GeInt
    let dag = dag(vec![scan(TID, cols, false), selection(vec![keep])], vec![0, 2], false);
    let sel = answer(&store, &dag);
    let want: Vec<Vec<Datum>> =
        (100..=700).map(|h| vec![Datum::Int(h), Datum::Decimal(cents(h * 7))]).collect();
    assert_eq!(default_rows(&sel, 2), want);
}

/// Row `h` for the typed-run test: column 1 = h, column 2 = h % 4, column 5 = "s{h}",
/// column 6 = h * 7 cents (DECIMAL(15, 2)), column 7 = a DATE h days into 1994, column 8
/// NULL, column 9 a DATETIME h seconds after midnight of that DATE.
fn typed_row(h: i64) -> Vec<u8> {
    let mut enc = RowEncoder::new();
    enc.int(1, h).int(2, h % 4).bytes(5, format!("s{h}").as_bytes());
    enc.decimal(6, &cents(h * 7), 15, 2).unwrap();
    enc.time(7, date_of(h)).null(8).time(9, datetime_of(h));
    let mut v = Vec::new();
    enc.finish(&mut v).unwrap();
    v
}

fn date_of(h: i64) -> rcop_datum::Time {
    let s = format!("1994-{:02}-{:02}", 1 + (h / 28) % 12, 1 + h % 28);
    rcop_datum::Time::parse(&s, rcop_datum::TimeType::Date, 0).unwrap()
}

fn datetime_of(h: i64) -> rcop_datum::Time {
    let s = format!(
        "1994-{:02}-{:02} 00:{:02}:{:02}",
        1 + (h / 28) % 12,
        1 + h % 28,
        h / 60 % 60,
        h % 60
    );
    rcop_datum::Time::parse(&s, rcop_datum::TimeType::DateTime, 0).unwrap()
}

#[test]
fn typed_runs_skip_the_rows_a_selection_dropped() {
    // Every row has one layout, so batches after the first decode column by column. The
    // selection keeps three rows in four: the other columns are then decoded for rows
    // with gaps between them, in runs that stop at each gap.
    let store = MemStore::from_pairs((1..=900).map(|h| {
        let mut k = Vec::new();
        key::encode_record_key(&mut k, TID, h);
        (k, typed_row(h))
    }));
    let i = ft(mt::LONG_LONG);
    let (d, s, t) = (ft_dec(15, 2), ft(mt::VARCHAR), ft(mt::DATE));
    let cols = vec![
        column_info(-1, &i, true),
        column_info(1, &i, false),
        column_info(2, &i, false),
        column_info(5, &s, false),
        column_info(6, &d, false),
        column_info(7, &t, false),
        column_info(8, &i, false),
        column_info(9, &ft(mt::DATETIME), false),
    ];
    let keep = func(150, i.clone(), vec![col(2, i.clone()), int(0)]); // NeInt
    let dag =
        dag(vec![scan(TID, cols, false), selection(vec![keep])], vec![0, 1, 3, 4, 5, 6, 7], false);
    let sel = answer(&store, &dag);
    let want: Vec<Vec<Datum>> = (1..=900)
        .filter(|h| h % 4 != 0)
        .map(|h| {
            vec![
                Datum::Int(h),
                Datum::Int(h),
                Datum::Bytes(format!("s{h}").into_bytes()),
                Datum::Decimal(cents(h * 7)),
                // A DATE answers as its packed form.
                Datum::Uint(date_of(h).to_packed_u64()),
                Datum::Null,
                Datum::Uint(datetime_of(h).to_packed_u64()),
            ]
        })
        .collect();
    assert_eq!(default_rows(&sel, 7), want);
}

#[test]
fn columns_without_a_typed_run_decode_cell_by_cell() {
    // A DOUBLE has no typed run: in the batches decoded column by column, each of its cells
    // goes the general way, while the BIGINT beside it runs.
    let store = MemStore::from_pairs((1..=500).map(|h| {
        let mut k = Vec::new();
        key::encode_record_key(&mut k, TID, h);
        let mut enc = RowEncoder::new();
        enc.int(1, h).float(3, h as f64 / 4.0);
        let mut v = Vec::new();
        enc.finish(&mut v).unwrap();
        (k, v)
    }));
    let i = ft(mt::LONG_LONG);
    let cols = vec![
        column_info(-1, &i, true),
        column_info(3, &ft(mt::DOUBLE), false),
        column_info(1, &i, false),
    ];
    let dag = dag(vec![scan(TID, cols, false)], vec![0, 1, 2], false);
    let sel = answer(&store, &dag);
    let want: Vec<Vec<Datum>> = (1..=500)
        .map(|h| vec![Datum::Int(h), Datum::Float(h as f64 / 4.0), Datum::Int(h)])
        .collect();
    assert_eq!(default_rows(&sel, 3), want);
}
