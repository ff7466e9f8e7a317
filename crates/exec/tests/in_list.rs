//! `x IN (c1, …, cN)` with a constant list is hashed once per request. The hashed path must
//! answer exactly what the item-by-item comparison answers: the same list given as columns
//! (which keeps the comparison) is the model, over random targets and lists with NULLs,
//! signed and UNSIGNED integers, `-0.0`, decimals of several scales, times, durations and
//! strings (invalid UTF-8 included) under every collation family.

#![expect(clippy::unwrap_used, clippy::panic, reason = "fixture builders outside #[test] fns")]

mod support;

use proptest::prelude::*;
use prost::Message;
use rcop_datum::chunk::mysql_type as mt;
use rcop_datum::{Datum, Decimal, Duration, Time, TimeType, codec, key};
use rcop_exec::{
    Batch, EvalConfig, EvalContext, EvalType, FieldType, MemStore, Scalar, VecCol, build_expr,
    eval_expr,
};
use rcop_proto::tipb;
use support::dag::*;

#[derive(Debug, Clone, Copy)]
enum Kind {
    Int,
    Real,
    Decimal,
    Bytes(i32),
    Time,
    Duration,
}

impl Kind {
    fn sig(self) -> i32 {
        match self {
            Kind::Int => 4001,
            Kind::Real => 4002,
            Kind::Decimal => 4003,
            Kind::Bytes(_) => 4004,
            Kind::Time => 4005,
            Kind::Duration => 4006,
        }
    }

    fn et(self) -> EvalType {
        match self {
            Kind::Int => EvalType::Int,
            Kind::Real => EvalType::Real,
            Kind::Decimal => EvalType::Decimal,
            Kind::Bytes(_) => EvalType::Bytes,
            Kind::Time => EvalType::DateTime,
            Kind::Duration => EvalType::Duration,
        }
    }

    fn ft(self, unsigned: bool) -> tipb::FieldType {
        match self {
            Kind::Int if unsigned => tipb::FieldType { flag: Some(32), ..ft(mt::LONG_LONG) },
            Kind::Int => ft(mt::LONG_LONG),
            Kind::Real => ft(mt::DOUBLE),
            Kind::Decimal => ft_dec(20, 4),
            Kind::Bytes(c) => ft_str(c),
            Kind::Time => tipb::FieldType { decimal: Some(6), ..ft(mt::DATETIME) },
            Kind::Duration => tipb::FieldType { decimal: Some(6), ..ft(mt::DURATION) },
        }
    }
}

/// A small pool of values per kind, so targets and items often meet.
fn value(kind: Kind) -> BoxedStrategy<Scalar> {
    let v = match kind {
        Kind::Int => prop_oneof![
            (-3i64..4).prop_map(Scalar::Int),
            Just(Scalar::Int(i64::MIN)),
            Just(Scalar::Int(i64::MAX)),
        ]
        .boxed(),
        Kind::Real => prop_oneof![
            (-3i32..4).prop_map(|v| Scalar::Real(f64::from(v) / 2.0)),
            Just(Scalar::Real(-0.0)),
            Just(Scalar::Real(1e300)),
        ]
        .boxed(),
        Kind::Decimal => (-30i64..30, 0usize..4)
            .prop_map(|(v, frac)| {
                // The same value at several scales: 1.5, 1.50, 1.500 are one value.
                let text = format!("{:.*}", frac, v as f64 / 4.0);
                Scalar::Decimal(text.parse::<Decimal>().unwrap())
            })
            .boxed(),
        Kind::Bytes(_) => prop_oneof![
            4 => "[aAbB éÉ]{0,3}".prop_map(|s| Scalar::Bytes(s.into_bytes())),
            1 => proptest::collection::vec(
                proptest::sample::select(vec![b'a', b' ', 0xC3, 0xA9, 0xFF]),
                0..4
            )
            .prop_map(Scalar::Bytes),
        ]
        .boxed(),
        Kind::Time => (0u32..4, 0u32..3)
            .prop_map(|(d, us)| {
                let t = format!("2024-01-0{} 00:00:00.00000{us}", d + 1);
                Scalar::DateTime(Time::parse(&t, TimeType::DateTime, 6).unwrap())
            })
            .boxed(),
        Kind::Duration => (-3i64..4)
            .prop_map(|s| Scalar::Duration(Duration::from_nanos(s * 500_000, 6).unwrap()))
            .boxed(),
    };
    prop_oneof![1 => Just(Scalar::Null), 6 => v].boxed()
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Int),
        Just(Kind::Real),
        Just(Kind::Decimal),
        Just(Kind::Time),
        Just(Kind::Duration),
        proptest::sample::select(vec![63, -46, -45, -224, -255, -28, -87]).prop_map(Kind::Bytes),
    ]
}

