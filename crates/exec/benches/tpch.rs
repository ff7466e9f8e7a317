//! TPC-H Q1 and Q6 pushdowns over lineitem encoded as row v2 records (table 108, API v2
//! keyspace), read from memory through the scan trait. Throughput is lineitem rows scanned.

#![expect(clippy::expect_used, reason = "benchmark fixtures are known-valid")]

#[path = "../tests/support/mod.rs"]
mod support;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use prost::Message;
use rcop_exec::Engine;
use rcop_proto::tipb;
use support::dag::{request, table_range};
use support::tpch::{self, KEYSPACE, LINEITEM_ID};

/// Scale factor of the bench data (about 600 k lineitem rows).
const SF: f64 = 0.1;

fn bench(c: &mut Criterion) {
    let (store, lines) = tpch::lineitem(SF);
    let engine = Engine::default();
    let range = table_range(LINEITEM_ID, Some(KEYSPACE));
    let mut g = c.benchmark_group("tpch");
    g.throughput(Throughput::Elements(lines.len() as u64));
    g.sample_size(10);
    for (name, dag) in [("q6", tpch::q6(true)), ("q1", tpch::q1(true))] {
        let req = request(&dag, vec![range.clone()]);
        // Check the answer once before timing.
        let resp = engine.handle(&req, &mut store.scanner());
        let sel = tipb::SelectResponse::decode(resp.data).expect("response");
        assert!(sel.error.is_none(), "{:?}", sel.error);
        g.bench_function(name, |b| b.iter(|| engine.handle(&req, &mut store.scanner())));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
