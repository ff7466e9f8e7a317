//! Executor benches over the `items` table (50 k rows, 5 columns: two ints, a string that is
//! NULL every 13th row, a decimal, a date), each through `Engine::execute_dag` from a
//! `MemStore`, against a baseline measured in the same run: the bare scan of every column,
//! TypeChunk encoded. Throughput is rows scanned.
//!
//! - `top_n_10`, `top_n_1000`: `ORDER BY name DESC, price LIMIT n`;
//! - `selection_projection`: `WHERE grp < 50` then `id + grp, price * price, name, day`;
//! - `limit_1000`, `limit_all`: `LIMIT n` over the scan (1000 stops the scan early);
//! - `scan_all_default`: the baseline's rows TypeDefault encoded (datums) instead of chunks;
//! - `paged_1024`: the baseline as a paging request of 1024 rows, page after page, each page
//!   resuming at the range the last one ended (50 pages), beside `scan_all_chunk` unpaged.
//!
//! The `like` group compares LIKE with a constant pattern, a column repeating one pattern
//! (compiled once per run of rows) and a column of distinct patterns (compiled per row), over
//! one 1024-row batch.
//!
//! ```text
//! cargo bench -p rcop-exec --bench executors
//! ```

#![expect(clippy::expect_used, reason = "benchmark fixtures are known-valid")]

#[path = "../tests/support/mod.rs"]
mod support;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rcop_datum::chunk::mysql_type as mt;
use rcop_exec::{
    Batch, BytesT, Elem, Engine, EvalConfig, EvalContext, EvalType, FieldType, KeyRange, MemStore,
    VecCol,
};
use rcop_proto::tipb;
use support::dag::*;
use support::items::{self, ITEMS_ID};

const ROWS: i64 = 50_000;
const PAGE: u64 = 1024;

/// Runs `d` over the whole table as a paging request of `PAGE` rows, page after page.
/// Returns the pages.
fn paged(engine: &Engine, d: &tipb::DagRequest, store: &MemStore) -> usize {
    let full = table_range(ITEMS_ID, None);
    let mut range = KeyRange::new(full.start.to_vec(), full.end.to_vec());
    let mut pages = 0;
    loop {
        let out = engine
            .execute_dag(d, std::slice::from_ref(&range), PAGE, &mut store.scanner())
            .expect("page");
        pages += 1;
        match out.scanned_range {
            Some(r) => range = KeyRange::new(r.end, full.end.to_vec()),
            None => return pages,
        }
    }
}

fn executors(c: &mut Criterion) {
    let store = items::items(ROWS);
    let ranges = items::items_ranges();
    let engine = Engine::default();
    let mut g = c.benchmark_group("executors");
    g.throughput(Throughput::Elements(ROWS as u64));
    g.sample_size(20);
    for (name, d) in [
        ("scan_all_chunk", items::scan_all_dag(true)),
        ("scan_all_default", items::scan_all_dag(false)),
        ("top_n_10", items::top_n_dag(10, true)),
        ("top_n_1000", items::top_n_dag(1000, true)),
        ("selection_projection", items::selection_projection_dag(true)),
        ("limit_1000", items::limit_dag(1000, true)),
        ("limit_all", items::limit_dag(ROWS as u64, true)),
    ] {
        // Checked once before timing.
        let out = engine.execute_dag(&d, &ranges, 0, &mut store.scanner()).expect("run");
        assert!(out.response.error.is_none(), "{name}: {:?}", out.response.error);
        g.bench_function(name, |b| {
            b.iter(|| engine.execute_dag(&d, &ranges, 0, &mut store.scanner()).expect("run"))
        });
    }
    let d = items::scan_all_dag(true);
    let pages = paged(&engine, &d, &store);
    assert_eq!(pages, (ROWS as usize).div_ceil(PAGE as usize), "one page per {PAGE} rows");
    g.bench_function("paged_1024", |b| b.iter(|| paged(&engine, &d, &store)));
    g.finish();
}

fn like(c: &mut Criterion) {
    const N: usize = 1024;
    let s = items::name_ft();
    let mut text = VecCol::new(EvalType::Bytes, N);
    let mut same = VecCol::new(EvalType::Bytes, N);
    let mut distinct = VecCol::new(EvalType::Bytes, N);
    for h in 0..N as i64 {
        BytesT::push(&mut text, items::name_of(h).as_deref().map(str::as_bytes));
        BytesT::push(&mut same, Some(b"%-1%a"));
        BytesT::push(&mut distinct, Some(format!("%-{}%a", h % 1000).as_bytes()));
    }
    let batch = Batch::from_cols(vec![text, same, distinct]);
    let schema = vec![FieldType::from_proto(Some(&s)); 3];
    let cfg = EvalConfig::default();
    let like = |pattern| {
        let e = func(
            4310,
            tipb::FieldType { collate: Some(-46), ..ft(mt::LONG_LONG) },
            vec![col(0, s.clone()), pattern, int(92)],
        );
        rcop_exec::build_expr(&e, &schema, &cfg, 100).expect("build")
    };
    let mut g = c.benchmark_group("like");
    g.throughput(Throughput::Elements(N as u64));
    for (name, node) in [
        ("constant_pattern", like(string("%-1%a", -46))),
        ("column_one_pattern", like(col(1, s.clone()))),
        ("column_distinct_patterns", like(col(2, s.clone()))),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut ctx = EvalContext::default();
                rcop_exec::eval_expr(&node, &batch, &mut ctx).expect("eval").into_col(node.et, N)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, executors, like);
criterion_main!(benches);
