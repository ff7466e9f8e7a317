//! The storage node, the worker and the quickstart as real processes on loopback.
#![expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "process and socket plumbing in test helpers"
)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use prost::Message;
use rcop_examples::dags;
use rcop_proto::{coprocessor, tipb};

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
    spawn_lines(bin, config, children, 1).pop().unwrap()
}

/// Starts `bin` and reads its first `lines` stdout lines, each `… listening on <addr>`;
/// returns the addresses in order.
fn spawn_lines(
    bin: &str,
    config: &std::path::Path,
    children: &mut Children,
    lines: usize,
) -> Vec<String> {
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
    let mut stdout = BufReader::new(stdout);
    (0..lines)
        .map(|_| {
            let mut line = String::new();
            stdout.read_line(&mut line).unwrap();
            let (_, addr) =
                line.trim().split_once("listening on ").unwrap_or_else(|| panic!("{line:?}"));
            addr.to_owned()
        })
        .collect()
}

fn http(addr: &str, method: &str, path: &str, body: &[u8]) -> (u16, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    s.write_all(body).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let head_end = out.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&out[..head_end]).into_owned();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, out[head_end + 4..].to_vec())
}

/// A worker process and a storage-node process (TPC-H lineitem at SF 0.002, 300 rows left in
/// the memtable) sharing a local-directory store, plus the same data loaded in this process
/// for reference answers. `worker_extra` / `node_extra` are added to their configs.
struct Cluster {
    _dir: tempfile::TempDir,
    _children: Children,
    worker: String,
    node: String,
    local: rcop_examples::StorageNode,
}

fn cluster(worker_extra: &str, node_extra: &str) -> Cluster {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sst");
    let mut children = Children(Vec::new());
    let worker_cfg = dir.path().join("worker.toml");
    std::fs::write(
        &worker_cfg,
        format!("addr = \"127.0.0.1:0\"\n{worker_extra}\n[dfs]\nroot = {root:?}\n"),
    )
    .unwrap();
    let worker = spawn(env!("CARGO_BIN_EXE_rcop-worker"), &worker_cfg, &mut children);
    let node_cfg = dir.path().join("node.toml");
    std::fs::write(
        &node_cfg,
        format!(
            "addr = \"127.0.0.1:0\"\nkeyspace-id = 1\n[dfs]\nroot = {root:?}\n\
             [kvengine]\nremote-coprocessor-addr = \"http://{worker}\"\n{node_extra}\n\
             [[load]]\nsource = \"tpch\"\ntable = \"lineitem\"\nscale-factor = 0.002\nmemtable-tail = 300\n"
        ),
    )
    .unwrap();
    let node = spawn(env!("CARGO_BIN_EXE_rcop-storage-node"), &node_cfg, &mut children);
    let reference = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let store = std::sync::Arc::new(
        rcop_sst::SstStore::from_config(
            &rcop_sst::StoreConfig::default().with_backend(rcop_sst::Backend::Memory),
        )
        .unwrap(),
    );
    let local =
        rcop_examples::StorageNode::new(&rcop_examples::NodeConfig::default(), store).unwrap();
    let spec =
        rcop_examples::LoadSpec { scale_factor: 0.002, memtable_tail: 300, ..Default::default() };
    reference.block_on(local.load(&spec, dags::tso_now(), |_| {})).unwrap();
    Cluster { _dir: dir, _children: children, worker, node, local }
}

