//! The 22 TPC-H queries' pushdown tasks (`rcop_examples::tpch::pushdowns`) over go-tpc's
//! schema loaded with `[[load]] schema = "go-tpc"`, each run on the storage node's engine
//! and offloaded through a worker, both equal to DuckDB's answer of the task's SQL over the
//! same generated rows (`testdata/tpch/*.expected`, written by `tools/tpch-oracle.py`).
//!
//! In process: a node with every table and one worker sharing a local-directory store, all
//! tasks. As real processes: `rcop-storage-node` and `rcop-worker`, a few tasks including
//! the index scans and the stream aggregation.
#![expect(clippy::unwrap_used, clippy::panic, reason = "fixture setup and plumbing")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use prost::Message;
use rcop_examples::tpch::pushdowns::{self, Task};
use rcop_examples::tpch::schema;
use rcop_examples::{LoadSpec, NodeConfig, Path, StorageNode, dags};
use rcop_limiter::ReadableSize;
use rcop_proto::coprocessor;
use rcop_sst::SstStore;
use rcop_worker::{DfsConfig, Worker, WorkerConfig};

const KS: u32 = 1;

fn expected(task: &Task) -> Vec<String> {
    let path = format!("{}/../testdata/tpch/{}.expected", env!("CARGO_MANIFEST_DIR"), task.name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e} (run tools/tpch-oracle.py)"));
    pushdowns::parse_expected(&text, task.ordered)
}

/// Whether an answer may come from a worker that split the request: its partial
/// aggregates are then merged per group before the comparison, as TiDB merges them.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Parts {
    One,
    MaySplit,
}

fn check(task: &Task, how: &str, resp: &coprocessor::Response, parts: Parts) {
    assert!(resp.region_error.is_none(), "{} {how}: {:?}", task.name, resp.region_error);
    let got = match parts {
        Parts::One => pushdowns::format_rows(task, resp),
        Parts::MaySplit => pushdowns::format_rows_merged(task, resp),
    };
    let got = got.unwrap_or_else(|e| panic!("{how}: {e:#}"));
    let want = expected(task);
    if got != want {
        let missing: Vec<_> = want.iter().filter(|r| !got.contains(r)).take(5).collect();
        let extra: Vec<_> = got.iter().filter(|r| !want.contains(r)).take(5).collect();
        panic!(
            "{} {how}: {} rows, DuckDB {}; missing {missing:?}; unexpected {extra:?}",
            task.name,
            got.len(),
            want.len()
        );
    }
}

fn go_tpc(table: &str, tail: u64) -> LoadSpec {
    LoadSpec {
        table: table.into(),
        scale_factor: pushdowns::SCALE_FACTOR,
        memtable_tail: tail,
        schema: "go-tpc".into(),
        ..LoadSpec::default()
    }
}

