//! Hot-path benches: row v2 column decode, selection kernels, decimal multiply-add and hash
//! aggregation. Throughput is rows.

#![expect(clippy::expect_used, reason = "benchmark fixtures are known-valid")]

#[path = "../tests/support/mod.rs"]
mod support;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rcop_datum::chunk::mysql_type as mt;
use rcop_datum::key;
use rcop_datum::row::RowEncoder;
use rcop_exec::{Engine, EvalConfig, EvalContext, FieldType, KeyRange, MemStore};
use support::dag::*;
use support::tpch;

fn bench(c: &mut Criterion) {
    let (store, _) = tpch::lineitem(0.002);
    let dec = ft_dec(15, 2);
    let date = tipb_date();
    let cols = [(5, dec.clone()), (6, dec.clone()), (7, dec.clone()), (11, date.clone())];
    let raw = tpch::lineitem_batch(&store, &cols);
    let n = raw.len() as u64;
    let schema: Vec<FieldType> = cols.iter().map(|(_, f)| FieldType::from_proto(Some(f))).collect();
    let ctx0 = EvalContext::default();

    let mut g = c.benchmark_group("kernels");
    g.throughput(Throughput::Elements(n));
    g.bench_function("row_v2_decode_decimal_and_date", |b| {
        b.iter(|| {
            let mut batch = raw.clone();
            batch.ensure(&[1, 3], &ctx0).expect("decode");
            batch
        })
    });

    let mut decoded = raw.clone();
    decoded.ensure(&[0, 1, 2, 3], &ctx0).expect("decode");
    let cfg = EvalConfig::default();
    let build = |e| rcop_exec::build_expr(&e, &schema, &cfg, 100).expect("build");
    let lt_date = build(func(
        104,
        ft(mt::LONG_LONG),
        vec![col(3, date.clone()), time("1995-01-01", mt::DATE, 0)],
    ));
    let ge_dec =
        build(func(132, ft(mt::LONG_LONG), vec![col(2, dec.clone()), support::dag::dec("0.05")]));
    let mul_add = build(func(
        201,
        ft_dec(33, 4),
        vec![
            func(209, ft_dec(30, 4), vec![col(1, dec.clone()), col(2, dec.clone())]),
            col(0, dec.clone()),
        ],
    ));
    for (name, node) in [
        ("select_date_lt_const", &lt_date),
        ("select_decimal_ge_const", &ge_dec),
        ("decimal_multiply_add", &mul_add),
    ] {
        g.bench_function(name, |b| {
            let mut ctx = EvalContext::default();
            b.iter(|| {
                rcop_exec::eval_expr(node, &decoded, &mut ctx)
                    .expect("eval")
                    .into_col(node.et, decoded.len())
            })
        });
    }
    g.finish();

    // Hash aggregation: 100 k rows, 1000 groups, COUNT and SUM.
    let tid = 300;
    let rows = 100_000i64;
    let agg_store = MemStore::from_pairs((1..=rows).map(|h| {
        let mut k = Vec::new();
        key::encode_record_key(&mut k, tid, h);
        let mut v = Vec::new();
        RowEncoder::new().int(1, h % 1000).int(2, h).finish(&mut v).expect("row");
        (k, v)
    }));
    let f = ft(mt::LONG_LONG);
    let d = dag(
        vec![
            scan(tid, vec![column_info(1, &f, false), column_info(2, &f, false)], false),
            aggregation(
                vec![col(0, f.clone())],
                vec![
                    agg(3001, f.clone(), vec![int(1)]),
                    agg(3002, ft_dec(65, 0), vec![col(1, f.clone())]),
                ],
            ),
        ],
        vec![0, 1, 2],
        true,
    );
    let range = table_range(tid, None);
    let ranges = [KeyRange::new(range.start.to_vec(), range.end.to_vec())];
    let engine = Engine::default();
    let mut g = c.benchmark_group("aggregation");
    g.throughput(Throughput::Elements(rows as u64));
    g.sample_size(10);
    g.bench_function("hash_agg_1000_groups", |b| {
        b.iter(|| engine.execute_dag(&d, &ranges, 0, &mut agg_store.scanner()).expect("agg"))
    });
    g.finish();
}

fn tipb_date() -> rcop_proto::tipb::FieldType {
    rcop_proto::tipb::FieldType { decimal: Some(0), ..ft(mt::DATE) }
}

criterion_group!(benches, bench);
criterion_main!(benches);
