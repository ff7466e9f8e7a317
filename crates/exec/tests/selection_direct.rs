//! Selection applies `column op constant` over integers (signed and unsigned), decimals,
//! datetimes and durations straight to its selection vector. Differential: every such condition keeps
//! exactly the rows the general path keeps for the same comparison wrapped in `AND 1`
//! (which the direct form does not take), over columns with NULLs, both operand orders,
//! every operator but `<=>`, NULL constants, and up to three conditions in a row (a later one
//! sees a selection that is no longer every row; two or three on one column are applied
//! together, straight from the rows while the column is undecoded). Rows differ in layout
//! (NULLs, a column absent) so that rows the learned layout does not fit are walked; a table
//! of many batches and corrupt values check the rest of the row path.

#![expect(clippy::unwrap_used, reason = "fixture builders outside #[test] fns")]

mod support;

use proptest::prelude::*;
use prost::Message;
use rcop_datum::chunk::mysql_type as mt;
use rcop_datum::row::RowEncoder;
use rcop_datum::{Datum, Decimal, Duration, Time, TimeType, codec, key};
use rcop_exec::{Engine, MemStore};
use rcop_proto::tipb;
use support::dag::*;

const TID: i64 = 78;
const UNSIGNED: u32 = 32;

fn ft_u() -> tipb::FieldType {
    tipb::FieldType { flag: Some(UNSIGNED), ..ft(mt::LONG_LONG) }
}

fn ft_time() -> tipb::FieldType {
    tipb::FieldType { decimal: Some(0), ..ft(mt::DATETIME) }
}

fn ft_date() -> tipb::FieldType {
    tipb::FieldType { decimal: Some(0), ..ft(mt::DATE) }
}

fn ft_dur() -> tipb::FieldType {
    tipb::FieldType { decimal: Some(0), ..ft(mt::DURATION) }
}

/// The values of the four columns (small ranges so that equal values are common).
#[derive(Debug, Clone)]
struct Row {
    int: Option<i64>,
    uint: Option<u64>,
    day: Option<u8>,
    secs: Option<i64>,
    /// Hundredths of a `DECIMAL(15,2)`.
    cents: Option<i64>,
    /// A DATE in 2024 (`d / 32` the month, `d % 32` the day: zero months and days too).
    date: Option<u8>,
    /// A column (1 to 6) the row does not hold at all (NULL for a nullable column).
    absent: Option<i64>,
}

fn datetime(day: u8) -> Time {
    Time::parse(&format!("2024-01-{:02} 10:00:00", day % 28 + 1), TimeType::DateTime, 0).unwrap()
}

fn duration(secs: i64) -> Duration {
    Duration::from_nanos(secs * 1_000_000_000, 0).unwrap()
}

fn date(d: u8) -> Time {
    let (month, day) = (u32::from(d / 32), u32::from(d % 32));
    Time::from_parts(2024, month, day, 0, 0, 0, 0, TimeType::Date, 0).unwrap()
}

fn cents(c: i64) -> Decimal {
    let sign = if c < 0 { "-" } else { "" };
    format!("{sign}{}.{:02}", c.unsigned_abs() / 100, c.unsigned_abs() % 100).parse().unwrap()
}

fn any_row() -> impl Strategy<Value = Row> {
    (
        prop::option::weighted(0.8, prop_oneof![-3i64..3, Just(i64::MIN), Just(i64::MAX)]),
        prop::option::weighted(0.8, prop_oneof![0u64..4, Just(u64::MAX), Just(1 << 63)]),
        prop::option::weighted(0.8, 0u8..6),
        prop::option::weighted(0.8, -3i64..3),
        prop::option::weighted(0.8, -300i64..300),
        prop::option::weighted(0.8, prop_oneof![0u8..4, 32u8..36, 64u8..66]),
        prop::option::weighted(0.1, 1i64..=6),
    )
        .prop_map(|(int, uint, day, secs, cents, date, absent)| Row {
            int,
            uint,
            day,
            secs,
            cents,
            date,
            absent,
        })
}

fn store(rows: &[Row]) -> MemStore {
    MemStore::from_pairs(rows.iter().enumerate().map(|(i, r)| (record_key(i), encode(r))))
}

fn record_key(i: usize) -> Vec<u8> {
    let mut k = Vec::new();
    key::encode_record_key(&mut k, TID, i as i64 + 1);
    k
}

