//! TPC-H Q1 and Q6 pushdowns over lineitem encoded as row v2 records (table 108, API v2
//! keyspace), read from memory through the scan trait. Throughput is lineitem rows scanned.
//!
//! The scale factor comes from the `RCOP_TPCH_SF` environment variable (default 0.1, about
//! 600 k lineitem rows, so dev and CI runs stay quick). `RCOP_TPCH_SF=1` runs the 6 M-row
//! lineitem of the TPC-H spec; it needs about 2 GB of memory and its setup (generating and
//! encoding the rows) takes a while before the first measurement:
//!
//! ```text
//! RCOP_TPCH_SF=1 cargo bench -p rcop-exec --bench tpch -- --warm-up-time 1 --measurement-time 4
//! ```

#![expect(clippy::expect_used, reason = "benchmark fixtures are known-valid")]

#[path = "../tests/support/mod.rs"]
mod support;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use prost::Message;
use rcop_exec::{Engine, KeyRange, KvBatch, MemStore, ScanSource, ScanStatus};
use rcop_proto::{coprocessor, tipb};
use support::dag::{request, table_range};
use support::tpch::{self, KEYSPACE, LINEITEM_ID};

/// Scale factor used when `RCOP_TPCH_SF` is not set (about 600 k lineitem rows).
const DEFAULT_SF: f64 = 0.1;

/// The scale factor from `RCOP_TPCH_SF`, or [`DEFAULT_SF`].
fn scale_factor() -> f64 {
    match std::env::var("RCOP_TPCH_SF") {
        Ok(v) => {
            let sf: f64 = v.trim().parse().expect("RCOP_TPCH_SF must be a number, e.g. 0.1 or 1");
            assert!(sf > 0.0 && sf.is_finite(), "RCOP_TPCH_SF must be positive, got {sf}");
            sf
        }
        Err(_) => DEFAULT_SF,
    }
}

fn bench(c: &mut Criterion) {
    let sf = scale_factor();
    let setup = std::time::Instant::now();
    let (store, lines) = tpch::lineitem(sf);
    eprintln!(
        "tpch: SF {sf}, {} lineitem rows, setup {:.1} s",
        lines.len(),
        setup.elapsed().as_secs_f64()
    );
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
    // The floor under both, measured in the same run: the same rows' bytes (keys and
    // values back to back, as the store holds them) read from memory once, one word per
    // 64-byte line. An engine that reads whole rows cannot scan faster than this.
    let rows = row_bytes(&store, &range);
    g.bench_function("read_rows", |b| b.iter(|| touch_lines(std::hint::black_box(&rows))));
    g.finish();
}

/// Every pair of `range` in `store`, keys and values back to back in key order.
fn row_bytes(store: &MemStore, range: &coprocessor::KeyRange) -> Vec<u8> {
    let mut scanner = store.scanner();
    let range = KeyRange::new(range.start.to_vec(), range.end.to_vec());
    scanner.start(&range, false).expect("start");
    let (mut out, mut batch) = (Vec::new(), KvBatch::new());
    loop {
        batch.clear();
        let status = scanner.next_batch(1024, &mut batch).expect("scan");
        for (k, v) in batch.iter() {
            out.extend_from_slice(k);
            out.extend_from_slice(v);
        }
        if matches!(status, ScanStatus::Done) {
            return out;
        }
    }
}

/// Reads one word of every 64-byte line of `bytes`, in order.
fn touch_lines(bytes: &[u8]) -> u64 {
    bytes.chunks(64).fold(0u64, |s, line| {
        let w = line.first_chunk::<8>().map_or(0, |w| u64::from_ne_bytes(*w));
        s.wrapping_add(w)
    })
}

criterion_group!(benches, bench);
criterion_main!(benches);
