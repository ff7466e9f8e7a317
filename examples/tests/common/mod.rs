//! Fixtures shared by the end-to-end tests.

use std::sync::Arc;

use rcop_examples::{LoadSpec, NodeConfig, StorageNode, dags};
use rcop_sst::SstStore;
use rcop_worker::{DfsConfig, WorkerHandle};

/// A storage node offloading to `workers` (256 KiB threshold, fast test backoff up to
/// `backoff_max`), loaded with TPC-H lineitem at SF 0.002 and a 250-row memtable tail.
pub async fn node(dfs: &DfsConfig, workers: &[&WorkerHandle], backoff_max: &str) -> StorageNode {
    let addrs: Vec<String> =
        workers.iter().map(|w| format!("\"http://{}\"", w.local_addr())).collect();
    node_with(
        dfs,
        &format!(
            "remote-coprocessor-addr = [{}]\nremote-coprocessor-min-blocks-size = \"256KiB\"\n\
             remote-coprocessor-backoff-base = \"10ms\"\nremote-coprocessor-backoff-max = \"{backoff_max}\"",
            addrs.join(", ")
        ),
    )
    .await
}

/// A storage node with `kvengine` as its `[kvengine]` section, loaded as [`node`] loads.
#[expect(clippy::unwrap_used, reason = "fixture setup: a failure should be loud")]
#[allow(dead_code, reason = "not every test binary uses every fixture")]
pub async fn node_with(dfs: &DfsConfig, kvengine: &str) -> StorageNode {
    let kvengine = rcop_offload::Config::from_toml_str(kvengine).unwrap();
    let cfg = NodeConfig { dfs: dfs.clone(), kvengine, ..NodeConfig::default() };
    let store = Arc::new(SstStore::from_config(&dfs.store_config()).unwrap());
    let node = StorageNode::new(&cfg, store).unwrap();
    let spec = LoadSpec { scale_factor: 0.002, memtable_tail: 250, ..LoadSpec::default() };
    node.load(&spec, dags::tso_now(), |_| {}).await.unwrap();
    node
}