fn encode(r: &Row) -> Vec<u8> {
    let mut enc = RowEncoder::new();
    let held = |id: i64| r.absent != Some(id);
    match r.int {
        Some(v) if held(1) => enc.int(1, v),
        None if held(1) => enc.null(1),
        _ => &mut enc,
    };
    match r.uint {
        Some(v) if held(2) => enc.uint(2, v),
        None if held(2) => enc.null(2),
        _ => &mut enc,
    };
    match r.day {
        Some(d) if held(3) => enc.time(3, datetime(d)),
        None if held(3) => enc.null(3),
        _ => &mut enc,
    };
    match r.secs {
        Some(s) if held(4) => enc.duration(4, duration(s)),
        None if held(4) => enc.null(4),
        _ => &mut enc,
    };
    match r.cents {
        Some(c) if held(5) => {
            enc.decimal(5, &cents(c), 15, 2).unwrap();
        }
        None if held(5) => {
            enc.null(5);
        }
        _ => {}
    }
    match r.date {
        Some(d) if held(6) => enc.time(6, date(d)),
        None if held(6) => enc.null(6),
        _ => &mut enc,
    };
    let mut v = Vec::new();
    enc.finish(&mut v).unwrap();
    v
}

/// A comparison of column `c` (0 int, 1 uint, 2 datetime, 3 duration, 4 decimal, 5 date, 6 the
/// int with an unsigned constant) with constant `k` (a decimal of `k % 4` fraction digits:
/// three is finer than the column's; a date in January or February 2024)
/// (NULL when `null`), operator `op` (0 `<` … 5 `!=`), the constant first when `flip`.
#[derive(Debug, Clone)]
struct Cond {
    c: usize,
    op: i32,
    k: i64,
    null: bool,
    flip: bool,
}

fn any_cond() -> impl Strategy<Value = Cond> {
    (0usize..7, 0i32..6, -4i64..5, prop::bool::weighted(0.1), any::<bool>())
        .prop_map(|(c, op, k, null, flip)| Cond { c, op, k, null, flip })
}

impl Cond {
    fn expr(&self) -> tipb::Expr {
        let (f, ty) = match self.c {
            0 | 6 => (ft(mt::LONG_LONG), 0),
            1 => (ft_u(), 0),
            2 => (ft_time(), 4),
            3 => (ft_dur(), 5),
            5 => (ft_date(), 4),
            _ => (ft_dec(15, 2), 2),
        };
        let offset = if self.c == 6 { 1 } else { self.c as i64 + 1 };
        let column = col(offset, f.clone());
        let konst = if self.null {
            null(f)
        } else {
            match self.c {
                0 => int(self.k),
                1 | 6 => {
                    let mut b = Vec::new();
                    // For the signed column, also a constant above every signed value.
                    let k = if self.c == 6 && self.k < 0 {
                        u64::MAX - 1
                    } else {
                        self.k.unsigned_abs()
                    };
                    codec::encode_u64(&mut b, k);
                    tipb::Expr {
                        tp: Some(2),
                        val: Some(b.into()),
                        field_type: Some(ft_u()),
                        ..Default::default()
                    }
                }
                2 => time(
                    &format!("2024-01-{:02} 10:00:00", self.k.unsigned_abs() % 28 + 1),
                    mt::DATETIME,
                    0,
                ),
                5 => time(
                    &format!(
                        "2024-{:02}-{:02}",
                        self.k.rem_euclid(2) + 1,
                        self.k.unsigned_abs() % 3 + 1
                    ),
                    mt::DATE,
                    0,
                ),
                4 => {
                    let frac = self.k.rem_euclid(4) as usize;
                    let digits = format!("{}", self.k.unsigned_abs() * 7);
                    let s = if frac == 0 {
                        digits
                    } else {
                        let d = format!("{digits:0>width$}", width = frac + 1);
                        format!("{}.{}", &d[..d.len() - frac], &d[d.len() - frac..])
                    };
                    dec(&if self.k < 0 { format!("-{s}") } else { s })
                }
                _ => {
                    let mut b = Vec::new();
                    codec::encode_i64(&mut b, self.k * 1_000_000_000);
                    tipb::Expr {
                        tp: Some(103),
                        val: Some(b.into()),
                        field_type: Some(ft_dur()),
                        ..Default::default()
                    }
                }
            }
        };
        let args = if self.flip { vec![konst, column] } else { vec![column, konst] };
        func(100 + self.op * 10 + ty, ft(mt::LONG_LONG), args)
    }
}

