//! Property tests: every vectorised kernel agrees, row by row, with the independent
//! row-at-a-time reference evaluator, with NULLs and selection vectors.

#![expect(clippy::unwrap_used, reason = "fixture builders outside #[test] fns")]

mod support;

use proptest::prelude::*;
use rcop_datum::Decimal;
use rcop_datum::chunk::mysql_type as mt;
use rcop_exec::{Batch, EvalConfig, EvalContext, EvalType, FieldType, Scalar, VecCol};
use rcop_proto::tipb;
use support::dag::*;
use support::reference::{self, RV};

fn schema_tipb() -> Vec<tipb::FieldType> {
    vec![
        ft(mt::LONG_LONG),
        ft(mt::LONG_LONG),
        ft(mt::DOUBLE),
        ft(mt::DOUBLE),
        ft_dec(12, 2),
        ft_dec(12, 3),
        ft_str(-46),
        ft_str(63),
        tipb::FieldType { flag: Some(32), ..ft(mt::LONG_LONG) },
    ]
}

#[derive(Debug, Clone)]
struct Row {
    a: Option<i64>,
    b: Option<i64>,
    x: Option<f64>,
    y: Option<f64>,
    p: Option<i64>,
    q: Option<i64>,
    s: Option<String>,
    t: Option<String>,
    u: Option<u64>,
}

fn int_s() -> impl Strategy<Value = Option<i64>> {
    prop_oneof![1 => Just(None), 6 => (-20i64..20).prop_map(Some), 1 => prop_oneof![Just(i64::MAX), Just(i64::MIN), Just(0)].prop_map(Some)]
}

fn row() -> impl Strategy<Value = Row> {
    let real =
        prop_oneof![1 => Just(None), 5 => (-40i32..40).prop_map(|v| Some(f64::from(v) / 4.0))];
    let dec = prop_oneof![1 => Just(None), 5 => (-100_000i64..100_000).prop_map(Some)];
    let s = prop_oneof![1 => Just(None), 5 => "[ab %_]{0,4}".prop_map(Some)];
    let u = prop_oneof![1 => Just(None), 4 => (0u64..30).prop_map(Some), 1 => Just(Some(u64::MAX))];
    (int_s(), int_s(), real.clone(), real, dec.clone(), dec, s.clone(), s, u)
        .prop_map(|(a, b, x, y, p, q, s, t, u)| Row { a, b, x, y, p, q, s, t, u })
}

fn dec_of(v: i64, frac: u32) -> Decimal {
    let p = 10i64.pow(frac);
    let sign = if v < 0 { "-" } else { "" };
    format!("{sign}{}.{:0w$}", v.abs() / p, v.abs() % p, w = frac as usize).parse().unwrap()
}

fn columns(rows: &[Row]) -> Vec<VecCol> {
    let mut cols: Vec<VecCol> = [
        EvalType::Int,
        EvalType::Int,
        EvalType::Real,
        EvalType::Real,
        EvalType::Decimal,
        EvalType::Decimal,
        EvalType::Bytes,
        EvalType::Bytes,
        EvalType::Int,
    ]
    .iter()
    .map(|et| VecCol::new(*et, rows.len()))
    .collect();
    for r in rows {
        let vals = [
            r.a.map_or(Scalar::Null, Scalar::Int),
            r.b.map_or(Scalar::Null, Scalar::Int),
            r.x.map_or(Scalar::Null, Scalar::Real),
            r.y.map_or(Scalar::Null, Scalar::Real),
            r.p.map_or(Scalar::Null, |v| Scalar::Decimal(dec_of(v, 2))),
            r.q.map_or(Scalar::Null, |v| Scalar::Decimal(dec_of(v, 3))),
            r.s.clone().map_or(Scalar::Null, |v| Scalar::Bytes(v.into_bytes())),
            r.t.clone().map_or(Scalar::Null, |v| Scalar::Bytes(v.into_bytes())),
            r.u.map_or(Scalar::Null, |v| Scalar::Int(v as i64)),
        ];
        for (c, v) in cols.iter_mut().zip(&vals) {
            c.push_scalar(v);
        }
    }
    cols
}

fn rv_row(r: &Row) -> Vec<RV> {
    vec![
        r.a.map_or(RV::Null, |v| RV::Int(v, false)),
        r.b.map_or(RV::Null, |v| RV::Int(v, false)),
        r.x.map_or(RV::Null, RV::Real),
        r.y.map_or(RV::Null, RV::Real),
        r.p.map_or(RV::Null, |v| RV::Dec(dec_of(v, 2))),
        r.q.map_or(RV::Null, |v| RV::Dec(dec_of(v, 3))),
        r.s.clone().map_or(RV::Null, |v| RV::Str(v.into_bytes())),
        r.t.clone().map_or(RV::Null, |v| RV::Str(v.into_bytes())),
        r.u.map_or(RV::Null, |v| RV::Int(v as i64, true)),
    ]
}

