//! Storage node + two workers + an in-process S3 endpoint (s3s-fs), over real HTTP on
//! loopback: offloaded answers equal local execution, a stopped worker and a busy (503)
//! worker are routed around.
#![expect(clippy::unwrap_used, reason = "fixture setup in helpers")]

mod common;

use std::net::SocketAddr;
use std::sync::Arc;

use hyper_util::rt::TokioIo;
use rcop_examples::{LoadSpec, NodeConfig, Path, StorageNode, dags};
use rcop_limiter::{MemoryThreshold, ReadableSize};
use rcop_sst::SstStore;
use rcop_worker::{DfsConfig, Worker, WorkerConfig, WorkerHandle};
use s3s::auth::SimpleAuth;
use s3s::service::S3ServiceBuilder;
use tokio::net::TcpListener;

const ACCESS_KEY: &str = "rcop-e2e-access";
const SECRET_KEY: &str = "rcop-e2e-secret-0123456789";
const BUCKET: &str = "rcop";

/// Serves an S3 API over `dir` on loopback; returns the endpoint's `[dfs]` section.
async fn s3_endpoint(dir: &std::path::Path) -> DfsConfig {
    std::fs::create_dir_all(dir.join(BUCKET)).unwrap();
    let mut b = S3ServiceBuilder::new(s3s_fs::FileSystem::new(dir).unwrap());
    b.set_auth(SimpleAuth::from_single(ACCESS_KEY, SECRET_KEY));
    let service = b.build();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let service = service.clone();
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    DfsConfig::s3(BUCKET)
        .with_prefix("cluster-1")
        .with_s3_endpoint(format!("http://{addr}"))
        .with_credentials(ACCESS_KEY, SECRET_KEY)
}

async fn worker(dfs: &DfsConfig, memory_upper_threshold: Option<u64>) -> WorkerHandle {
    let mut cfg = WorkerConfig::default()
        .with_addr(SocketAddr::from(([127, 0, 0, 1], 0)))
        .with_dfs(dfs.clone())
        .with_cop_block_cache_size(ReadableSize(32 << 20));
    if let Some(bytes) = memory_upper_threshold {
        cfg.limiter.memory_upper_threshold = MemoryThreshold::Absolute(ReadableSize(bytes));
    }
    Worker::builder(cfg).build().unwrap().bind().await.unwrap().spawn()
}

/// Runs `query` through the node and locally; asserts equal answers; returns the path.
async fn check(node: &Arc<StorageNode>, query: &dags::Query) -> Path {
    check_timed(node, query).await.0
}