fn handles(store: &MemStore, conds: Vec<tipb::Expr>) -> Vec<Datum> {
    answer(store, conds).unwrap()
}

/// The handles of the rows `conds` keep, or the error the request answers with.
fn answer(store: &MemStore, conds: Vec<tipb::Expr>) -> Result<Vec<Datum>, String> {
    let l = ft(mt::LONG_LONG);
    let cols = vec![
        column_info(-1, &l, true),
        column_info(1, &l, false),
        column_info(2, &ft_u(), false),
        column_info(3, &ft_time(), false),
        column_info(4, &ft_dur(), false),
        column_info(5, &ft_dec(15, 2), false),
        column_info(6, &ft_date(), false),
    ];
    let d = dag(vec![scan(TID, cols, false), selection(conds)], vec![0], false);
    let resp =
        Engine::default().handle(&request(&d, vec![table_range(TID, None)]), &mut store.scanner());
    if !resp.other_error.is_empty() {
        return Err(resp.other_error);
    }
    let sel = tipb::SelectResponse::decode(resp.data.clone()).unwrap();
    if let Some(e) = sel.error {
        return Err(format!("{e:?}"));
    }
    Ok(default_rows(&sel, 1).into_iter().flatten().collect())
}

/// `cond AND 1`: the same truth, evaluated by the general path.
fn wrapped(cond: tipb::Expr) -> tipb::Expr {
    func(3101, ft(mt::LONG_LONG), vec![cond, int(1)])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn direct_comparisons_keep_what_the_general_path_keeps(
        rows in prop::collection::vec(any_row(), 0..80),
        a in any_cond(),
        b in prop::option::of(any_cond()),
        c in prop::option::of(any_cond()),
    ) {
        let s = store(&rows);
        let conds: Vec<Cond> = std::iter::once(a).chain(b).chain(c).collect();
        let direct = handles(&s, conds.iter().map(Cond::expr).collect());
        let general = handles(&s, conds.iter().map(|c| wrapped(c.expr())).collect());
        prop_assert_eq!(direct, general);
    }
}

#[test]
fn a_date_range_keeps_the_rows_inside_it() {
    let rows: Vec<Row> = (0..10u8)
        .map(|d| Row {
            int: None,
            uint: None,
            day: Some(d),
            secs: None,
            cents: None,
            date: None,
            absent: None,
        })
        .collect();
    let s = store(&rows);
    // 2024-01-03 <= t AND t < 2024-01-06 (the constant first in the first condition).
    let ge = Cond { c: 2, op: 1, k: 2, null: false, flip: true };
    let lt = Cond { c: 2, op: 0, k: 5, null: false, flip: false };
    let got = handles(&s, vec![ge.expr(), lt.expr()]);
    assert_eq!(got, [Datum::Int(3), Datum::Int(4), Datum::Int(5)]);
}

/// Over 5,000 rows (many batches, each read through the layout the one before learned),
/// where every 97th row is laid out otherwise (a NULL) and every 389th lacks a column,
/// ranges of two conditions on one column and three in a row keep what the general path
/// keeps, in every batch.
#[test]
fn ranges_over_many_batches_keep_what_the_general_path_keeps() {
    let rows: Vec<Row> = (0..5000i64)
        .map(|i| {
            let odd = i % 97 == 0;
            Row {
                int: (!odd).then_some(i % 7 - 3),
                uint: Some(i as u64 % 5),
                day: (!odd).then_some((i % 6) as u8),
                secs: Some(i % 5 - 2),
                cents: (!odd).then_some(i % 600 - 300),
                date: (!odd).then_some((i % 3) as u8 + 32 * (i % 2) as u8),
                absent: (i % 389 == 0).then_some(i % 6 + 1),
            }
        })
        .collect();
    let s = store(&rows);
    let cond = |c, op, k| Cond { c, op, k, null: false, flip: false };
    for conds in [
        // `int >= -1 AND int < 2`, then a datetime range, then a decimal range.
        vec![cond(0, 3, -1), cond(0, 0, 2)],
        vec![cond(2, 3, 1), cond(2, 0, 4)],
        vec![cond(4, 2, -2), cond(4, 1, 3), cond(4, 5, 0)],
        vec![cond(5, 3, 0), cond(5, 0, 1)],
        // Three columns in a row, each a range.
        vec![cond(2, 3, 1), cond(2, 1, 4), cond(0, 4, 1), cond(4, 0, 4), cond(4, 2, -4)],
    ] {
        let direct = handles(&s, conds.iter().map(Cond::expr).collect());
        let general = handles(&s, conds.iter().map(|c| wrapped(c.expr())).collect());
        assert!(!direct.is_empty() && direct.len() < rows.len(), "{conds:?}");
        assert_eq!(direct, general, "{conds:?}");
    }
}

