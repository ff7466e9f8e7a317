//! Kernel properties over arbitrary inputs: no time kernel panics, and a batch of columns
//! gives, row by row, what the same rows give as constants (NULLs included).

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use rcop_datum::{Decimal, Duration, Time, TimeType};

use crate::column::{Scalar, VecCol};
use crate::ctx::{EvalConfig, EvalContext, FLAG_TRUNCATE_AS_WARNING};
use crate::expr::build::{Func, Meta, Node, NodeKind, default_ft};
use crate::expr::eval::eval_func;
use crate::expr::registry::{Args, registry};
use crate::expr::value::Value;
use crate::types::{EvalType, FieldType};

/// Every signature this module registers.
fn time_sigs() -> Vec<i32> {
    registry().iter().map(|d| d.sig).filter(|s| (6000..6200).contains(s)).collect()
}

fn arb_time() -> impl Strategy<Value = Time> {
    (0u32..10_000, 0u32..13, 0u32..32, 0u32..24, 0u32..60, 0u32..60, 0u32..1_000_000, 0u8..3)
        .prop_map(|(y, mo, d, h, mi, s, us, k)| {
            let tp = [TimeType::Date, TimeType::DateTime, TimeType::Timestamp][usize::from(k)];
            let (h, mi, s, us) = if tp == TimeType::Date { (0, 0, 0, 0) } else { (h, mi, s, us) };
            Time::from_parts(y, mo, d, h, mi, s, us, tp, 6).unwrap()
        })
}

fn arb_scalar(et: EvalType) -> BoxedStrategy<Scalar> {
    let v = match et {
        EvalType::Int => prop_oneof![any::<i64>(), -1000i64..1000, 19_000_101i64..20_991_231]
            .prop_map(Scalar::Int)
            .boxed(),
        EvalType::Real => {
            prop_oneof![any::<f64>(), -100.0f64..100.0].prop_map(Scalar::Real).boxed()
        }
        EvalType::Decimal => (-1_000_000i64..1_000_000, 0u8..4)
            .prop_map(|(v, f)| {
                let d = Decimal::from_i64(v);
                let scale = Decimal::from_i64(10i64.pow(u32::from(f)));
                Scalar::Decimal(d.div(&scale, f).map(|r| r.value()).unwrap_or(d))
            })
            .boxed(),
        EvalType::Bytes => prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..24),
            "[0-9: .%a-zA-Z-]{0,24}".prop_map(String::into_bytes),
            Just(b"2020-02-29 23:59:59.5".to_vec()),
            Just(b"838:59:59".to_vec()),
            Just(b"%Y-%m-%d %H:%i:%s.%f %U %u %V %v %X %x %j %D %W %M".to_vec()),
            // A week with a weekday fixes the date in STR_TO_DATE.
            Just(b"%X %V %W".to_vec()),
            Just(b"%Y %u %w".to_vec()),
            Just(b"9999 53 Sunday".to_vec()),
            Just(b"0000 1 1".to_vec()),
        ]
        .prop_map(Scalar::Bytes)
        .boxed(),
        EvalType::DateTime => arb_time().prop_map(Scalar::DateTime).boxed(),
        EvalType::Duration => (-3_020_399_000_000_000i64..=3_020_399_000_000_000, 0u8..7)
            .prop_map(|(n, f)| Scalar::Duration(Duration::from_nanos(n, f).unwrap()))
            .boxed(),
        // No time function takes JSON or ENUM arguments.
        EvalType::Json | EvalType::Enum | EvalType::VectorFloat32 => Just(Scalar::Null).boxed(),
    };
    prop_oneof![1 => Just(Scalar::Null), 6 => v].boxed()
}

const UNITS: [&str; 20] = [
    "MICROSECOND",
    "SECOND",
    "MINUTE",
    "HOUR",
    "DAY",
    "WEEK",
    "MONTH",
    "QUARTER",
    "YEAR",
    "SECOND_MICROSECOND",
    "MINUTE_MICROSECOND",
    "MINUTE_SECOND",
    "HOUR_MICROSECOND",
    "HOUR_SECOND",
    "HOUR_MINUTE",
    "DAY_MICROSECOND",
    "DAY_SECOND",
    "DAY_MINUTE",
    "DAY_HOUR",
    "YEAR_MONTH",
];

