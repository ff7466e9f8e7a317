//! The abuse suite: a running worker (real TCP on 127.0.0.1) fed what an attacker or a broken
//! storage node would send — mutated real envelopes, hostile DAGs, oversized and never-ending
//! bodies, random bytes, wrong methods and paths. The worker answers every request with a
//! status, never answers a corrupted checksummed body with data, gives every reserved byte
//! back, and still answers a real query correctly afterwards.
#![expect(clippy::unwrap_used, reason = "test plumbing")]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::Request;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use prost::Message;
use rcop_proto::tipb;
use rcop_wire::{Envelope, EnvelopeFormat, EnvelopeWriter, HEADER_ENVELOPE};
use rcop_worker::WorkerHandle;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

mod common;
use common::export;
use common::fixture::{
    agg_dag, build_shard, cop_request, decode_response, get, memory_store, post, post_with,
    run_locally, scan_dag, start, test_config,
};

/// The v2 form of a v1 envelope.
fn to_v2(v1: &[u8]) -> Vec<u8> {
    let env = Envelope::decode(Bytes::copy_from_slice(v1)).unwrap();
    let mut out = Vec::new();
    let mut w =
        EnvelopeWriter::with_format(&mut out, &env.decode_request().unwrap(), EnvelopeFormat::V2)
            .unwrap();
    w.raw_mem_data(env.mem_data_bytes());
    w.finish_with_raw_change_set(env.change_set_bytes()).unwrap();
    out
}

/// What the worker must still do after the abuse: answer, and give back what it held.
async fn still_healthy(handle: &WorkerHandle, good: &[u8], want: &Bytes) {
    let addr = handle.local_addr();
    let reply = post(addr, good.to_vec(), true).await;
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.body));
    assert_eq!(&decode_response(&reply.body).data, want);
    assert_eq!(get(addr, "/healthz").await.status, 200);
    // Nothing reserved, nothing in flight once the answers are in.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let metrics = String::from_utf8(get(addr, "/metrics").await.body.to_vec()).unwrap();
        let idle = metrics.contains("tikv_worker_remote_cop_processing_requests_counter 0")
            && handle.worker().limiter().memory_limiter().used() == 0;
        if idle {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "still busy: {metrics}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// One mutation of a body: flip a bit, cut the tail, insert bytes, or overwrite a u32 with an
/// extreme value (the format, a length, a checksum).
#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Truncate(usize),
    Insert(usize, Vec<u8>),
    Word(usize, u32),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Mutation::Flip(at, bit)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), proptest::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(at, b)| Mutation::Insert(at, b)),
        (
            any::<usize>(),
            prop_oneof![Just(0u32), Just(1), Just(u32::MAX), Just(0x7fff_ffff), any::<u32>()]
        )
            .prop_map(|(at, v)| Mutation::Word(at, v)),
    ]
}