fn to_rv(s: Scalar, unsigned: bool) -> RV {
    match s {
        Scalar::Null => RV::Null,
        Scalar::Int(v) => RV::Int(v, unsigned),
        Scalar::Real(v) => RV::Real(v),
        Scalar::Decimal(d) => RV::Dec(d),
        Scalar::Bytes(b) => RV::Str(b),
        Scalar::DateTime(t) => RV::Time(t),
        Scalar::Duration(d) => RV::Dur(d),
        Scalar::Json(_) | Scalar::Enum(..) | Scalar::Vector(_) => {
            unreachable!("the schema has no JSON, ENUM or VECTOR")
        }
    }
}

/// Every kernel family over the schema (a, b int; x, y real; p, q decimal; s utf8mb4_bin,
/// t binary strings; u unsigned).
fn exprs() -> Vec<tipb::Expr> {
    let s = schema_tipb();
    let c = |i: usize| col(i as i64, s[i].clone());
    let b = || ft(mt::LONG_LONG);
    let mut out = Vec::new();
    for base in [100, 110, 120, 130, 140, 150, 160] {
        out.push(func(base, b(), vec![c(0), c(1)]));
        out.push(func(base, b(), vec![c(0), int(3)]));
        out.push(func(base + 1, b(), vec![c(2), c(3)]));
        out.push(func(base + 2, b(), vec![c(4), c(5)]));
        out.push(func(base + 2, b(), vec![dec("1.5"), c(4)]));
        out.push(func(base + 3, tipb::FieldType { collate: Some(-46), ..b() }, vec![c(6), c(7)]));
        out.push(func(
            base + 3,
            tipb::FieldType { collate: Some(63), ..b() },
            vec![c(6), string("a ", 63)],
        ));
        out.push(func(base, b(), vec![c(8), c(0)]));
    }
    let uns = tipb::FieldType { flag: Some(32), ..b() };
    for sig in [203, 207, 210, 213, 217] {
        out.push(func(sig, b(), vec![c(0), c(1)]));
    }
    for sig in [203, 207, 210, 213] {
        out.push(func(sig, uns.clone(), vec![c(8), c(0)]));
    }
    out.push(func(217, uns.clone(), vec![c(8), c(1)]));
    for sig in [200, 204, 208, 211, 215] {
        out.push(func(sig, ft(mt::DOUBLE), vec![c(2), c(3)]));
    }
    for sig in [201, 205, 209, 212, 216] {
        out.push(func(sig, ft_dec(30, 7), vec![c(4), c(5)]));
    }
    // +, - and * with a constant on either side (each shape has its own fixed-point loop).
    for sig in [201, 205, 209] {
        out.push(func(sig, ft_dec(30, 7), vec![c(4), dec("1.5")]));
        out.push(func(sig, ft_dec(30, 7), vec![dec("-2.25"), c(5)]));
        out.push(func(sig, ft_dec(30, 7), vec![c(4), c(4)]));
    }
    out.push(func(214, b(), vec![c(4), c(5)]));
    for sig in [3101, 3102, 3103] {
        out.push(func(sig, b(), vec![c(0), c(1)]));
    }
    out.push(func(3104, b(), vec![c(0)]));
    out.push(func(3105, b(), vec![c(4)]));
    out.push(func(3106, b(), vec![c(2)]));
    out.push(func(3108, b(), vec![c(0)]));
    out.push(func(3109, ft(mt::DOUBLE), vec![c(2)]));
    out.push(func(3110, ft_dec(12, 2), vec![c(4)]));
    for (sig, i) in [(3116, 0), (3113, 2), (3111, 4), (3114, 6)] {
        out.push(func(sig, b(), vec![c(i)]));
    }
    for (sig, i) in [
        (3122, 0),
        (3123, 2),
        (3124, 4),
        (3125, 0),
        (3126, 2),
        (3127, 4),
        (3142, 0),
        (3146, 2),
        (3147, 4),
    ] {
        out.push(func(sig, b(), vec![c(i)]));
    }
    out.push(func(4001, b(), vec![c(0), int(1), int(-3), c(1)]));
    out.push(func(4001, b(), vec![c(0), int(1), null(ft(mt::LONG_LONG))]));
    out.push(func(4003, b(), vec![c(4), dec("1.5"), c(5)]));
    out.push(func(
        4004,
        tipb::FieldType { collate: Some(-46), ..b() },
        vec![c(6), string("a", -46), c(7)],
    ));
    out.push(func(4101, b(), vec![c(0), c(1)]));
    out.push(func(4104, ft_str(-46), vec![c(6), c(7)]));
    out.push(func(4107, b(), vec![c(0), c(0), c(1)]));
    out.push(func(4109, ft_dec(12, 3), vec![c(1), c(4), c(5)]));
    out.push(func(4201, b(), vec![c(0), c(1), int(9)]));
    out.push(func(4208, b(), vec![c(0), int(1), c(1), int(2), int(3)]));
    out.push(func(4211, ft_str(-46), vec![c(0), c(6), c(1), c(7)]));
    out.push(func(
        4310,
        tipb::FieldType { collate: Some(-46), ..b() },
        vec![c(6), string("a%", -46), int(92)],
    ));
    out.push(func(4310, tipb::FieldType { collate: Some(-46), ..b() }, vec![c(6), c(7), int(92)]));
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn kernels_agree_with_row_at_a_time_evaluation(rows in proptest::collection::vec(row(), 1..40), keep in proptest::collection::vec(any::<bool>(), 40)) {
        let schema: Vec<FieldType> = schema_tipb().iter().map(|f| FieldType::from_proto(Some(f))).collect();
        // Decimal columns as `Decimal`s, or (half the time) as fixed point.
        let cols = columns(&rows);
        let cols = if keep[1] { cols.into_iter().map(VecCol::into_fixed).collect() } else { cols };
        let mut batch = Batch::from_cols(cols);
        // A selection vector: either every row, or a subset (exercises the gather path).
        if keep[0] {
            batch.logical = (0..rows.len() as u32).filter(|&i| keep[i as usize % keep.len()]).collect();
        }
        let dag = tipb::DagRequest::default();
        for e in exprs() {
            let node = rcop_exec::build_expr(&e, &schema, &EvalConfig::default(), 100).unwrap();
            let mut ctx = EvalContext::default();
            let got = rcop_exec::eval_expr(&node, &batch, &mut ctx).map(|v| v.into_col(node.et, batch.len()));
            let unsigned = node.ft.is_unsigned();
            let mut want = Vec::new();
            let mut ref_err = false;
            for &r in &batch.logical {
                match reference::eval(&e, &rv_row(&rows[r as usize]), &dag) {
                    Ok(v) => want.push(v),
                    Err(_) => ref_err = true,
                }
            }
            match got {
                Err(err) => prop_assert!(ref_err, "engine failed ({err}) where the reference did not: {e:?}"),
                Ok(col) => {
                    prop_assert!(!ref_err, "reference failed where the engine did not: {e:?}");
                    let got: Vec<RV> = (0..batch.len()).map(|i| to_rv(col.scalar_at(i), unsigned)).collect();
                    let norm = |v: &RV| match v {
                        RV::Int(x, _) => RV::Int(*x, false),
                        RV::Real(x) if *x == 0.0 => RV::Real(0.0),
                        o => o.clone(),
                    };
                    let g: Vec<RV> = got.iter().map(norm).collect();
                    let w: Vec<RV> = want.iter().map(norm).collect();
                    prop_assert_eq!(g, w, "sig {:?}", e.sig);
                }
            }
        }
    }
}