/// A tipb constant of `s` typed `f`.
fn constant(s: &Scalar, f: &tipb::FieldType) -> tipb::Expr {
    let unsigned = f.flag.unwrap_or(0) & 32 != 0;
    let mut val = Vec::new();
    let tp = match s {
        Scalar::Null => 0,
        Scalar::Int(v) if unsigned => {
            codec::encode_u64(&mut val, *v as u64);
            2
        }
        Scalar::Int(v) => {
            codec::encode_i64(&mut val, *v);
            1
        }
        Scalar::Real(v) => {
            codec::encode_f64(&mut val, *v);
            4
        }
        Scalar::Decimal(d) => return dec(&d.to_string()),
        Scalar::Bytes(b) => {
            val.clone_from(b);
            6
        }
        Scalar::DateTime(t) => {
            codec::encode_u64(&mut val, t.to_packed_u64());
            107
        }
        Scalar::Duration(d) => {
            codec::encode_i64(&mut val, d.nanos());
            103
        }
        other => panic!("no constant of {other:?}"),
    };
    tipb::Expr {
        tp: Some(tp),
        val: Some(val.into()),
        field_type: Some(f.clone()),
        ..Default::default()
    }
}

/// Evaluates `target IN (items)` over the rows `targets`: with the items as constants
/// (hashed) and as columns of the batch (compared one by one).
fn both(
    kind: Kind,
    target_unsigned: bool,
    targets: &[Scalar],
    items: &[(Scalar, bool)],
) -> (Vec<Scalar>, Vec<Scalar>) {
    let n = targets.len();
    let t_ft = kind.ft(target_unsigned);
    let call_ft = match kind {
        Kind::Bytes(c) => tipb::FieldType { collate: Some(c), ..ft(mt::LONG_LONG) },
        _ => ft(mt::LONG_LONG),
    };
    let mut schema = vec![FieldType::from_proto(Some(&t_ft))];
    let mut cols = vec![column(kind.et(), targets)];
    let mut as_consts = vec![col(0, t_ft.clone())];
    let mut as_cols = vec![col(0, t_ft)];
    for (k, (s, u)) in items.iter().enumerate() {
        let f = kind.ft(*u);
        as_consts.push(constant(s, &f));
        as_cols.push(col(k as i64 + 1, f.clone()));
        schema.push(FieldType::from_proto(Some(&f)));
        cols.push(column(kind.et(), &vec![s.clone(); n]));
    }
    let mut batch = Batch::from_cols(cols);
    batch.logical = (0..n as u32).collect();
    batch.physical_len = n;
    let cfg = EvalConfig::default();
    let eval = |children: Vec<tipb::Expr>| {
        let node =
            build_expr(&func(kind.sig(), call_ft.clone(), children), &schema, &cfg, 100).unwrap();
        let mut ctx = EvalContext::new(cfg.clone());
        let v = eval_expr(&node, &batch, &mut ctx).unwrap();
        (0..n).map(|i| v.scalar_at(i)).collect::<Vec<_>>()
    };
    let hashed = eval(as_consts);
    let compared = eval(as_cols);
    (hashed, compared)
}

fn column(et: EvalType, vals: &[Scalar]) -> VecCol {
    let mut c = VecCol::new(et, vals.len());
    vals.iter().for_each(|v| c.push_scalar(v));
    c
}