fn apply(body: &[u8], m: &Mutation) -> Vec<u8> {
    let mut out = body.to_vec();
    match m {
        Mutation::Flip(at, bit) => out[at % body.len()] ^= 1 << bit,
        Mutation::Truncate(at) => out.truncate(at % body.len()),
        Mutation::Insert(at, bytes) => {
            let at = at % body.len();
            out.splice(at..at, bytes.iter().copied());
        }
        Mutation::Word(at, v) => {
            let at = at % (body.len() - 3);
            out[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
    }
    out
}

/// Mutated real envelopes: a checksummed (v2) body that changed is never answered with data;
/// an upstream (v1) body always gets a status. 300 mutations each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutated_envelopes_are_refused_or_answered_and_never_crash() {
    let store = memory_store();
    let shard = build_shard(Arc::clone(&store)).await;
    let handle = start(test_config(), Arc::clone(&store), 1 << 30, 8 << 30).await;
    let addr = handle.local_addr();
    let req = cop_request(&agg_dag());
    let v1 = export(&shard, &req);
    let v2 = to_v2(&v1);
    let want = run_locally(&shard, &req, 32 << 20).data;
    let announce = [(HEADER_ENVELOPE, "2".to_owned())];

    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mutations: Vec<Mutation> =
        (0..300).map(|_| mutation().new_tree(&mut runner).unwrap().current()).collect();
    let mut statuses: BTreeMap<(&str, u16), usize> = BTreeMap::new();
    for m in &mutations {
        let bad = apply(&v2, m);
        if bad == v2 {
            continue;
        }
        let reply = post_with(addr, bad, true, &announce).await;
        assert_ne!(reply.status, 200, "{m:?}: a corrupted v2 body was answered");
        *statuses.entry(("v2", reply.status)).or_default() += 1;

        let bad = apply(&v1, m);
        let reply = post(addr, bad, true).await;
        if reply.status == 200 {
            // Undetectable without checksums (a flipped value byte is a valid row), but a
            // 200 is still a well-formed response.
            decode_response(&reply.body);
        }
        *statuses.entry(("v1", reply.status)).or_default() += 1;
    }
    println!("statuses of mutated bodies: {statuses:?}");
    assert!(statuses.keys().all(|(_, s)| [200, 400, 413, 500, 503].contains(s)), "{statuses:?}");
    still_healthy(&handle, &v1, &want).await;
    handle.shutdown().await.unwrap();
}

fn executor(tp: tipb::ExecType) -> tipb::Executor {
    tipb::Executor { tp: Some(tp as i32), ..Default::default() }
}

/// Hostile DAGs each get an answer (an error inside the response, or rows), in bounded time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_dags_are_answered() {
    let store = memory_store();
    let shard = build_shard(Arc::clone(&store)).await;
    let handle = start(test_config(), Arc::clone(&store), 1 << 30, 8 << 30).await;
    let addr = handle.local_addr();
    let good_req = cop_request(&agg_dag());
    let want = run_locally(&shard, &good_req, 32 << 20).data;

    let scan = scan_dag().executors.remove(0);
    let by = |offset: i64| tipb::ByItem {
        expr: Some(common::col_expr(offset)),
        desc: Some(true),
        ..Default::default()
    };
    let mut cases: Vec<(&str, tipb::DagRequest)> = Vec::new();
    let mut top = executor(tipb::ExecType::TypeTopN);
    top.top_n = Some(Box::new(tipb::TopN {
        order_by: vec![by(1)],
        limit: Some(u64::MAX),
        ..Default::default()
    }));
    cases.push(("TopN of u64::MAX", dag_of(vec![scan.clone(), top])));
    let mut limit = executor(tipb::ExecType::TypeLimit);
    limit.limit = Some(Box::new(tipb::Limit { limit: Some(u64::MAX), ..Default::default() }));
    cases.push(("Limit of u64::MAX", dag_of(vec![scan.clone(), limit])));
    // 5,000 nested casts: deeper than any real expression.
    let mut deep = common::col_expr(1);
    for _ in 0..5_000 {
        deep = tipb::Expr {
            tp: Some(10000),
            sig: Some(0),
            field_type: Some(common::int_ft()),
            children: vec![deep],
            ..Default::default()
        };
    }
    let mut sel = executor(tipb::ExecType::TypeSelection);
    sel.selection =
        Some(Box::new(tipb::Selection { conditions: vec![deep], ..Default::default() }));
    cases.push(("5,000-deep expression", dag_of(vec![scan.clone(), sel])));
    // 20,000 output columns of a 3-column scan.
    let mut wide = dag_of(vec![scan.clone()]);
    wide.output_offsets = (0..20_000).map(|i| i % 3).collect();
    cases.push(("20,000 output offsets", wide));
    let mut out_of_range = dag_of(vec![scan.clone()]);
    out_of_range.output_offsets = vec![u32::MAX];
    cases.push(("an output offset past the schema", out_of_range));
    // A 2 MiB constant compared with every row.
    let huge = tipb::Expr {
        tp: Some(6),
        val: Some(Bytes::from(vec![b'x'; 2 << 20])),
        field_type: Some(tipb::FieldType { tp: Some(15), collate: Some(63), ..Default::default() }),
        ..Default::default()
    };
    let mut sel = executor(tipb::ExecType::TypeSelection);
    sel.selection = Some(Box::new(tipb::Selection {
        conditions: vec![tipb::Expr {
            tp: Some(10000),
            sig: Some(114), // EQString
            field_type: Some(common::int_ft()),
            children: vec![huge.clone(), huge],
            ..Default::default()
        }],
        ..Default::default()
    }));
    cases.push(("2 MiB string constants", dag_of(vec![scan.clone(), sel])));
    cases.push(("no executors", dag_of(Vec::new())));
    cases.push(("a lone aggregation", dag_of(vec![agg_dag().executors.remove(2)])));

    // Deep messages are built, encoded and dropped on a thread with room for their recursion;
    // the worker has only its own stacks.
    let bodies: Vec<(&str, Bytes)> = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            cases.into_iter().map(|(w, d)| (w, Bytes::from(d.encode_to_vec()))).collect()
        })
        .unwrap()
        .join()
        .unwrap();
    for (what, dag) in bodies {
        let mut req = good_req.clone();
        req.data = dag;
        let reply = post(addr, export(&shard, &req), true).await;
        assert!([200, 400, 413, 500].contains(&reply.status), "{what}: {}", reply.status);
        if reply.status == 200 {
            decode_response(&reply.body);
        }
    }
    // Garbage where the DAG goes.
    let mut req = good_req.clone();
    req.data = Bytes::from_static(b"\xff\xff\xff\xff not a dag");
    let reply = post(addr, export(&shard, &req), true).await;
    let sel = tipb::SelectResponse::decode(decode_response(&reply.body).data).unwrap();
    assert!(sel.error.is_some(), "an undecodable DAG is an error in the answer");
    still_healthy(&handle, &export(&shard, &good_req), &want).await;
    handle.shutdown().await.unwrap();
}

