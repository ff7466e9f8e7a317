//! Date kernels over one 1024-row batch of `l_shipdate` (TPC-H lineitem): `YEAR`,
//! `DATE_FORMAT` with a constant format, `DATE_ADD(d, INTERVAL 1 MONTH)`, `MONTH`,
//! `DAYOFWEEK`, `TO_DAYS`, `DATEDIFF(d, '1995-06-17')`, `LAST_DAY` and `MONTHNAME`, beside a
//! baseline measured in the same run (a date comparison with a constant, `d < '1995-01-01'`).
//! Throughput is rows.

#![expect(clippy::expect_used, reason = "benchmark fixtures are known-valid")]

#[path = "../tests/support/mod.rs"]
mod support;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rcop_datum::chunk::mysql_type as mt;
use rcop_exec::{EvalConfig, EvalContext, FieldType};
use support::dag::*;
use support::tpch;

fn bench(c: &mut Criterion) {
    let (store, _) = tpch::lineitem(0.002);
    let date = tipb_date();
    let cols = [(11, date.clone())];
    let mut batch = tpch::lineitem_batch(&store, &cols);
    let schema: Vec<FieldType> = cols.iter().map(|(_, f)| FieldType::from_proto(Some(f))).collect();
    batch.ensure(&[0], &EvalContext::default()).expect("decode");
    let cfg = EvalConfig::default();
    let build = |e| rcop_exec::build_expr(&e, &schema, &cfg, 100).expect("build");
    let baseline = build(func(
        104,
        ft(mt::LONG_LONG),
        vec![col(0, date.clone()), time("1995-01-01", mt::DATE, 0)],
    ));
    let year = build(func(6029, ft(mt::LONG_LONG), vec![col(0, date.clone())]));
    let date_format = build(func(
        6001,
        ft_str(-46),
        vec![col(0, date.clone()), string("%W, %M %D %Y (week %v)", -46)],
    ));
    let date_add =
        build(func(6098, date.clone(), vec![col(0, date.clone()), int(1), string("MONTH", -46)]));
    let int_of = |sig| build(func(sig, ft(mt::LONG_LONG), vec![col(0, date.clone())]));
    let (month, day_of_week, to_days) = (int_of(6017), int_of(6023), int_of(6077));
    let date_diff = build(func(
        6003,
        ft(mt::LONG_LONG),
        vec![col(0, date.clone()), time("1995-06-17", mt::DATE, 0)],
    ));
    let last_day = build(func(6084, date.clone(), vec![col(0, date.clone())]));
    let month_name = build(func(6018, ft_str(-46), vec![col(0, date.clone())]));
    let mut g = c.benchmark_group("time_kernels");
    g.throughput(Throughput::Elements(batch.len() as u64));
    for (name, node) in [
        ("baseline_date_lt_const", &baseline),
        ("year", &year),
        ("date_format_const", &date_format),
        ("date_add_month", &date_add),
        ("month", &month),
        ("day_of_week", &day_of_week),
        ("to_days", &to_days),
        ("date_diff_const", &date_diff),
        ("last_day", &last_day),
        ("month_name", &month_name),
    ] {
        g.bench_function(name, |b| {
            let mut ctx = EvalContext::default();
            b.iter(|| {
                rcop_exec::eval_expr(node, &batch, &mut ctx)
                    .expect("eval")
                    .into_col(node.et, batch.len())
            })
        });
    }
    g.finish();
}

fn tipb_date() -> rcop_proto::tipb::FieldType {
    rcop_proto::tipb::FieldType { decimal: Some(0), ..ft(mt::DATE) }
}

criterion_group!(benches, bench);
criterion_main!(benches);