/// As [`check`], with the time the node took to serve the request.
async fn check_timed(node: &Arc<StorageNode>, query: &dags::Query) -> (Path, std::time::Duration) {
    let prefix = rcop_examples::tpch::keyspace_prefix(1).unwrap();
    let req = dags::request(query, 1, &prefix, 1, dags::tso_now());
    let (resp, path, took) = node.handle(req.clone()).await;
    assert!(resp.other_error.is_empty() && resp.region_error.is_none(), "{path}: {resp:?}");
    let n = Arc::clone(node);
    let local = tokio::task::spawn_blocking(move || n.execute_local(&req)).await.unwrap();
    assert_eq!(resp.data, local.data, "{}: {path}", query.name);
    (path, took)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offloaded_over_s3_equals_local_for_every_example_query() {
    let dir = tempfile::tempdir().unwrap();
    let dfs = s3_endpoint(dir.path()).await;
    let (a, b) = (worker(&dfs, None).await, worker(&dfs, None).await);
    let node = Arc::new(common::node(&dfs, &[&a, &b], "20ms").await);
    let mut remote = 0;
    for query in dags::all().unwrap() {
        let path = check(&node, &query).await;
        if query.handles.is_none() {
            assert!(matches!(path, Path::Remote { attempts: 1, .. }), "{}: {path}", query.name);
            remote += 1;
        } else {
            assert!(matches!(path, Path::Local(_)), "{}: {path}", query.name);
        }
    }
    assert_eq!(remote, 3);
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_worker_is_routed_around() {
    let dir = tempfile::tempdir().unwrap();
    let dfs = s3_endpoint(dir.path()).await;
    let (a, b) = (worker(&dfs, None).await, worker(&dfs, None).await);
    let b_url = format!("http://{}/coprocessor", b.local_addr());
    let node = Arc::new(common::node(&dfs, &[&a, &b], "20ms").await);
    a.shutdown().await.unwrap();
    for query in [dags::q6().unwrap(), dags::q1().unwrap(), dags::top_n().unwrap()] {
        match check(&node, &query).await {
            Path::Remote { worker, .. } => assert_eq!(worker.as_deref(), Some(b_url.as_str())),
            other => panic!("{}: {other}", query.name),
        }
    }
    b.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_worker_answers_503_and_the_other_serves() {
    let dir = tempfile::tempdir().unwrap();
    let dfs = s3_endpoint(dir.path()).await;
    // `busy` may reserve 64 MiB, but all of it except 1 KiB is held: every snapshot is
    // refused with 503 (it would fit once the holder is done, so the node tries elsewhere).
    let (busy, ok) = (worker(&dfs, Some(64 << 20)).await, worker(&dfs, None).await);
    let _held = busy.worker().limiter().reserve_memory((64 << 20) - 1024).unwrap();
    let ok_url = format!("http://{}/coprocessor", ok.local_addr());
    let node = Arc::new(common::node(&dfs, &[&busy, &ok], "20ms").await);
    for query in [dags::q6().unwrap(), dags::q1().unwrap()] {
        match check(&node, &query).await {
            Path::Remote { worker, .. } => assert_eq!(worker.as_deref(), Some(ok_url.as_str())),
            other => panic!("{}: {other}", query.name),
        }
    }
    busy.shutdown().await.unwrap();
    ok.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mixed_load_small_requests_beside_heavy_ones() {
    let dir = tempfile::tempdir().unwrap();
    let dfs = s3_endpoint(dir.path()).await;
    let (a, b) = (worker(&dfs, None).await, worker(&dfs, None).await);
    let node = Arc::new(common::node(&dfs, &[&a, &b], "20ms").await);
    let heavy = dags::q1().unwrap();
    let small = dags::selective().unwrap();
    let heavy_runs = (0..2).map(|_| {
        let node = Arc::clone(&node);
        let q = heavy.clone();
        tokio::spawn(async move { check(&node, &q).await })
    });
    let small_runs = (0..50).map(|_| {
        let node = Arc::clone(&node);
        let q = small.clone();
        tokio::spawn(async move { check_timed(&node, &q).await })
    });
    let heavy_runs: Vec<_> = heavy_runs.collect();
    let mut times = Vec::new();
    for r in futures::future::join_all(small_runs).await {
        let (path, took) = r.unwrap();
        assert!(matches!(path, Path::Local(_)), "{path}");
        times.push(took);
    }
    for r in futures::future::join_all(heavy_runs).await {
        assert!(matches!(r.unwrap(), Path::Remote { .. }));
    }
    times.sort();
    let p99 = times[(times.len() * 99).div_ceil(100) - 1];
    eprintln!(
        "mixed load: 50 small requests beside 2 heavy ones: p50 {:?}, p99 {p99:?}",
        times[times.len() / 2]
    );
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

/// A "worker" that reads the start of each request and then dies (closes the connection
/// without answering), as a worker killed mid-request does.
async fn dying_worker() -> (SocketAddr, tokio::task::JoinHandle<()>) {
    use tokio::io::AsyncReadExt;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut buf = [0u8; 1024];
            let _ = stream.read(&mut buf).await;
            drop(stream);
        }
    });
    (addr, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_dying_mid_request_is_retried_on_the_other() {
    let dir = tempfile::tempdir().unwrap();
    let dfs = s3_endpoint(dir.path()).await;
    let real = worker(&dfs, None).await;
    let real_url = format!("http://{}/coprocessor", real.local_addr());
    let key = rcop_offload::RoutingKey { keyspace_id: 1, shard_id: 1 };
    // A dying worker that the rendezvous order tries first (new ports until one is).
    // Rejected candidates keep their listeners until one is found: aborted at once, the
    // next bind could get the same port back, and with it the same order.
    let mut dying = None;
    let mut rejected = Vec::new();
    for _ in 0..64 {
        let (addr, task) = dying_worker().await;
        let urls = [format!("http://{addr}/coprocessor"), real_url.clone()];
        if rcop_offload::rendezvous_order(&urls, key).first() == Some(&0) {
            dying = Some((addr, task));
            break;
        }
        rejected.push(task);
    }
    rejected.iter().for_each(tokio::task::JoinHandle::abort);
    let (dying_addr, dying_task) = dying.unwrap();

    let addrs = format!("\"http://{dying_addr}\", \"http://{}\"", real.local_addr());
    let kvengine = rcop_offload::Config::from_toml_str(&format!(
        "remote-coprocessor-addr = [{addrs}]\nremote-coprocessor-min-blocks-size = \"256KiB\"\n\
         remote-coprocessor-backoff-base = \"10ms\"\nremote-coprocessor-backoff-max = \"20ms\""
    ))
    .unwrap();
    let cfg = NodeConfig { dfs: dfs.clone(), kvengine, ..NodeConfig::default() };
    let store = Arc::new(SstStore::from_config(&dfs.store_config()).unwrap());
    let node = StorageNode::new(&cfg, store).unwrap();
    let spec = LoadSpec { scale_factor: 0.002, memtable_tail: 250, ..LoadSpec::default() };
    node.load(&spec, dags::tso_now(), |_| {}).await.unwrap();
    let node = Arc::new(node);
    for query in [dags::q6().unwrap(), dags::q1().unwrap()] {
        match check(&node, &query).await {
            Path::Remote { worker, attempts, .. } => {
                assert_eq!(worker.as_deref(), Some(real_url.as_str()), "{}", query.name);
                assert!(attempts >= 2, "{}: the dying worker was tried first", query.name);
            }
            other => panic!("{}: {other}", query.name),
        }
    }
    dying_task.abort();
    real.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_under_a_small_memory_threshold_is_all_answered() {
    let dir = tempfile::tempdir().unwrap();
    let dfs = s3_endpoint(dir.path()).await;
    // Room for about one Q1 snapshot per worker at a time, its blocks counted decompressed
    // (3 MiB no longer holds one: it would be a 413, run locally): the rest get 503 and are
    // retried.
    let (a, b) = (worker(&dfs, Some(5 << 20)).await, worker(&dfs, Some(5 << 20)).await);
    let node = Arc::new(common::node(&dfs, &[&a, &b], "20ms").await);
    let q1 = dags::q1().unwrap();
    let runs = (0..8).map(|_| {
        let node = Arc::clone(&node);
        let q = q1.clone();
        tokio::spawn(async move { check(&node, &q).await })
    });
    for r in futures::future::join_all(runs).await {
        assert!(matches!(r.unwrap(), Path::Remote { .. }));
    }
    let rejected: u64 = [&a, &b]
        .iter()
        .map(|w| {
            w.worker()
                .metrics()
                .failed_requests()
                .with_label_values(&["memory_limit_exceeded"])
                .get()
        })
        .sum();
    eprintln!("memory burst: 8 requests served, {rejected} rejections retried");
    for w in [&a, &b] {
        assert_eq!(w.worker().limiter().memory_limiter().used(), 0, "reservations released");
    }
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

/// A checksum request (tp 105) goes to `remote-worker-addr` whatever its size (the DAG
/// threshold here is far above the table) and answers as local execution does; without
/// `remote-worker-addr` it stays on the node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checksum_goes_to_the_remote_worker_addr_and_equals_local() {
    let dir = tempfile::tempdir().unwrap();
    let dfs = s3_endpoint(dir.path()).await;
    let w = worker(&dfs, None).await;
    let url = format!("http://{}", w.local_addr());
    let node = Arc::new(
        common::node_with(
            &dfs,
            &format!(
                "remote-coprocessor-addr = \"{url}\"\nremote-worker-addr = \"{url}\"\n\
                 remote-coprocessor-min-blocks-size = \"1GiB\""
            ),
        )
        .await,
    );
    let prefix = rcop_examples::tpch::keyspace_prefix(1).unwrap();
    let mut req = dags::request(&dags::q6().unwrap(), 1, &prefix, 1, dags::tso_now());
    // The DAG itself stays local: below the threshold.
    assert!(matches!(node.handle(req.clone()).await.1, Path::Local(_)));
    req.tp = rcop_proto::REQ_TYPE_CHECKSUM;
    req.data = prost::Message::encode_to_vec(&rcop_proto::tipb::ChecksumRequest::default()).into();
    let (resp, path, _) = node.handle(req.clone()).await;
    assert!(matches!(path, Path::Remote { attempts: 1, .. }), "{path}");
    assert!(resp.other_error.is_empty(), "{}", resp.other_error);
    let n = Arc::clone(&node);
    let r = req.clone();
    let local = tokio::task::spawn_blocking(move || n.execute_local(&r)).await.unwrap();
    assert_eq!(resp.data, local.data, "the worker's checksum equals the node's");
    let sum: rcop_proto::tipb::ChecksumResponse = prost::Message::decode(resp.data).unwrap();
    let rows = node.info().tables[0].rows;
    assert_eq!(sum.total_kvs, Some(rows), "every row of lineitem, memtable tail included");
    assert!(sum.checksum.unwrap_or(0) != 0);

    // Only remote-coprocessor-addr: analyze and checksum stay local.
    let dir2 = tempfile::tempdir().unwrap();
    let dfs2 = s3_endpoint(dir2.path()).await;
    let w2 = worker(&dfs2, None).await;
    let plain = common::node(&dfs2, &[&w2], "20ms").await;
    let (resp, path, _) = plain.handle(req).await;
    assert!(matches!(&path, Path::Local(why) if why.contains("no worker")), "{path}");
    assert!(resp.other_error.is_empty());
    w.shutdown().await.unwrap();
    w2.shutdown().await.unwrap();
}

/// Batched store tasks: each part is decided on its own (the request's own ranges are
/// offloaded, a small task runs on the node), the tasks' answers come back in
/// `batch_responses` in task order with their ids, equal to running each part alone, and a
/// task for a region the node does not serve answers `region_not_found`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batched_tasks_are_served_one_by_one_and_answered_in_batch_responses() {
    use rcop_proto::coprocessor::StoreBatchTask;
    let dir = tempfile::tempdir().unwrap();
    let dfs = s3_endpoint(dir.path()).await;
    let w = worker(&dfs, None).await;
    let node = Arc::new(common::node(&dfs, &[&w], "20ms").await);
    let prefix = rcop_examples::tpch::keyspace_prefix(1).unwrap();
    let q6 = dags::q6().unwrap();
    let whole = dags::request(&q6, 1, &prefix, 1, dags::tso_now());
    let small = dags::request(&dags::selective().unwrap(), 1, &prefix, 1, whole.start_ts);
    let mut req = whole.clone();
    req.tasks = vec![
        StoreBatchTask {
            region_id: 1,
            ranges: small.ranges.clone(),
            task_id: 7,
            ..Default::default()
        },
        StoreBatchTask {
            region_id: 99,
            ranges: small.ranges.clone(),
            task_id: 8,
            ..Default::default()
        },
    ];
    let (resp, path, _) = node.handle(req.clone()).await;
    assert!(matches!(path, Path::Remote { .. }), "the request's own part is offloaded: {path}");
    let n = Arc::clone(&node);
    let (own, task) = tokio::task::spawn_blocking(move || {
        let mut task = whole.clone();
        task.ranges = small.ranges.clone();
        (n.execute_local(&whole), n.execute_local(&task))
    })
    .await
    .unwrap();
    assert_eq!(resp.data, own.data);
    let ids: Vec<u64> = resp.batch_responses.iter().map(|b| b.task_id).collect();
    assert_eq!(ids, [7, 8]);
    let first = &resp.batch_responses[0];
    assert!(first.other_error.is_empty() && first.region_error.is_none());
    assert_eq!(first.data, task.data, "task 7 equals the same DAG over its ranges alone");
    assert!(!first.data.is_empty());
    let second = &resp.batch_responses[1];
    let err = second.region_error.as_ref().expect("a region error");
    assert_eq!(err.region_not_found.as_ref().map(|r| r.region_id), Some(99));
    // Sent to the offloader whole, a batched request stays local instead of losing tasks.
    let src = rcop_offload::ShardSource::new(node.shard());
    let offloader = rcop_offload::Offloader::builder(
        rcop_offload::Config::from_toml_str(&format!(
            "remote-coprocessor-addr = \"http://{}\"\nremote-coprocessor-min-blocks-size = \"1KiB\"",
            w.local_addr()
        ))
        .unwrap(),
    )
    .build()
    .unwrap();
    let plan = offloader.plan(&req, &src).unwrap();
    assert_eq!(
        plan.decision,
        rcop_offload::Decision::Local(rcop_offload::LocalReason::BatchedTasks)
    );
    w.shutdown().await.unwrap();
}

/// `dfs-remote-cache-addr`: the node names its own HTTP address; the worker reads the young
/// files (TSO ids of the last minutes) from the node's `/dfs` before the object store, and
/// answers as local execution. An address where nothing listens only costs a miss.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_read_recent_files_from_the_nodes_remote_cache() {
    let dir = tempfile::tempdir().unwrap();
    let dfs = s3_endpoint(dir.path()).await;
    let w = worker(&dfs, None).await;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let node_addr = listener.local_addr().unwrap();
    let kvengine = |cache: &str| {
        format!(
            "remote-coprocessor-addr = \"http://{}\"\nremote-coprocessor-min-blocks-size = \"64KiB\"\n\
             dfs-remote-cache-addr = \"{cache}\"",
            w.local_addr()
        )
    };
    let node = Arc::new(common::node_with(&dfs, &kvengine(&node_addr.to_string())).await);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(Arc::clone(&node).serve(listener, async {
        let _ = stopped.await;
    }));
    for query in [dags::q1().unwrap(), dags::q6().unwrap()] {
        let path = check(&node, &query).await;
        assert!(matches!(path, Path::Remote { .. }), "{}: {path}", query.name);
    }
    let metric = |text: &str, series: &str| -> u64 {
        text.lines()
            .find_map(|l| l.strip_prefix(series).map(|v| v.trim().parse().unwrap()))
            .unwrap_or(0)
    };
    let node_metrics = {
        let mut out = Vec::new();
        let body = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        let mut s = tokio::net::TcpStream::connect(node_addr).await.unwrap();
        tokio::io::AsyncWriteExt::write_all(&mut s, body.as_bytes()).await.unwrap();
        tokio::io::AsyncReadExt::read_to_end(&mut s, &mut out).await.unwrap();
        String::from_utf8(out).unwrap()
    };
    let served = metric(&node_metrics, "rcop_node_dfs_reads_total{outcome=\"ok\"}");
    assert!(served > 0, "the node served file reads: {node_metrics}");
    let worker_metrics = String::from_utf8(w.worker().metrics().encode_text()).unwrap();
    let hits = metric(&worker_metrics, "rcop_worker_remote_cache_reads_total{outcome=\"hit\"}");
    assert!(hits > 0 && hits <= served, "{hits} hits, {served} served");

    // Nothing listens at the second node's cache address: every read misses, answers stay right.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let dir2 = tempfile::tempdir().unwrap();
    let dfs2 = s3_endpoint(dir2.path()).await;
    let w2 = worker(&dfs2, None).await;
    let node2 = Arc::new(
        common::node_with(
            &dfs2,
            &format!(
                "remote-coprocessor-addr = \"http://{}\"\nremote-coprocessor-min-blocks-size = \"64KiB\"\n\
                 dfs-remote-cache-addr = \"{closed}\"",
                w2.local_addr()
            ),
        )
        .await,
    );
    assert!(matches!(check(&node2, &dags::q6().unwrap()).await, Path::Remote { .. }));
    let m2 = String::from_utf8(w2.worker().metrics().encode_text()).unwrap();
    assert!(metric(&m2, "rcop_worker_remote_cache_reads_total{outcome=\"miss\"}") > 0, "{m2}");
    assert_eq!(metric(&m2, "rcop_worker_remote_cache_reads_total{outcome=\"hit\"}"), 0);
    let _ = stop.send(());
    serving.await.unwrap().unwrap();
    w.shutdown().await.unwrap();
    w2.shutdown().await.unwrap();
}

/// An analyze request (tp 104, full sampling as current TiDB sends it) goes to
/// `remote-worker-addr` and answers what the node computes itself: the same row count, null
/// counts, total sizes and FM sketches (the samples are random on both sides), samples of the
/// requested size.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analyze_goes_to_the_remote_worker_addr_and_its_statistics_equal_local() {
    use rcop_proto::tipb;
    let dir = tempfile::tempdir().unwrap();
    let dfs = s3_endpoint(dir.path()).await;
    let w = worker(&dfs, None).await;
    let url = format!("http://{}", w.local_addr());
    let node = Arc::new(common::node_with(&dfs, &format!("remote-worker-addr = \"{url}\"")).await);
    let col = |id: i64, tp: i32, flen: i32, decimal: i32, collation: i32| tipb::ColumnInfo {
        column_id: Some(id),
        tp: Some(tp),
        column_len: Some(flen),
        decimal: Some(decimal),
        collation: Some(collation),
        flag: Some(1),
        ..Default::default()
    };
    let analyze = tipb::AnalyzeReq {
        tp: Some(tipb::AnalyzeType::TypeFullSampling as i32),
        col_req: Some(tipb::AnalyzeColumnsReq {
            sample_size: Some(500),
            sketch_size: Some(10_000),
            columns_info: vec![
                col(1, 8, 20, 0, 63),   // l_orderkey BIGINT
                col(5, 246, 15, 2, 63), // l_quantity DECIMAL(15,2)
                col(9, 254, 1, 0, -46), // l_returnflag CHAR(1)
            ],
            column_groups: vec![tipb::AnalyzeColumnGroup {
                column_offsets: vec![0, 2],
                prefix_lengths: vec![],
            }],
            version: Some(2),
            ..Default::default()
        }),
        ..Default::default()
    };
    let prefix = rcop_examples::tpch::keyspace_prefix(1).unwrap();
    let mut req = dags::request(&dags::q6().unwrap(), 1, &prefix, 1, dags::tso_now());
    req.tp = rcop_proto::REQ_TYPE_ANALYZE;
    req.data = prost::Message::encode_to_vec(&analyze).into();
    let (resp, path, _) = node.handle(req.clone()).await;
    assert!(matches!(path, Path::Remote { attempts: 1, .. }), "{path}");
    assert!(resp.other_error.is_empty(), "{}", resp.other_error);
    let n = Arc::clone(&node);
    let local = tokio::task::spawn_blocking(move || n.execute_local(&req)).await.unwrap();
    assert!(local.other_error.is_empty(), "{}", local.other_error);
    let stats = |data: &bytes::Bytes| {
        let r: tipb::AnalyzeColumnsResp = prost::Message::decode(data.clone()).unwrap();
        r.row_collector.unwrap()
    };
    let (remote, local) = (stats(&resp.data), stats(&local.data));
    let rows = node.info().tables[0].rows;
    assert_eq!(remote.count, Some(rows as i64));
    assert_eq!(remote.count, local.count);
    assert_eq!(remote.null_counts, local.null_counts);
    assert_eq!(remote.total_size, local.total_size);
    assert_eq!(remote.fm_sketch, local.fm_sketch);
    assert_eq!(remote.samples.len(), 500);
    assert_eq!(local.samples.len(), 500);
    w.shutdown().await.unwrap();
}
