//! The Grafana dashboard in `docs/grafana/` queries only metrics a worker exports: every
//! metric name in its expressions is in `/metrics` of a worker that served a request.
#![expect(clippy::unwrap_used, reason = "test plumbing")]

use std::collections::BTreeSet;
use std::sync::Arc;

mod common;
use common::export;
use common::fixture::{
    agg_dag, build_shard, cop_request, get, memory_store, post, start, test_config,
};

/// The `"expr"` strings of a Grafana dashboard, read without a JSON parser (they hold no
/// escaped quotes).
fn exprs(json: &str) -> Vec<String> {
    json.split("\"expr\": \"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap().to_owned())
        .collect()
}

/// Metric names in a PromQL expression: identifiers of ours or upstream's prefixes, without
/// the histogram suffixes.
fn metric_names(expr: &str) -> BTreeSet<String> {
    expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| ["tikv_", "rcop_", "kv_engine_"].iter().any(|p| w.starts_with(p)))
        .map(|w| {
            ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| w.strip_suffix(s))
                .unwrap_or(w)
                .to_owned()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_metric_of_the_dashboard_exists() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/grafana/rcop-worker.json");
    let json = std::fs::read_to_string(path).unwrap();
    let exprs = exprs(&json);
    assert!(exprs.len() >= 10, "{} expressions", exprs.len());
    let names: BTreeSet<String> = exprs.iter().flat_map(|e| metric_names(e)).collect();

    let store = memory_store();
    let shard = build_shard(Arc::clone(&store)).await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config();
    config.data_dir = dir.path().to_path_buf();
    let handle = start(config, Arc::clone(&store), 1 << 30, 8 << 30).await;
    let addr = handle.local_addr();
    assert_eq!(post(addr, export(&shard, &cop_request(&agg_dag())), true).await.status, 200);
    let text = String::from_utf8(get(addr, "/metrics").await.body.to_vec()).unwrap();
    let exported: BTreeSet<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split(' ').next())
        .collect();
    let missing: Vec<&String> = names.iter().filter(|n| !exported.contains(n.as_str())).collect();
    assert!(missing.is_empty(), "the dashboard queries metrics no worker exports: {missing:?}");
    handle.shutdown().await.unwrap();
}
