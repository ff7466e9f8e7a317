//! Property tests of the math, bit, control, regexp, crypto and misc kernels: on arbitrary
//! ints, reals and bytes (NULLs mixed in) no kernel panics, and a batch evaluates row for
//! row as the same arguments given as constants, one row at a time (errors included: a
//! batch fails exactly when one of its rows does).

use proptest::prelude::*;
use rcop_datum::codec;
use rcop_proto::tipb;

use crate::column::{Scalar, VecCol};
use crate::ctx::{EvalConfig, EvalContext, FLAG_OVERFLOW_AS_WARNING, FLAG_TRUNCATE_AS_WARNING};
use crate::expr::build::{NodeKind, build, default_ft};
use crate::expr::eval::eval_func;
use crate::expr::registry::{Args, registry};
use crate::expr::value::Value;
use crate::types::{EvalType, FieldType};

/// The signatures of these categories.
fn sigs() -> Vec<i32> {
    let ranges = [2101..=2157, 3118..=3130, 4215..=4226, 4311..=4320, 4503..=4510, 4554..=4569];
    let r = registry();
    ranges.into_iter().flatten().chain(7067..=7076).filter(|s| r.get(*s).is_some()).collect()
}

/// Every argument list of `args` made of ints, reals and bytes only.
fn arg_lists(args: &Args) -> Vec<Vec<EvalType>> {
    let lists = match *args {
        Args::Fixed { .. } | Args::CaseWhen(_) | Args::Pairs(..) | Args::Any(_) => {
            vec![args.example()]
        }
        Args::Variadic(t) => vec![vec![t; 1], vec![t; 3]],
        Args::Headed(h, t) => vec![vec![h, t], vec![h, t, t, t]],
        Args::Prefix { types, min, len } => {
            (min..=len).map(|n| types.get(..usize::from(n)).unwrap_or(&[]).to_vec()).collect()
        }
    };
    lists
        .into_iter()
        .filter(|l| l.iter().all(|t| matches!(t, EvalType::Int | EvalType::Real | EvalType::Bytes)))
        .collect()
}

fn tipb_ft(et: EvalType) -> tipb::FieldType {
    let f = default_ft(et);
    let collate = if et == EvalType::Bytes { 63 } else { -63 };
    tipb::FieldType { tp: Some(i32::from(f.tp)), collate: Some(collate), ..Default::default() }
}

fn scalar(et: EvalType) -> impl Strategy<Value = Scalar> {
    let int =
        prop_oneof![-70i64..70, Just(i64::MIN), Just(i64::MAX), Just(0x7f00_0001), any::<i64>()]
            .prop_map(Scalar::Int);
    let real = prop_oneof![-5.0f64..5.0, -1e300f64..1e300, Just(0.0), Just(-0.0), Just(1e308)]
        .prop_map(Scalar::Real);
    let text = prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..24),
        proptest::collection::vec(prop::sample::select(&b"ab1.:f-(*)[]^$|\\9 x"[..]), 0..16),
        Just(b"::ffff:1.2.3.4".to_vec()),
        Just(b"x\x9c".to_vec()),
    ]
    .prop_map(Scalar::Bytes);
    let v = match et {
        EvalType::Int => int.boxed(),
        EvalType::Real => real.boxed(),
        _ => text.boxed(),
    };
    prop_oneof![1 => Just(Scalar::Null), 4 => v]
}

fn rows(types: Vec<EvalType>) -> impl Strategy<Value = Vec<Vec<Scalar>>> {
    let row: Vec<_> = types.into_iter().map(scalar).collect();
    proptest::collection::vec(row, 1..12)
}