fn dag_of(executors: Vec<tipb::Executor>) -> tipb::DagRequest {
    tipb::DagRequest { executors, ..scan_dag() }
}

/// Oversized, never-ending and random bodies, wrong methods and paths: each a status.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_transport_input_gets_a_status() {
    let store = memory_store();
    let shard = build_shard(Arc::clone(&store)).await;
    let mut config = test_config();
    config.max_request_size = rcop_limiter::ReadableSize(1 << 20);
    config.body_read_timeout = rcop_units::ReadableDuration(Duration::from_millis(500));
    let handle = start(config, Arc::clone(&store), 1 << 30, 8 << 30).await;
    let addr = handle.local_addr();
    let good_req = cop_request(&agg_dag());
    let want = run_locally(&shard, &good_req, 32 << 20).data;

    // A chunked body without a length that outgrows the cap: 413 before it all arrives (the
    // worker may close while the client still writes, so the client is a raw socket).
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(b"POST /coprocessor HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n")
        .await
        .unwrap();
    let (mut read, mut write) = stream.into_split();
    let writer = tokio::spawn(async move {
        let chunk = [b"10000\r\n".as_slice(), &[7u8; 64 << 10], b"\r\n"].concat();
        for _ in 0..64 {
            if write.write_all(&chunk).await.is_err() {
                break;
            }
        }
    });
    let mut head = [0u8; 12];
    tokio::time::timeout(
        Duration::from_secs(10),
        tokio::io::AsyncReadExt::read_exact(&mut read, &mut head),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(&head[9..12], b"413");
    writer.abort();

    // A declared body that never comes: 408 at body-read-timeout, the worker not held.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(b"POST /coprocessor HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\n\r\nabc")
        .await
        .unwrap();
    let mut head = [0u8; 12];
    tokio::time::timeout(
        Duration::from_secs(5),
        tokio::io::AsyncReadExt::read_exact(&mut stream, &mut head),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(&head[9..12], b"408");

    // Random bytes as a body, and as a whole request.
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    for _ in 0..50 {
        let bytes = proptest::collection::vec(any::<u8>(), 0..2048)
            .new_tree(&mut runner)
            .unwrap()
            .current();
        assert_eq!(post(addr, bytes.clone(), true).await.status, 400);
        let mut raw = TcpStream::connect(addr).await.unwrap();
        let _ = raw.write_all(&bytes).await;
        drop(raw);
    }
    for (method, path, status) in [
        ("GET", "/coprocessor", 405),
        ("PUT", "/coprocessor", 405),
        ("DELETE", "/metrics", 405),
        ("POST", "/", 404),
        ("GET", "/../../etc/passwd", 404),
    ] {
        let req = Request::builder()
            .method(method)
            .uri(format!("http://{addr}{path}"))
            .header("host", addr.to_string())
            .body(http_body_util::Full::new(Bytes::new()))
            .unwrap();
        assert_eq!(send_streamed(addr, req).await, status, "{method} {path}");
    }
    still_healthy(&handle, &export(&shard, &good_req), &want).await;
    handle.shutdown().await.unwrap();
}

async fn send_streamed<B>(addr: SocketAddr, req: Request<B>) -> u16
where
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await.unwrap();
    tokio::spawn(conn);
    let resp = sender.send_request(req).await.unwrap();
    let status = resp.status().as_u16();
    let _ = resp.into_body().collect().await;
    status
}