/// A value that does not decode (an int of three bytes), in a row laid out as the others,
/// fails the request as the general path fails it; a decimal stored at another scale is
/// compared at its value.
#[test]
fn a_corrupt_value_fails_as_the_general_path_fails() {
    let row = |i: i64| Row {
        int: Some(i % 5),
        uint: None,
        day: Some(1),
        secs: None,
        cents: Some(i),
        date: Some(33),
        absent: None,
    };
    let mut pairs: Vec<(Vec<u8>, Vec<u8>)> =
        (0..3000).map(|i| (record_key(i as usize), encode(&row(i)))).collect();
    // Row 2500: an int of three bytes. Row 10: 1.000 as a DECIMAL(15,3).
    let mut enc = RowEncoder::new();
    enc.bytes(1, &[1, 2, 3]).null(2).time(3, datetime(1)).null(4);
    enc.decimal(5, &"3.456".parse().unwrap(), 15, 3).unwrap();
    let mut bad = Vec::new();
    enc.finish(&mut bad).unwrap();
    pairs[2500].1 = bad;
    let mut enc = RowEncoder::new();
    enc.int(1, 0).null(2).time(3, datetime(1)).null(4);
    enc.decimal(5, &"1.000".parse().unwrap(), 15, 3).unwrap();
    let mut scaled = Vec::new();
    enc.finish(&mut scaled).unwrap();
    pairs[10].1 = scaled;
    let s = MemStore::from_pairs(pairs.clone());
    let on_int = [Cond { c: 0, op: 3, k: 1, null: false, flip: false }];
    let direct = answer(&s, on_int.iter().map(Cond::expr).collect());
    let general = answer(&s, on_int.iter().map(|c| wrapped(c.expr())).collect());
    assert!(direct.is_err(), "{direct:?}");
    assert_eq!(direct, general);
    // `d = 1.00`: row 100 (handle 101), and row 10 (1.000, handle 11).
    let eq = func(142, ft(mt::LONG_LONG), vec![col(5, ft_dec(15, 2)), dec("1.00")]);
    let direct = answer(&s, vec![eq.clone()]);
    assert_eq!(direct, answer(&s, vec![wrapped(eq)]));
    assert_eq!(direct, Ok(vec![Datum::Int(11), Datum::Int(101)]));
    // Row 2000: a DATE with a time part (a DATE value may not have one).
    let mut enc = RowEncoder::new();
    enc.int(1, 0).null(2).time(3, datetime(1)).null(4);
    enc.decimal(5, &"1.00".parse().unwrap(), 15, 2).unwrap();
    enc.time(6, datetime(1));
    let mut timed = Vec::new();
    enc.finish(&mut timed).unwrap();
    pairs[2000].1 = timed;
    // Row 2200: laid out as the others (a 6-byte header, non-NULL ids 1 3 5 6, NULL ids 2 4,
    // then two bytes an offset), but the datetime's value ends before it starts.
    let mut crossed = encode(&row(2200));
    crossed[14..16].copy_from_slice(&[0, 0]);
    pairs[2200].1 = crossed;
    let s = MemStore::from_pairs(pairs);
    for c in [0, 5, 2] {
        // `x >= ...` on the int (row 2500), the date (row 2000), the datetime (row 2200).
        let on = [Cond { c, op: 3, k: 1, null: false, flip: false }];
        let direct = answer(&s, on.iter().map(Cond::expr).collect());
        let general = answer(&s, on.iter().map(|c| wrapped(c.expr())).collect());
        assert!(direct.is_err(), "column {c}: {direct:?}");
        assert_eq!(direct, general, "column {c}");
    }
}