/// Runs `sig` over `rows` as columns and, row by row, as constants; both must agree.
fn check(
    sig: i32,
    rows: &[Vec<Scalar>],
    unit: usize,
    ret_duration: bool,
) -> Result<(), TestCaseError> {
    let def = registry().get(sig).unwrap();
    let types = def.args.example();
    let is_interval = (6092..=6143).contains(&sig);
    let et = if def.ret_by_ft && !ret_duration { EvalType::DateTime } else { def.ret };
    let ft = FieldType { decimal: 6, ..default_ft(et) };
    let children: Vec<Node> = types
        .iter()
        .enumerate()
        .map(|(i, t)| {
            if is_interval && i == 2 {
                Node {
                    kind: NodeKind::Const(Scalar::Bytes(UNITS[unit].into())),
                    ft: default_ft(*t),
                    et: *t,
                }
            } else {
                Node::column(i, default_ft(*t)).unwrap()
            }
        })
        .collect();
    let f = Func { sig, def, children, meta: Meta::None };
    let cfg = EvalConfig { flags: FLAG_TRUNCATE_AS_WARNING, ..EvalConfig::default() };
    let n = rows.len();
    let cols: Vec<Value<'_>> = types
        .iter()
        .enumerate()
        .map(|(i, t)| {
            if is_interval && i == 2 {
                return Value::Scalar(Scalar::Bytes(UNITS[unit].into()));
            }
            let mut c = VecCol::new(*t, n);
            for r in rows {
                c.push_scalar(&r[i]);
            }
            Value::Owned(c)
        })
        .collect();
    let mut ctx = EvalContext::new(cfg.clone());
    let batch = eval_func(&f, &ft, et, &cols, n, &mut ctx);
    for (ri, r) in rows.iter().enumerate() {
        let consts: Vec<Value<'_>> = types
            .iter()
            .enumerate()
            .map(|(i, _)| {
                if is_interval && i == 2 {
                    Value::Scalar(Scalar::Bytes(UNITS[unit].into()))
                } else {
                    Value::Scalar(r[i].clone())
                }
            })
            .collect();
        let one = eval_func(&f, &ft, et, &consts, 1, &mut EvalContext::new(cfg.clone()));
        if let (Ok(b), Ok(o)) = (&batch, &one) {
            // SYSDATE reads the clock: only its type is stable.
            if !matches!(sig, 6033 | 6034) {
                prop_assert_eq!(
                    format!("{:?}", b.scalar_at(ri)),
                    format!("{:?}", o.scalar_at(0)),
                    "sig {} row {:?}",
                    sig,
                    r
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn batches_equal_constants_and_nothing_panics(
        pick in any::<prop::sample::Index>(),
        unit in 0usize..20,
        ret_duration in any::<bool>(),
        seed in proptest::collection::vec(any::<u64>(), 1..2),
    ) {
        let sigs = time_sigs();
        let sig = sigs[pick.index(sigs.len())];
        let types = registry().get(sig).unwrap().args.example();
        let _ = seed;
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let row = types.iter().map(|t| arb_scalar(*t)).collect::<Vec<_>>();
        let rows = proptest::collection::vec(row, 1..12).new_tree(&mut runner).unwrap().current();
        check(sig, &rows, unit, ret_duration)?;
    }
}

#[test]
fn every_sig_is_checked_over_every_unit() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    for sig in time_sigs() {
        let def = registry().get(sig).unwrap();
        if matches!(def.args, Args::Fixed { len: 0, .. }) {
            continue;
        }
        let types = def.args.example();
        let row = types.iter().map(|t| arb_scalar(*t)).collect::<Vec<_>>();
        let units = if (6092..=6143).contains(&sig) { 20 } else { 1 };
        for unit in 0..units {
            for ret_duration in [false, true] {
                let rows = proptest::collection::vec(row.clone(), 8..16)
                    .new_tree(&mut runner)
                    .unwrap()
                    .current();
                check(sig, &rows, unit, ret_duration).unwrap();
            }
        }
    }
}

#[test]
fn sysdate_is_now_in_the_session_zone() {
    let def = registry().get(6033).unwrap();
    let children = vec![Node::column(0, default_ft(EvalType::Int)).unwrap()];
    let f = Func { sig: 6033, def, children, meta: Meta::None };
    let ft = FieldType { decimal: 3, ..default_ft(EvalType::DateTime) };
    let tz = rcop_datum::Tz::from_name("+05:00").unwrap();
    let mut ctx = EvalContext::new(EvalConfig { tz: tz.clone(), ..EvalConfig::default() });
    let before = Time::now(&tz, 6).unwrap();
    let out = eval_func(&f, &ft, EvalType::DateTime, &[Value::Scalar(Scalar::Int(3))], 2, &mut ctx)
        .unwrap();
    let after = Time::now(&tz, 6).unwrap();
    for i in 0..2 {
        let Scalar::DateTime(t) = out.scalar_at(i) else { panic!("not a time") };
        assert_eq!(t.fsp(), 3);
        assert_eq!(t.micro() % 1000, 0);
        assert!(
            before.round_frac(3).unwrap() >= t
                || t >= before.with_type(TimeType::DateTime, 0).unwrap()
        );
        assert!(t <= after, "{t} after {after}");
    }
    // A precision above 6 is an error, as MySQL's.
    assert!(
        eval_func(&f, &ft, EvalType::DateTime, &[Value::Scalar(Scalar::Int(7))], 1, &mut ctx)
            .is_err()
    );
}

#[test]
fn incorrect_datetime_messages_cut_at_a_character_boundary() {
    // 63 ASCII bytes then a two-byte character across byte 64 (found by the dag fuzzer:
    // `String::truncate` in the middle of a character panicked).
    let value = format!("{}é and more", "x".repeat(63));
    match super::incorrect_datetime(&value) {
        crate::error::Error::Truncated { value: v, .. } => assert_eq!(v, "x".repeat(63)),
        other => panic!("{other:?}"),
    }
    match super::incorrect_datetime("2024-13-01") {
        crate::error::Error::Truncated { value: v, .. } => assert_eq!(v, "2024-13-01"),
        other => panic!("{other:?}"),
    }
}