/// Resident set size of this process, from `/proc/self/status`.
fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

/// The reservation capacity of the burst's worker.
const BURST_CAP: u64 = 32 << 20;
/// Growth allowed beyond it and the block cache: the bodies in flight before admission
/// (48 × ~10 KiB), the engine's batch in flight and kernel temporaries, thread stacks touched
/// for the first time and the system allocator's retained arenas (this test binary does not
/// use the binaries' mimalloc).
const BURST_SLACK: u64 = 48 << 20;

/// A burst of concurrent requests, half of them corrupted: every good one answers right,
/// every corrupted one is refused, the process' RSS stays under the reservation capacity
/// plus the block cache and a stated slack, and the worker is idle afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mixed_burst_of_good_and_corrupted_requests() {
    let store = memory_store();
    let shard = build_shard(Arc::clone(&store)).await;
    let mut config = test_config();
    config.limiter.memory_upper_threshold =
        rcop_limiter::MemoryThreshold::Absolute(rcop_limiter::ReadableSize(BURST_CAP));
    let block_cache = config.cop_block_cache_size.resolve(8 << 30);
    let handle = start(config, Arc::clone(&store), 1 << 30, 8 << 30).await;
    let baseline = rss();
    let peak = Arc::new(std::sync::atomic::AtomicU64::new(baseline));
    let sampling = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let sampler = {
        let (peak, sampling) = (Arc::clone(&peak), Arc::clone(&sampling));
        std::thread::spawn(move || {
            while sampling.load(std::sync::atomic::Ordering::Relaxed) {
                peak.fetch_max(rss(), std::sync::atomic::Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };
    let addr = handle.local_addr();
    let req = cop_request(&agg_dag());
    let want = run_locally(&shard, &req, 32 << 20).data;
    let v2 = to_v2(&export(&shard, &req));
    let tasks: Vec<_> = (0..48)
        .map(|i| {
            let mut body = v2.clone();
            if i % 2 == 1 {
                let at = 16 + (i * 37) % (body.len() - 16);
                body[at] ^= 0x40;
            }
            tokio::spawn(async move {
                (i, post_with(addr, body, true, &[(HEADER_ENVELOPE, "2".to_owned())]).await)
            })
        })
        .collect();
    for t in tasks {
        let (i, reply) = t.await.unwrap();
        if i % 2 == 1 {
            assert_eq!(reply.status, 400, "corrupted request {i}");
        } else if reply.status == 200 {
            assert_eq!(decode_response(&reply.body).data, want, "request {i}");
        } else {
            assert_eq!(reply.status, 503, "request {i}: only busy may refuse a good one");
        }
    }
    sampling.store(false, std::sync::atomic::Ordering::Relaxed);
    sampler.join().unwrap();
    let grew = peak.load(std::sync::atomic::Ordering::Relaxed).saturating_sub(baseline);
    let bound = BURST_CAP + block_cache + BURST_SLACK;
    println!("burst: RSS grew {} KiB, bound {} KiB", grew >> 10, bound >> 10);
    assert!(grew <= bound, "RSS grew {grew} B during the burst, over {bound} B");
    still_healthy(&handle, &export(&shard, &req), &want).await;
    handle.shutdown().await.unwrap();
}