fn case() -> impl Strategy<Value = (Kind, bool, Vec<Scalar>, Vec<(Scalar, bool)>)> {
    kind().prop_flat_map(|k| {
        (
            Just(k),
            any::<bool>(),
            proptest::collection::vec(value(k), 1..24),
            proptest::collection::vec((value(k), any::<bool>()), 0..40),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn hashed_in_equals_item_by_item((k, tu, targets, items) in case()) {
        let (hashed, compared) = both(k, tu, &targets, &items);
        prop_assert_eq!(hashed, compared, "{:?} targets {:?} items {:?}", k, targets, items);
    }
}

#[test]
fn signed_and_unsigned_items_meet_by_value() {
    let max = Scalar::Int(-1); // 2^64 - 1 when UNSIGNED
    let mut items: Vec<(Scalar, bool)> = (10..20).map(|v| (Scalar::Int(v), false)).collect();
    items.push((max.clone(), true));
    // A signed -1 is not the unsigned 2^64 - 1; an unsigned target of those bits is.
    let (h, c) = both(Kind::Int, false, &[max.clone(), Scalar::Int(12)], &items);
    assert_eq!(h, [Scalar::Int(0), Scalar::Int(1)]);
    assert_eq!(h, c);
    let (h, _) = both(Kind::Int, true, &[max], &items);
    assert_eq!(h, [Scalar::Int(1)]);
    // No match and a NULL in the list: NULL.
    items.push((Scalar::Null, false));
    let (h, _) = both(Kind::Int, false, &[Scalar::Int(99), Scalar::Null], &items);
    assert_eq!(h, [Scalar::Null, Scalar::Null]);
}

#[test]
fn strings_meet_under_their_collation() {
    let items: Vec<(Scalar, bool)> = ["x", "y", "z", "w", "v", "u", "t", "CAFÉ "]
        .iter()
        .map(|s| (Scalar::Bytes(s.as_bytes().to_vec()), false))
        .collect();
    let t = [Scalar::Bytes("cafe".as_bytes().to_vec()), Scalar::Bytes(b"CAF".to_vec())];
    // utf8mb4_general_ci: case, accents and trailing spaces do not count.
    let (h, c) = both(Kind::Bytes(-45), false, &t, &items);
    assert_eq!(h, [Scalar::Int(1), Scalar::Int(0)]);
    assert_eq!(h, c);
    let (h, _) = both(Kind::Bytes(-46), false, &t, &items);
    assert_eq!(h, [Scalar::Int(0), Scalar::Int(0)]);
}

/// Table 3: `n` rows of `c1 BIGINT = i`.
fn table(n: i64) -> MemStore {
    MemStore::from_pairs((0..n).map(|i| {
        let mut k = Vec::new();
        key::encode_record_key(&mut k, 3, i + 1);
        let mut v = Vec::new();
        rcop_datum::row::encode_row_v1(&[(1, Datum::Int(i))], &mut v).unwrap();
        (k, v)
    }))
}

#[test]
fn a_hundred_thousand_constants_over_many_rows() {
    // Every even number below 200,000: half the rows match. Compared item by item this is
    // 60,000 × 100,000 comparisons; hashed, one lookup a row.
    let c1 = col(0, ft(mt::LONG_LONG));
    let mut children = vec![c1];
    children.extend((0..100_000).map(|v| int(2 * v)));
    let cond = func(4001, ft(mt::LONG_LONG), children);
    let d = dag(
        vec![
            scan(3, vec![column_info(1, &ft(mt::LONG_LONG), false)], false),
            selection(vec![cond]),
        ],
        vec![0],
        false,
    );
    let store = table(60_000);
    let resp = rcop_exec::Engine::default()
        .handle(&request(&d, vec![table_range(3, None)]), &mut store.scanner());
    let sel = tipb::SelectResponse::decode(resp.data).unwrap();
    assert!(sel.error.is_none(), "{:?}", sel.error);
    assert_eq!(default_rows(&sel, 1).len(), 30_000);
}