#[test]
fn storage_node_offloads_to_a_worker_process_and_answers_like_local() {
    let Cluster { worker, node, local, .. } = &cluster(
        "cop-block-cache-size = \"32MiB\"",
        "remote-coprocessor-min-blocks-size = \"256KiB\"",
    );
    let (worker, node) = (worker.as_str(), node.as_str());
    let prefix = rcop_examples::tpch::keyspace_prefix(1).unwrap();
    let mut answers = Vec::new();
    for query in [dags::q6().unwrap(), dags::selective().unwrap()] {
        let req = dags::request(&query, 1, &prefix, 1, dags::tso_now());
        let (status, body) = http(node, "POST", "/coprocessor", &req.encode_to_vec());
        assert_eq!(status, 200);
        let resp = coprocessor::Response::decode(body.as_slice()).unwrap();
        assert!(resp.other_error.is_empty() && resp.region_error.is_none(), "{resp:?}");
        let expected = local.execute_local(&req);
        assert_eq!(resp.data, expected.data, "{} differs from local execution", query.name);
        let sel = tipb::SelectResponse::decode(resp.data).unwrap();
        assert!(sel.error.is_none(), "{:?}", sel.error);
        answers.push(sel);
    }
    // Q6 returns one row; the selective scan a few.
    assert_eq!(answers[0].chunks.iter().filter(|c| c.rows_data.is_some()).count(), 1);
    let (_, metrics) = http(node, "GET", "/metrics", b"");
    let metrics = String::from_utf8(metrics).unwrap();
    assert!(metrics.contains("rcop_offload_requests_total{path=\"remote\"} 1"), "{metrics}");
    assert!(metrics.contains("rcop_offload_requests_total{path=\"local\"} 1"));
    let (_, worker_metrics) = http(worker, "GET", "/metrics", b"");
    let worker_metrics = String::from_utf8(worker_metrics).unwrap();
    assert!(worker_metrics.contains("tikv_worker_remote_cop_dag_request_counter{path=\"http\"} 1"));
    // A malformed request to the node is a 400, and the node keeps serving.
    assert_eq!(http(node, "POST", "/coprocessor", b"\xff\xff\xff").0, 400);
    assert_eq!(http(node, "GET", "/healthz", b"").0, 200);
}

/// The rows of a TypeDefault response, whatever its chunking.
fn rows(sel: &tipb::SelectResponse) -> Vec<rcop_datum::Datum> {
    sel.chunks
        .iter()
        .flat_map(|c| rcop_datum::Datum::decode_all(c.rows_data.as_deref().unwrap_or(&[])).unwrap())
        .collect()
}

fn metric(metrics: &str, series: &str) -> u64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(series).map(|v| v.trim().parse().unwrap()))
        .unwrap_or(0)
}

/// Over the real binaries: a DAG the worker cannot run stays on the node (the metric names
/// the reason) and answers like local execution; a non-paging answer several times the
/// worker's `cop-max-resp-size` comes back whole, not cut at the first page.
#[test]
fn unsupported_dags_stay_local_and_non_paging_answers_come_back_whole() {
    let Cluster { worker, node, local, .. } =
        &cluster("cop-max-resp-size = \"64KiB\"", "remote-coprocessor-min-blocks-size = \"64KiB\"");
    let (worker, node) = (worker.as_str(), node.as_str());
    let prefix = rcop_examples::tpch::keyspace_prefix(1).unwrap();

    // The wide scan: ~12,000 rows of four columns, several 64 KiB pages.
    let req = dags::request(&dags::wide_scan(), 1, &prefix, 1, dags::tso_now());
    assert_eq!(req.paging_size, 0, "a non-paging request");
    let (status, body) = http(node, "POST", "/coprocessor", &req.encode_to_vec());
    assert_eq!(status, 200);
    let resp = coprocessor::Response::decode(body.as_slice()).unwrap();
    assert!(resp.other_error.is_empty() && resp.region_error.is_none(), "{resp:?}");
    assert!(resp.range.is_none(), "a non-paging answer carries no range");
    assert!(resp.data.len() > 4 * (64 << 10), "{} bytes: several pages", resp.data.len());
    let got = tipb::SelectResponse::decode(resp.data).unwrap();
    let want = tipb::SelectResponse::decode(local.execute_local(&req).data).unwrap();
    let (got_rows, want_rows) = (rows(&got), rows(&want));
    assert_eq!(want_rows.len() % 4, 0);
    assert!(want_rows.len() / 4 > 10_000, "{} rows", want_rows.len() / 4);
    assert!(got_rows == want_rows, "the assembled answer differs from local execution");
    assert_eq!(got.output_counts, want.output_counts);

    // AES_ENCRYPT: the worker cannot run it, so the node does.
    let req = dags::request(&dags::unsupported_filter(), 1, &prefix, 1, dags::tso_now());
    let (status, body) = http(node, "POST", "/coprocessor", &req.encode_to_vec());
    assert_eq!(status, 200);
    let resp = coprocessor::Response::decode(body.as_slice()).unwrap();
    assert_eq!(resp.data, local.execute_local(&req).data);

    let (_, metrics) = http(node, "GET", "/metrics", b"");
    let metrics = String::from_utf8(metrics).unwrap();
    assert!(metric(&metrics, "rcop_offload_resumed_pages_total") >= 3, "{metrics}");
    assert_eq!(
        metric(&metrics, "rcop_offload_local_total{reason=\"unsupported_scalar_func\"}"),
        1,
        "{metrics}"
    );
    assert_eq!(metric(&metrics, "rcop_offload_requests_total{path=\"remote\"}"), 1);
    let (_, worker_metrics) = http(worker, "GET", "/metrics", b"");
    let worker_metrics = String::from_utf8(worker_metrics).unwrap();
    let pages = metric(&metrics, "rcop_offload_resumed_pages_total") + 1;
    assert_eq!(
        metric(&worker_metrics, "tikv_worker_remote_cop_dag_request_counter{path=\"http\"}"),
        pages
    );
}

