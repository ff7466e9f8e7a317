//! Selection applies `column op constant` over integers (signed and unsigned), decimals,
//! datetimes and durations straight to its selection vector. Differential: every such condition keeps
//! exactly the rows the general path keeps for the same comparison wrapped in `AND 1`
//! (which the direct form does not take), over columns with NULLs, both operand orders,
//! every operator but `<=>`, NULL constants, and two conditions in a row (the second sees a
//! selection that is no longer every row).

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
}

fn datetime(day: u8) -> Time {
    Time::parse(&format!("2024-01-{:02} 10:00:00", day % 28 + 1), TimeType::DateTime, 0).unwrap()
}

fn duration(secs: i64) -> Duration {
    Duration::from_nanos(secs * 1_000_000_000, 0).unwrap()
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
    )
        .prop_map(|(int, uint, day, secs, cents)| Row { int, uint, day, secs, cents })
}

fn store(rows: &[Row]) -> MemStore {
    MemStore::from_pairs(rows.iter().enumerate().map(|(i, r)| {
        let mut k = Vec::new();
        key::encode_record_key(&mut k, TID, i as i64 + 1);
        let mut enc = RowEncoder::new();
        match r.int {
            Some(v) => enc.int(1, v),
            None => enc.null(1),
        };
        match r.uint {
            Some(v) => enc.uint(2, v),
            None => enc.null(2),
        };
        match r.day {
            Some(d) => enc.time(3, datetime(d)),
            None => enc.null(3),
        };
        match r.secs {
            Some(s) => enc.duration(4, duration(s)),
            None => enc.null(4),
        };
        match r.cents {
            Some(c) => {
                enc.decimal(5, &cents(c), 15, 2).unwrap();
            }
            None => {
                enc.null(5);
            }
        }
        let mut v = Vec::new();
        enc.finish(&mut v).unwrap();
        (k, v)
    }))
}

/// A comparison of column `c` (0 int, 1 uint, 2 datetime, 3 duration, 4 decimal) with
/// constant `k` (a decimal of `k % 4` fraction digits: three is finer than the column's)
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
    (0usize..5, 0i32..6, -4i64..5, prop::bool::weighted(0.1), any::<bool>())
        .prop_map(|(c, op, k, null, flip)| Cond { c, op, k, null, flip })
}

impl Cond {
    fn expr(&self) -> tipb::Expr {
        let (f, ty) = match self.c {
            0 => (ft(mt::LONG_LONG), 0),
            1 => (ft_u(), 0),
            2 => (ft_time(), 4),
            3 => (ft_dur(), 5),
            _ => (ft_dec(15, 2), 2),
        };
        let column = col(self.c as i64 + 1, f.clone());
        let konst = if self.null {
            null(f)
        } else {
            match self.c {
                0 => int(self.k),
                1 => {
                    let mut b = Vec::new();
                    codec::encode_u64(&mut b, self.k.unsigned_abs());
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
    let l = ft(mt::LONG_LONG);
    let cols = vec![
        column_info(-1, &l, true),
        column_info(1, &l, false),
        column_info(2, &ft_u(), false),
        column_info(3, &ft_time(), false),
        column_info(4, &ft_dur(), false),
        column_info(5, &ft_dec(15, 2), false),
    ];
    let d = dag(vec![scan(TID, cols, false), selection(conds)], vec![0], false);
    let resp =
        Engine::default().handle(&request(&d, vec![table_range(TID, None)]), &mut store.scanner());
    let sel = tipb::SelectResponse::decode(resp.data.clone()).unwrap();
    assert!(resp.other_error.is_empty() && sel.error.is_none(), "{:?}", sel.error);
    default_rows(&sel, 1).into_iter().flatten().collect()
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
    ) {
        let s = store(&rows);
        let conds: Vec<Cond> = std::iter::once(a).chain(b).collect();
        let direct = handles(&s, conds.iter().map(Cond::expr).collect());
        let general = handles(&s, conds.iter().map(|c| wrapped(c.expr())).collect());
        prop_assert_eq!(direct, general);
    }
}

#[test]
fn a_date_range_keeps_the_rows_inside_it() {
    let rows: Vec<Row> = (0..10u8)
        .map(|d| Row { int: None, uint: None, day: Some(d), secs: None, cents: None })
        .collect();
    let s = store(&rows);
    // 2024-01-03 <= t AND t < 2024-01-06 (the constant first in the first condition).
    let ge = Cond { c: 2, op: 1, k: 2, null: false, flip: true };
    let lt = Cond { c: 2, op: 0, k: 5, null: false, flip: false };
    let got = handles(&s, vec![ge.expr(), lt.expr()]);
    assert_eq!(got, [Datum::Int(3), Datum::Int(4), Datum::Int(5)]);
}
