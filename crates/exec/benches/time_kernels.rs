//! Date kernels over one 1024-row batch of `l_shipdate` (TPC-H lineitem): `YEAR`,
//! `DATE_FORMAT` with a constant format and `DATE_ADD(d, INTERVAL 1 MONTH)`, beside a
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
    let mut g = c.benchmark_group("time_kernels");
    g.throughput(Throughput::Elements(batch.len() as u64));
    for (name, node) in [
        ("baseline_date_lt_const", &baseline),
        ("year", &year),
        ("date_format_const", &date_format),
        ("date_add_month", &date_add),
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
