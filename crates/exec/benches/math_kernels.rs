//! Scalar kernels of the math, bit, crypto and regexp families over one 1024-row batch:
//! ROUND(double, 2), ROUND(decimal, 1), `a & b`, MD5(str) and REGEXP_LIKE(str, constant),
//! with two baselines measured in the same run: a plain column reference (the cost of
//! producing the result column) and LIKE with a constant pattern. Throughput is rows.

#![expect(clippy::expect_used, reason = "benchmark fixtures are known-valid")]

#[path = "../tests/support/mod.rs"]
mod support;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rcop_datum::Decimal;
use rcop_datum::chunk::mysql_type as mt;
use rcop_exec::{Batch, EvalConfig, EvalContext, FieldType, Scalar, VecCol};
use support::dag::*;

const N: usize = 1024;

fn column(et: rcop_exec::EvalType, values: impl Iterator<Item = Scalar>) -> VecCol {
    let mut c = VecCol::new(et, N);
    for v in values {
        c.push_scalar(&v);
    }
    c
}

fn bench(c: &mut Criterion) {
    use rcop_exec::EvalType as E;
    let real = column(E::Real, (0..N).map(|i| Scalar::Real(i as f64 * 1.0137 - 300.5)));
    let ints = column(E::Int, (0..N).map(|i| Scalar::Int((i as i64) * 7919)));
    let dec = column(
        E::Decimal,
        (0..N).map(|i| {
            let d: Decimal = format!("{}.{:02}", i * 13, i % 100).parse().expect("decimal");
            Scalar::Decimal(d)
        }),
    );
    let text = column(
        E::Bytes,
        (0..N).map(|i| {
            let s = format!("Customer#{i:09} carefully final requests {}", i % 17);
            Scalar::Bytes(s.into_bytes())
        }),
    );
    let batch = Batch::from_cols(vec![real, ints, dec, text]);
    let (f_real, f_int, f_dec, f_str) =
        (ft(mt::DOUBLE), ft(mt::LONG_LONG), ft_dec(15, 2), ft_str(46));
    let schema: Vec<FieldType> =
        [&f_real, &f_int, &f_dec, &f_str].iter().map(|f| FieldType::from_proto(Some(f))).collect();
    let cfg = EvalConfig::default();
    let build = |e| rcop_exec::build_expr(&e, &schema, &cfg, 100).expect("build");
    let exprs = [
        ("baseline_column_ref", build(col(0, f_real.clone()))),
        (
            "baseline_like_const",
            build(func(
                4310,
                ft(mt::LONG_LONG),
                vec![col(3, f_str.clone()), string("%final%requests%", 46), int(92)],
            )),
        ),
        (
            "round_real_frac",
            build(func(2124, ft(mt::DOUBLE), vec![col(0, f_real.clone()), int(2)])),
        ),
        (
            "round_decimal_frac",
            build(func(2126, ft_dec(15, 1), vec![col(2, f_dec.clone()), int(1)])),
        ),
        (
            "bit_and",
            build(func(3118, ft(mt::LONG_LONG), vec![col(1, f_int.clone()), int(0xff_ff)])),
        ),
        ("md5", build(func(4504, ft_str(46), vec![col(3, f_str.clone())]))),
        (
            "regexp_like_const",
            build(func(
                4313,
                ft(mt::LONG_LONG),
                vec![col(3, f_str.clone()), string("final +requests [0-9]+$", 46)],
            )),
        ),
    ];
    let mut g = c.benchmark_group("math_kernels");
    g.throughput(Throughput::Elements(N as u64));
    for (name, node) in &exprs {
        g.bench_function(*name, |b| {
            let mut ctx = EvalContext::default();
            b.iter(|| {
                rcop_exec::eval_expr(node, &batch, &mut ctx).expect("eval").into_col(node.et, N)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