#[test]
fn quickstart_runs_and_local_equals_offloaded() {
    let out = Command::new(env!("CARGO_BIN_EXE_quickstart"))
        .args(["--scale-factor", "0.002", "--min-blocks-size", "256KiB", "--memtable-tail", "300"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    for q in ["== Q1 ==", "== Q6 ==", "== filter+TopN ==", "== selective =="] {
        assert!(stdout.contains(q), "{q} missing:\n{stdout}");
    }
    assert!(stdout.contains("decision: offloaded"), "{stdout}");
    assert!(stdout.contains("decision: local"), "{stdout}");
    assert!(stdout.contains("all results identical"), "{stdout}");
    assert!(!stdout.contains("!="), "{stdout}");
    // Dates print as dates; columns are named; the summary is a table.
    assert!(stdout.contains("| 1998-"), "{stdout}");
    assert!(stdout.contains("| sum_qty ") && stdout.contains("| revenue"), "{stdout}");
    assert!(stdout.contains("| query ") && stdout.contains("| Q6 "), "{stdout}");
    assert!(!stdout.contains("| NO "), "{stdout}");
}

/// The first way over real processes: a storage-node process serving `DelegateCoprocessor`
/// on `grpc-addr`, a worker process serving `cop-addr` with `[delegate] stores` naming it,
/// and a tonic client playing TiDB. Q6 equals local execution; then the node process is
/// killed (SIGKILL) while a request is in flight and after: every answer is the right one or
/// a retryable `server_is_busy`, each within the request's deadline, and the worker keeps
/// serving.
#[test]
fn delegate_path_over_real_processes_survives_a_killed_node() {
    use rcop_proto::tikvpb::tikv_client::TikvClient;

    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sst");
    let mut children = Children(Vec::new());
    let node_cfg = dir.path().join("node.toml");
    std::fs::write(
        &node_cfg,
        format!(
            "addr = \"127.0.0.1:0\"\ngrpc-addr = \"127.0.0.1:0\"\nstore-id = 1\nkeyspace-id = 1\n\
             [dfs]\nroot = {root:?}\n\
             [[load]]\nsource = \"tpch\"\ntable = \"lineitem\"\nscale-factor = 0.002\nmemtable-tail = 300\n"
        ),
    )
    .unwrap();
    let node = spawn_lines(env!("CARGO_BIN_EXE_rcop-storage-node"), &node_cfg, &mut children, 2);
    let node_grpc = node[0].clone();
    let worker_cfg = dir.path().join("worker.toml");
    std::fs::write(
        &worker_cfg,
        format!(
            "addr = \"127.0.0.1:0\"\ncop-addr = \"127.0.0.1:0\"\n[dfs]\nroot = {root:?}\n\
             [delegate]\nstores = {{ \"1\" = \"{node_grpc}\" }}\nbackoff-base = \"10ms\"\n\
             backoff-max = \"100ms\"\nconnect-timeout = \"200ms\"\n"
        ),
    )
    .unwrap();
    let worker = spawn_lines(env!("CARGO_BIN_EXE_rcop-worker"), &worker_cfg, &mut children, 2);
    let cop_addr = worker[0].clone();

    // Reference answers from the same data loaded in this process.
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let store = std::sync::Arc::new(
        rcop_sst::SstStore::from_config(
            &rcop_sst::StoreConfig::default().with_backend(rcop_sst::Backend::Memory),
        )
        .unwrap(),
    );
    let local =
        rcop_examples::StorageNode::new(&rcop_examples::NodeConfig::default(), store).unwrap();
    let spec =
        rcop_examples::LoadSpec { scale_factor: 0.002, memtable_tail: 300, ..Default::default() };
    rt.block_on(local.load(&spec, dags::tso_now(), |_| {})).unwrap();
    let prefix = rcop_examples::tpch::keyspace_prefix(1).unwrap();
    let request = |timeout_ms: u64| {
        let mut req = dags::request(&dags::q6().unwrap(), 1, &prefix, 7, dags::tso_now());
        let ctx = req.context.get_or_insert_with(Default::default);
        ctx.peer = Some(rcop_proto::metapb::Peer { id: 71, store_id: 1, ..Default::default() });
        ctx.max_execution_duration_ms = timeout_ms;
        req
    };
    let mut tidb = rt.block_on(async {
        let channel = tonic::transport::Endpoint::from_shared(format!("http://{cop_addr}"))
            .unwrap()
            .connect()
            .await
            .unwrap();
        TikvClient::new(channel).max_decoding_message_size(usize::MAX)
    });

    // Alive: the first way answers like local execution.
    let req = request(10_000);
    let resp = rt.block_on(tidb.coprocessor(req.clone())).unwrap().into_inner();
    assert!(resp.other_error.is_empty() && resp.region_error.is_none(), "{resp:?}");
    assert_eq!(resp.data, local.execute_local(&req).data, "delegated Q6 differs from local");

    // Killed while requests are in flight: each answers right or busy, within its deadline.
    let deadline = Duration::from_millis(1_500);
    let in_flight: Vec<_> = (0..4)
        .map(|_| {
            let mut client = tidb.clone();
            let req = request(deadline.as_millis() as u64);
            rt.spawn(async move {
                let t = std::time::Instant::now();
                let r = client.coprocessor(req.clone()).await.map(tonic::Response::into_inner);
                (req, r, t.elapsed())
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(5));
    let mut node_process = children.0.remove(0);
    node_process.kill().unwrap();
    node_process.wait().unwrap();
    let mut busy = 0;
    for task in in_flight {
        let (req, r, took) = rt.block_on(task).unwrap();
        let resp = r.unwrap();
        assert!(took < deadline + Duration::from_millis(500), "answered after {took:?}");
        match &resp.region_error {
            Some(e) => {
                assert!(e.server_is_busy.is_some(), "retryable busy, not {e:?}");
                busy += 1;
            }
            None => assert_eq!(resp.data, local.execute_local(&req).data),
        }
        assert!(resp.other_error.is_empty(), "{resp:?}");
    }
    // Dead for good: busy within the deadline, and the worker still serves its other routes.
    let t = std::time::Instant::now();
    let resp = rt.block_on(tidb.coprocessor(request(deadline.as_millis() as u64))).unwrap();
    let resp = resp.into_inner();
    assert!(t.elapsed() < deadline + Duration::from_millis(500), "{:?}", t.elapsed());
    assert!(resp.region_error.is_some(), "a dead node is a region error: {resp:?}");
    let e = resp.region_error.unwrap();
    assert!(e.server_is_busy.is_some(), "{e:?}");
    eprintln!("killed node: {busy} of 4 in-flight requests answered busy, the rest right");
    assert_eq!(http(&worker[1], "GET", "/healthz", b"").0, 200);
    let (_, metrics) = http(&worker[1], "GET", "/metrics", b"");
    let metrics = String::from_utf8(metrics).unwrap();
    assert!(metric(&metrics, "rcop_worker_delegate_retries_total{reason=\"network\"}") > 0);
    drop(children);
}

/// `--log-format json`: every log line of the worker is one JSON object (for a collector),
/// a refused request among them.
#[test]
fn json_logs_are_one_object_per_line() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("worker.toml");
    std::fs::write(
        &cfg,
        format!("addr = \"127.0.0.1:0\"\n[dfs]\nroot = {:?}\n", dir.path().join("dfs")),
    )
    .unwrap();
    let log = dir.path().join("worker.log");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rcop-worker"))
        .args(["--log", "info", "--log-format", "json", "--config"])
        .arg(&cfg)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let mut children = Children(vec![child]);
    let addr = line.trim().rsplit(' ').next().unwrap().to_owned();
    let (status, _) = http(&addr, "POST", "/coprocessor", b"not an envelope");
    assert_eq!(status, 400);
    let c = &mut children.0[0];
    let _ = c.kill();
    let _ = c.wait();
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(!lines.is_empty());
    for l in &lines {
        assert!(l.starts_with('{') && l.ends_with('}'), "not a JSON object: {l}");
        assert!(l.contains("\"level\":") && l.contains("\"timestamp\":"), "{l}");
    }
    assert!(
        lines
            .iter()
            .any(|l| l.contains("\"WARN\"") && l.contains("rejected") || l.contains("failed")),
        "{text}"
    );
}

/// Runs the `rcop` client; returns its exit success, stdout and stderr.
fn rcop(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rcop")).args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The table rows `rcop query` printed (lines starting with `| `, header and rule dropped).
fn table_rows(stdout: &str) -> Vec<Vec<String>> {
    stdout
        .lines()
        .filter(|l| l.starts_with("| "))
        .skip(1)
        .map(|l| {
            l.trim_matches('|').split('|').map(|c| c.trim().to_owned()).collect::<Vec<String>>()
        })
        .collect()
}

/// `rcop query` and `rcop stats` against a real storage node and worker: rows as an aligned
/// table with column names equal to local execution, the node's decision, the JSON DAG form
/// round trip, and clear errors for an unreachable node, a bad DAG and a refused request.
#[test]
fn rcop_client_queries_a_node_and_reads_a_worker() {
    let Cluster { worker, node, local, _dir: dir, .. } = &cluster(
        "cop-block-cache-size = \"32MiB\"",
        "remote-coprocessor-min-blocks-size = \"256KiB\"",
    );
    let node_url = format!("http://{node}");
    let worker_url = format!("http://{worker}");
    let prefix = rcop_examples::tpch::keyspace_prefix(1).unwrap();

    // What the node answers, listed.
    let (ok, out, err) = rcop(&["query", "--node", &node_url, "tpch"]);
    assert!(ok, "{err}");
    for name in ["q1", "q6", "topn", "selective", "wide-scan"] {
        assert!(out.lines().any(|l| l.trim() == name), "{name} not listed in\n{out}");
    }

    // Q1, offloaded: the table equals the local answer rendered the same way.
    let (ok, out, err) = rcop(&["query", "--node", &node_url, "tpch", "q1", "--repeat", "2"]);
    assert!(ok, "{err}");
    let header = out.lines().find(|l| l.starts_with("| ")).unwrap();
    assert!(header.contains("sum_qty") && header.contains("l_linestatus"), "{out}");
    let q1 = dags::q1().unwrap();
    let req = dags::request(&q1, 1, &prefix, 1, dags::tso_now());
    let file = rcop_examples::dag_json::parse(
        &rcop_examples::dag_json::to_json(&q1.dag, &[], &q1.columns).unwrap(),
    )
    .unwrap();
    let mut expected =
        rcop_examples::dag_json::render_rows(&local.execute_local(&req), &file.types).unwrap();
    let mut got = table_rows(&out);
    expected.sort();
    got.sort();
    assert_eq!(got, expected, "{out}");
    assert!(out.contains("decision: remote"), "{out}");
    assert!(out.contains("(medians of 2)") && out.contains("round trip"), "{out}");

    // A small selective scan stays local; its dates and decimals render as text.
    let (ok, out, err) = rcop(&["query", "--node", &node_url, "tpch", "selective"]);
    assert!(ok, "{err}");
    assert!(out.contains("decision: local"), "{out}");
    assert!(table_rows(&out).iter().all(|r| r.len() == 3 && r[2].contains('.')), "{out}");

    // `rcop dag` prints JSON that `--dag` reads back to the same answer.
    let (ok, json, err) = rcop(&["dag", "tpch", "topn"]);
    assert!(ok, "{err}");
    let path = dir.path().join("topn.json");
    std::fs::write(&path, &json).unwrap();
    let (ok, from_file, err) =
        rcop(&["query", "--node", &node_url, "--dag", path.to_str().unwrap()]);
    assert!(ok, "{err}");
    let (ok, builtin, err) = rcop(&["query", "--node", &node_url, "tpch", "topn"]);
    assert!(ok, "{err}");
    assert_eq!(table_rows(&from_file), table_rows(&builtin));
    assert_eq!(table_rows(&builtin).len(), 10);
    assert!(table_rows(&builtin).iter().all(|r| r[2].starts_with("1998-")), "{builtin}");

    // Clear errors: an unreachable node, a bad DAG (the JSON path named), a refused request
    // (a function no engine evaluates), an unknown query.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let (ok, _, err) = rcop(&["query", "--node", &format!("http://{closed}"), "tpch", "q1"]);
    assert!(!ok && err.contains("cannot reach the storage node"), "{err}");
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"{"executors": [{"table_scan": {"table_id": 108, "columns": [{"id": 1, "type": "bigint"}]}},
                          {"selection": [{"func": "GTInt", "args": [{"col": 4}, {"int": 1}]}]}]}"#,
    )
    .unwrap();
    let (ok, _, err) = rcop(&["query", "--node", &node_url, "--dag", bad.to_str().unwrap()]);
    assert!(!ok && err.contains("executors[1].selection[0].args[0].col"), "{err}");
    let refused = dir.path().join("refused.json");
    std::fs::write(
        &refused,
        r#"{"executors": [{"table_scan": {"table_id": 108, "columns": [{"id": 16, "type": "varchar(44) not null"}]}},
                          {"selection": [{"func": "AesEncrypt", "args": [{"col": 0}, {"string": "k"}]}]}]}"#,
    )
    .unwrap();
    let (ok, _, err) = rcop(&["query", "--node", &node_url, "--dag", refused.to_str().unwrap()]);
    assert!(!ok && err.to_lowercase().contains("aes"), "{err}");
    let (ok, _, err) = rcop(&["query", "--node", &node_url, "tpch", "q99"]);
    assert!(!ok && err.contains("this node answers: q1, q6"), "{err}");

    // `rcop stats`: the worker's requests, caches, object store and keyspaces.
    let (ok, out, err) = rcop(&["stats", "--worker", &worker_url]);
    assert!(ok, "{err}");
    assert!(out.contains("— ready"), "{out}");
    // The cell in column `col` of the table row whose first cell is `first`.
    let cell = |first: &str, col: usize| -> String {
        let row = table_rows(&out).into_iter().find(|r| r[0] == first);
        row.unwrap_or_else(|| panic!("no row {first:?} in\n{out}"))[col].clone()
    };
    let served: u64 = cell("http", 1).parse().unwrap();
    assert!(served >= 4, "{out}");
    let block_misses: u64 = cell("block", 2).parse().unwrap();
    assert!(block_misses > 0, "{out}");
    let gets: u64 = cell("get", 1).parse().unwrap();
    assert!(gets > 0, "{out}");
    assert_eq!(cell("get", 3), "0", "no object-store errors: {out}");
    assert_eq!(cell("1", 1), served.to_string(), "keyspace 1 made every request: {out}");
    let (ok, _, err) = rcop(&["stats", "--worker", &node_url]);
    assert!(!ok && err.contains("no worker metrics"), "{err}");
}