/// Evaluates `sig` over `rows` as columns and row by row as constants, with argument and
/// result field types from `tipb_ft`: both must succeed or fail alike, and agree.
pub(super) fn check_with(
    tipb_ft: fn(EvalType) -> tipb::FieldType,
    sig: i32,
    types: &[EvalType],
    rows: &[Vec<Scalar>],
) {
    let def = registry().get(sig).unwrap();
    let e = tipb::Expr {
        tp: Some(10000),
        sig: Some(sig),
        children: (0..types.len())
            .map(|i| {
                let mut v = Vec::new();
                codec::encode_i64(&mut v, i as i64);
                tipb::Expr {
                    tp: Some(201),
                    val: Some(v.into()),
                    field_type: Some(tipb_ft(types[i])),
                    ..Default::default()
                }
            })
            .collect(),
        field_type: Some(tipb_ft(def.ret)),
        ..Default::default()
    };
    let schema: Vec<FieldType> =
        types.iter().map(|t| FieldType::from_proto(Some(&tipb_ft(*t)))).collect();
    let cfg = EvalConfig {
        flags: FLAG_TRUNCATE_AS_WARNING | FLAG_OVERFLOW_AS_WARNING,
        ..Default::default()
    };
    let node = build(&e, &schema, &cfg, 10).unwrap();
    let NodeKind::Func(f) = &node.kind else { panic!("not a call") };
    let cols: Vec<VecCol> = (0..types.len())
        .map(|c| {
            let mut col = VecCol::new(types[c], rows.len());
            for r in rows {
                col.push_scalar(&r[c]);
            }
            col
        })
        .collect();
    let args: Vec<Value<'_>> = cols.iter().map(Value::Ref).collect();
    let mut ctx = EvalContext::new(cfg.clone());
    let batch = eval_func(f, &node.ft, node.et, &args, rows.len(), &mut ctx);
    let random = matches!(sig, 2135 | 4506 | 4569);
    let mut any_err = false;
    for (i, r) in rows.iter().enumerate() {
        let consts: Vec<Value<'_>> = r.iter().map(|s| Value::Scalar(s.clone())).collect();
        let mut ctx = EvalContext::new(cfg.clone());
        match eval_func(f, &node.ft, node.et, &consts, 1, &mut ctx) {
            Err(_) => any_err = true,
            Ok(one) => {
                assert_eq!(one.len(), 1, "{sig}: one row");
                if let Ok(b) = &batch
                    && !random
                {
                    assert_eq!(b.scalar_at(i), one.scalar_at(0), "{sig} row {i} of {rows:?}");
                }
            }
        }
    }
    match batch {
        Ok(b) => {
            assert_eq!(b.len(), rows.len(), "{sig}: batch rows");
            assert!(!any_err, "{sig}: a row fails alone but not in its batch: {rows:?}");
        }
        Err(e) => assert!(any_err, "{sig}: the batch fails ({e}) but no row does: {rows:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn kernels_are_total_and_vectorised_equals_constant((sig, types, rs) in case()) {
        check_with(tipb_ft, sig, &types, &rs);
    }
}

/// A signature, one of its argument lists, and rows of such arguments.
fn case() -> impl Strategy<Value = (i32, Vec<EvalType>, Vec<Vec<Scalar>>)> {
    let all: Vec<(i32, Vec<EvalType>)> = sigs()
        .into_iter()
        .flat_map(|s| {
            let def = registry().get(s).unwrap();
            arg_lists(&def.args).into_iter().map(move |l| (s, l))
        })
        .collect();
    prop::sample::select(all).prop_flat_map(|(s, t)| (Just(s), Just(t.clone()), rows(t)))
}

/// Every signature and argument list, once each, with a fixed set of rows.
#[test]
fn every_signature_runs_on_edge_rows() {
    assert!(sigs().len() > 90, "{} signatures", sigs().len());
    for s in sigs() {
        for types in arg_lists(&registry().get(s).unwrap().args) {
            let pick = |t: EvalType, k: usize| match (t, k) {
                (_, 0) => Scalar::Null,
                (EvalType::Int, 1) => Scalar::Int(i64::MIN),
                (EvalType::Int, 2) => Scalar::Int(1),
                (EvalType::Int, _) => Scalar::Int(-1),
                (EvalType::Real, 1) => Scalar::Real(-0.0),
                (EvalType::Real, 2) => Scalar::Real(1e308),
                (EvalType::Real, _) => Scalar::Real(0.5),
                (_, 1) => Scalar::Bytes(Vec::new()),
                (_, 2) => Scalar::Bytes(b"a".to_vec()),
                (_, _) => Scalar::Bytes(vec![0xff, 0, b'(']),
            };
            let rows: Vec<Vec<Scalar>> =
                (0..4).map(|k| types.iter().map(|t| pick(*t, k)).collect()).collect();
            check_with(tipb_ft, s, &types, &rows);
        }
    }
}

/// The non-deterministic and argument-less functions: their properties, not their values.
#[test]
fn pi_rand_uuid_random_bytes_properties() {
    use std::collections::HashSet;
    let run = |sig: i32, args: Vec<Scalar>, n: usize| {
        let def = registry().get(sig).unwrap();
        let e = tipb::Expr {
            tp: Some(10000),
            sig: Some(sig),
            children: args
                .iter()
                .map(|a| {
                    let mut v = Vec::new();
                    let Scalar::Int(x) = a else { panic!("int args only") };
                    codec::encode_i64(&mut v, *x);
                    tipb::Expr {
                        tp: Some(1),
                        val: Some(v.into()),
                        field_type: Some(tipb_ft(EvalType::Int)),
                        ..Default::default()
                    }
                })
                .collect(),
            field_type: Some(tipb_ft(def.ret)),
            ..Default::default()
        };
        let cfg = EvalConfig::default();
        let node = build(&e, &[], &cfg, 10).unwrap();
        let NodeKind::Func(f) = &node.kind else { panic!("not a call") };
        let vals: Vec<Value<'_>> = args.into_iter().map(Value::Scalar).collect();
        let col = eval_func(f, &node.ft, node.et, &vals, n, &mut EvalContext::new(cfg)).unwrap();
        (0..n).map(|i| col.scalar_at(i)).collect::<Vec<_>>()
    };
    assert!(run(2150, vec![], 3).iter().all(|v| *v == Scalar::Real(std::f64::consts::PI)));
    let r = run(2135, vec![], 1000);
    assert!(r.iter().all(|v| matches!(v, Scalar::Real(x) if (0.0..1.0).contains(x))));
    assert!(r.iter().collect::<Vec<_>>().windows(2).any(|w| w[0] != w[1]));
    let u = run(4569, vec![], 100);
    let mut seen = HashSet::new();
    for v in &u {
        let Scalar::Bytes(b) = v else { panic!("uuid is a string") };
        let s = std::str::from_utf8(b).unwrap();
        assert_eq!(s.len(), 36, "{s}");
        for (i, ch) in s.chars().enumerate() {
            if matches!(i, 8 | 13 | 18 | 23) {
                assert_eq!(ch, '-');
            } else {
                assert!(ch.is_ascii_hexdigit() && !ch.is_ascii_uppercase(), "{s}");
            }
        }
        assert_eq!(&s[14..15], "1", "version 1: {s}");
        assert!(matches!(&s[19..20], "8" | "9" | "a" | "b"), "RFC 4122 variant: {s}");
        assert!(seen.insert(s.to_string()), "duplicate {s}");
    }
    for len in [1, 17, 1024] {
        let b = run(4506, vec![Scalar::Int(len)], 2);
        assert!(b.iter().all(|v| matches!(v, Scalar::Bytes(x) if x.len() == len as usize)));
    }
    assert_ne!(run(4506, vec![Scalar::Int(32)], 1), run(4506, vec![Scalar::Int(32)], 1));
}