/// Loads every table (the newest 100 rows of the last one stay in the memtable).
async fn load_all(node: &StorageNode) {
    let mut ts = dags::tso_now();
    for t in schema::TABLES {
        let tail = if t.name == "lineitem" { 100 } else { 0 };
        let report = node.load(&go_tpc(t.name, tail), ts, |_| {}).await.unwrap();
        ts = report.max_commit_ts + 10;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_task_local_and_offloaded_equals_duckdb() {
    let started = std::time::Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let dfs = DfsConfig::local(dir.path().join("sst"));
    let cfg = WorkerConfig::default()
        .with_addr(SocketAddr::from(([127, 0, 0, 1], 0)))
        .with_dfs(dfs.clone())
        .with_cop_block_cache_size(ReadableSize(32 << 20))
        // Heavy tasks split in two on the worker: their partial aggregates come back per
        // part and are merged here as TiDB merges them.
        .with_cop_parallelism(2)
        .with_cop_parallel_min_bytes(ReadableSize(256 << 10));
    // Two compute threads whatever the machine's cores, so heavy tasks can split.
    let worker =
        Worker::builder(cfg).compute_threads(2).build().unwrap().bind().await.unwrap().spawn();
    // Every request meets the threshold: even region's one block is offloaded.
    let kvengine = rcop_offload::Config::from_toml_str(&format!(
        "remote-coprocessor-addr = [\"http://{}\"]\nremote-coprocessor-min-blocks-size = \"1B\"",
        worker.local_addr()
    ))
    .unwrap();
    let cfg = NodeConfig { dfs: dfs.clone(), kvengine, ..NodeConfig::default() };
    let store = Arc::new(SstStore::from_config(&dfs.store_config()).unwrap());
    let node = Arc::new(StorageNode::new(&cfg, store).unwrap());
    load_all(&node).await;
    let loaded = started.elapsed();
    let tasks = pushdowns::all().unwrap();
    assert!(tasks.len() >= 40, "{} tasks", tasks.len());
    let mut queries: Vec<&str> = tasks.iter().map(|t| &t.name[..3]).collect();
    queries.dedup();
    assert_eq!(queries.len(), 22, "{queries:?}");
    let (mut remote, mut merged) = (0, 0);
    for task in &tasks {
        let req = pushdowns::request(task, KS, 1, dags::tso_now()).unwrap();
        let n = Arc::clone(&node);
        let r = req.clone();
        let local = tokio::task::spawn_blocking(move || n.execute_local(&r)).await.unwrap();
        check(task, "local", &local, Parts::One);
        let (resp, path, _) = node.handle(req).await;
        check(task, &format!("through the node ({path})"), &resp, Parts::MaySplit);
        let unmerged = pushdowns::format_rows(task, &resp).unwrap();
        if unmerged.len() > pushdowns::format_rows_merged(task, &resp).unwrap().len() {
            merged += 1;
        }
        if matches!(path, Path::Remote { .. }) {
            remote += 1;
        }
    }
    eprintln!(
        "{} tasks, {remote} offloaded, {merged} merged from parts: load {loaded:?}, total {:?}",
        tasks.len(),
        started.elapsed()
    );
    assert_eq!(remote, tasks.len(), "every task offloaded");
    let metrics = String::from_utf8(worker.worker().metrics().encode_text()).unwrap();
    let split = metrics
        .lines()
        .find_map(|l| l.strip_prefix("rcop_worker_split_requests_total ")?.parse::<f64>().ok());
    assert!(split.is_some_and(|n| n >= 5.0), "the heavy tasks ran in parts: {split:?}");
    assert!(merged >= 3, "partial aggregates of {merged} split answers merged per group");
    worker.shutdown().await.unwrap();
}

/// Kills the children we started if a test fails before they exit.
struct Children(Vec<Child>);

impl Drop for Children {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn spawn(bin: &str, config: &std::path::Path, children: &mut Children) -> String {
    let mut child = Command::new(bin)
        .arg("--config")
        .arg(config)
        .arg("--log")
        .arg("warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    children.0.push(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    line.trim().strip_prefix("listening on ").unwrap_or_else(|| panic!("{line:?}")).to_owned()
}

fn post(addr: &str, body: &[u8]) -> Vec<u8> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        s,
        "POST /coprocessor HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    s.write_all(body).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let head_end = out.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&out[..head_end]);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    out[head_end + 4..].to_vec()
}

fn get(addr: &str, path: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// The real binaries: the node loads four tables with `schema = "go-tpc"` and offloads to
/// a worker process; index scans of an int-handle and a clustered table, a stream
/// aggregation over the clustered primary key, and Q1's aggregation all come back as
/// DuckDB answers.
#[test]
fn two_processes_answer_like_duckdb() {
    let names = [
        "q01_lineitem",
        "q05_supplier_index",
        "q13_orders",
        "q16_partsupp_index",
        "q18_lineitem",
        "q22_orders_index",
    ];
    let tasks: Vec<Task> = pushdowns::all()
        .unwrap()
        .into_iter()
        .filter(|t| names.contains(&t.name.as_str()))
        .collect();
    assert_eq!(tasks.len(), names.len());
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sst");
    let mut children = Children(Vec::new());
    let worker_cfg = dir.path().join("worker.toml");
    std::fs::write(&worker_cfg, format!("addr = \"127.0.0.1:0\"\n[dfs]\nroot = {root:?}\n"))
        .unwrap();
    let worker = spawn(env!("CARGO_BIN_EXE_rcop-worker"), &worker_cfg, &mut children);
    let mut loads = String::new();
    for t in ["supplier", "partsupp", "orders", "lineitem"] {
        loads.push_str(&format!(
            "[[load]]\ntable = \"{t}\"\nscale-factor = {}\nmemtable-tail = 50\n\
             schema = \"go-tpc\"\n",
            pushdowns::SCALE_FACTOR
        ));
    }
    let node_cfg = dir.path().join("node.toml");
    std::fs::write(
        &node_cfg,
        format!(
            "addr = \"127.0.0.1:0\"\nkeyspace-id = {KS}\n[dfs]\nroot = {root:?}\n\
             [kvengine]\nremote-coprocessor-addr = \"http://{worker}\"\n\
             remote-coprocessor-min-blocks-size = \"1B\"\n{loads}"
        ),
    )
    .unwrap();
    let node = spawn(env!("CARGO_BIN_EXE_rcop-storage-node"), &node_cfg, &mut children);
    for task in &tasks {
        let req = pushdowns::request(task, KS, 1, dags::tso_now()).unwrap();
        let body = post(&node, &req.encode_to_vec());
        let resp = coprocessor::Response::decode(body.as_slice()).unwrap();
        check(task, "through the node process", &resp, Parts::MaySplit);
    }
    let metrics = get(&node, "/metrics");
    let remote = format!("rcop_offload_requests_total{{path=\"remote\"}} {}", tasks.len());
    assert!(metrics.contains(&remote), "{metrics}");
    let worker_metrics = get(&worker, "/metrics");
    let served =
        format!("tikv_worker_remote_cop_dag_request_counter{{path=\"http\"}} {}", tasks.len());
    assert!(worker_metrics.contains(&served), "{worker_metrics}");
}