/// LIKE over a pattern column compiles a pattern once per run of rows that repeat it; a
/// change of pattern or of escape (same pattern bytes) compiles again.
#[test]
fn like_with_column_patterns_recompiles_when_the_pattern_or_escape_changes() {
    let s = ft_str(-46);
    let i = ft(mt::LONG_LONG);
    let rows: [(&str, &str, i64, i64); 9] = [
        ("ab", "a%", 92, 1),
        ("xb", "a%", 92, 0),
        ("a", "a%", 92, 1),
        ("ab", "%b", 92, 1),
        ("ba", "%b", 92, 0),
        ("ba", "a%", 92, 0),
        // The same bytes under two escapes: `#` makes `%` literal, `\` does not.
        ("a%", "a#%", i64::from(b'#'), 1),
        ("a%", "a#%", 92, 0),
        ("a#z", "a#%", 92, 1),
    ];
    let mut text = VecCol::new(EvalType::Bytes, rows.len());
    let mut pattern = VecCol::new(EvalType::Bytes, rows.len());
    let mut escape = VecCol::new(EvalType::Int, rows.len());
    for (t, p, e, _) in rows {
        text.push_scalar(&Scalar::Bytes(t.as_bytes().to_vec()));
        pattern.push_scalar(&Scalar::Bytes(p.as_bytes().to_vec()));
        escape.push_scalar(&Scalar::Int(e));
    }
    let batch = Batch::from_cols(vec![text, pattern, escape]);
    let schema: Vec<FieldType> =
        [&s, &s, &i].iter().map(|f| FieldType::from_proto(Some(f))).collect();
    let e = func(
        4310,
        tipb::FieldType { collate: Some(-46), ..ft(mt::LONG_LONG) },
        vec![col(0, s.clone()), col(1, s.clone()), col(2, i.clone())],
    );
    let node = rcop_exec::build_expr(&e, &schema, &EvalConfig::default(), 100).unwrap();
    let got = rcop_exec::eval_expr(&node, &batch, &mut EvalContext::default())
        .unwrap()
        .into_col(node.et, batch.len());
    let want: Vec<Scalar> = rows.iter().map(|r| Scalar::Int(r.3)).collect();
    assert_eq!((0..rows.len()).map(|k| got.scalar_at(k)).collect::<Vec<_>>(), want);
}
