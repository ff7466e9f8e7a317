//! End-to-end tests of the worker over real TCP on 127.0.0.1: a storage-node shard exports
//! a request, the worker serves it, and the answer matches running the engine locally.

use std::sync::Arc;

use bytes::Bytes;
use prost::Message;
use rcop_limiter::{ManualMemoryProbe, MemoryThreshold, ReadableSize};
use rcop_proto::{coprocessor, tipb};
use rcop_worker::Worker;
use tokio::net::TcpStream;

mod common;
use common::fixture::{
    agg_dag, build_shard, cop_request, decode_response, get, memory_store, post, post_with,
    run_locally, scan_dag, start, test_config,
};
use common::{export, export_with, export_with_txn_files, record_key};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offloaded_dag_matches_local_execution() {
    let store = memory_store();
    let shard = build_shard(Arc::clone(&store)).await;
    let handle = start(test_config(), Arc::clone(&store), 1 << 30, 8 << 30).await;
    let addr = handle.local_addr();

    for dag in [agg_dag(), scan_dag()] {
        let req = cop_request(&dag);
        let local = run_locally(&shard, &req, 32 << 20);
        let sel = tipb::SelectResponse::decode(local.data.clone()).unwrap();
        assert!(sel.error.is_none(), "{:?}", sel.error);
        assert!(!sel.chunks.is_empty());

        let reply = post(addr, export(&shard, &req), true).await;
        assert_eq!(reply.status, 200, "{:?}", String::from_utf8_lossy(&reply.body));
        let remote = decode_response(&reply.body);
        assert_eq!(remote.data, local.data, "same SelectResponse bytes");
        assert_eq!(remote.range, local.range);
        assert!(remote.other_error.is_empty() && remote.region_error.is_none());
        let details = remote.exec_details_v2.unwrap();
        let scan = details.scan_detail_v2.unwrap();
        // 1000 rows, 9 deleted (7, 77, …, 567), none invisible-only.
        assert_eq!(scan.processed_versions, 991);
        assert!(scan.processed_versions_size > 0);
        assert!(details.time_detail.is_some());
    }

    // Counters and the limiter's metrics are exported.
    let metrics = get(addr, "/metrics").await;
    assert_eq!(metrics.status, 200);
    let text = String::from_utf8(metrics.body.to_vec()).unwrap();
    assert!(text.contains("tikv_worker_remote_cop_dag_request_counter{path=\"http\"} 2"), "{text}");
    assert!(
        text.contains("tikv_worker_remote_cop_request_duration_seconds_count{path=\"http\"} 2")
    );
    assert!(
        text.contains("tikv_worker_remote_cop_snapshot_duration_seconds_count{path=\"http\"} 2")
    );
    assert!(text.contains("tikv_worker_memory_limiter_current_used 0"));
    handle.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_response_cap_pages_like_local_execution() {
    let store = memory_store();
    let shard = build_shard(Arc::clone(&store)).await;
    let mut config = test_config();
    config.cop_max_resp_size = ReadableSize(2 << 10);
    let handle = start(config, Arc::clone(&store), 1 << 30, 8 << 30).await;

    let req = cop_request(&scan_dag());
    let local = run_locally(&shard, &req, 2 << 10);
    assert!(local.range.is_some(), "the local page ended early");
    let reply = post(handle.local_addr(), export(&shard, &req), true).await;
    assert_eq!(reply.status, 200);
    let remote = decode_response(&reply.body);
    assert_eq!(remote.data, local.data);
    assert_eq!(remote.range, local.range);
    handle.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_bodies_get_400_and_the_worker_keeps_serving() {
    let store = memory_store();
    let shard = build_shard(Arc::clone(&store)).await;
    let handle = start(test_config(), Arc::clone(&store), 1 << 30, 8 << 30).await;
    let addr = handle.local_addr();
    let good = export(&shard, &cop_request(&agg_dag()));

    let mut bad_format = good.clone();
    bad_format[0] = 9;
    let mut bad_change_set = good.clone();
    let n = bad_change_set.len();
    bad_change_set[n - 3..].fill(0xff);
    for (what, body) in [
        ("empty", Vec::new()),
        ("garbage", b"hello, worker".to_vec()),
        ("format 9", bad_format),
        ("truncated", good[..good.len() / 2].to_vec()),
        ("truncated by one", good[..good.len() - 1].to_vec()),
        ("corrupt change set", bad_change_set),
    ] {
        let reply = post(addr, body, true).await;
        assert_eq!(reply.status, 400, "{what}: {}", String::from_utf8_lossy(&reply.body));
        let text = String::from_utf8(reply.body.to_vec()).unwrap();
        assert!(text.contains("failed to"), "{what}: {text}");
    }
    // Well-formed protobuf, but not a request a worker serves: each a 400 with its reason.
    let mut trailing = good.clone();
    trailing.extend_from_slice(&[0, 0]);
    let mut overlapping = cop_request(&agg_dag());
    overlapping.ranges.push(overlapping.ranges[0].clone());
    let mut unsorted = cop_request(&agg_dag());
    let whole = unsorted.ranges[0].clone();
    let mid = record_key(500);
    unsorted.ranges = vec![
        coprocessor::KeyRange { start: mid.clone().into(), end: whole.end.clone() },
        coprocessor::KeyRange { start: whole.start.clone(), end: mid.into() },
    ];
    let zero_meta = export_with(&shard, &cop_request(&agg_dag()), |cs| {
        let snap = cs.snapshot.as_mut().unwrap();
        assert!(!snap.table_creates.is_empty());
        for t in &mut snap.table_creates {
            t.meta_offset = 0;
        }
    });
    for (what, body, reason) in [
        ("trailing bytes", trailing, "2 bytes after the change set"),
        ("overlapping ranges", export(&shard, &overlapping), "unsorted or overlap"),
        ("unsorted ranges", export(&shard, &unsorted), "unsorted or overlap"),
        ("meta_offset 0", zero_meta, "meta_offset 0"),
    ] {
        let reply = post(addr, body, true).await;
        let text = String::from_utf8(reply.body.to_vec()).unwrap();
        assert_eq!(reply.status, 400, "{what}: {text}");
        assert!(text.contains(reason), "{what}: {text}");
    }
    let ok = post(addr, good, true).await;
    assert_eq!(ok.status, 200);
    let health = get(addr, "/healthz").await;
    assert_eq!((health.status, &health.body[..]), (200, &b"ok\n"[..]));
    let metrics = String::from_utf8(get(addr, "/metrics").await.body.to_vec()).unwrap();
    assert!(
        metrics.contains("tikv_worker_remote_cop_failed_requests_counter{type=\"decode\"} 6"),
        "{metrics}"
    );
    assert_eq!(get(addr, "/nope").await.status, 404);
    assert_eq!(get(addr, "/coprocessor").await.status, 405);
    handle.shutdown().await.unwrap();
}

/// With `[security] shared-secret-path`, only requests signed with the secret are served:
/// unsigned 401, forged or stale 403, each counted; signed ones answer as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_with_a_shared_secret_serves_signed_requests_only() {
    let store = memory_store();
    let shard = build_shard(Arc::clone(&store)).await;
    let dir = tempfile::tempdir().unwrap();
    let secret_path = dir.path().join("secret");
    std::fs::write(&secret_path, "a-secret-of-more-than-16-bytes\n").unwrap();
    let mut config = test_config();
    config.security.shared_secret_path = secret_path.clone();
    let handle = start(config, Arc::clone(&store), 1 << 30, 8 << 30).await;
    let addr = handle.local_addr();
    let req = cop_request(&agg_dag());
    let body = export(&shard, &req);
    let secret = rcop_tls::SharedSecret::from_file(&secret_path).unwrap();
    let path = rcop_wire::COPROCESSOR_PATH;

    let unsigned = post(addr, body.clone(), true).await;
    assert_eq!(unsigned.status, 401, "{}", String::from_utf8_lossy(&unsigned.body));
    let other = rcop_tls::SharedSecret::new(b"another-secret-of-16-bytes").unwrap();
    let forged = post_with(addr, body.clone(), true, &other.headers_now(path, &body)).await;
    assert_eq!(forged.status, 403);
    // Signed for a different body.
    let replayed =
        post_with(addr, body.clone(), true, &secret.headers_now(path, b"another body")).await;
    assert_eq!(replayed.status, 403);
    let old = rcop_tls::unix_ms(std::time::SystemTime::now()) - 10 * 60 * 1000;
    let stale = [
        (rcop_tls::HEADER_AUTH_TIMESTAMP, old.to_string()),
        (rcop_tls::HEADER_AUTH_SIGNATURE, secret.sign(old, path, &body)),
    ];
    assert_eq!(post_with(addr, body.clone(), true, &stale).await.status, 403);

    let signed = post_with(addr, body.clone(), true, &secret.headers_now(path, &body)).await;
    assert_eq!(signed.status, 200, "{}", String::from_utf8_lossy(&signed.body));
    assert_eq!(decode_response(&signed.body).data, run_locally(&shard, &req, 32 << 20).data);
    let metrics = String::from_utf8(get(addr, "/metrics").await.body.to_vec()).unwrap();
    for (reason, n) in [("missing", 1), ("bad_signature", 2), ("stale", 1)] {
        let line = format!("rcop_worker_auth_refused_total{{reason=\"{reason}\"}} {n}");
        assert!(metrics.contains(&line), "{line}\n{metrics}");
    }
    handle.shutdown().await.unwrap();
}

/// Envelope v2: the same answer as v1; a flipped bit anywhere in a part is a 400 naming the
/// part; a body that is not in the format its header announces is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checksummed_envelopes_refuse_every_corruption() {
    let store = memory_store();
    let shard = build_shard(Arc::clone(&store)).await;
    let handle = start(test_config(), Arc::clone(&store), 1 << 30, 8 << 30).await;
    let addr = handle.local_addr();
    let req = cop_request(&agg_dag());
    let v1 = export(&shard, &req);
    let envelope = rcop_wire::Envelope::decode(Bytes::from(v1.clone())).unwrap();
    let mut v2 = Vec::new();
    let mut w = rcop_wire::EnvelopeWriter::with_format(
        &mut v2,
        &envelope.decode_request().unwrap(),
        rcop_wire::EnvelopeFormat::V2,
    )
    .unwrap();
    w.raw_mem_data(envelope.mem_data_bytes());
    w.finish_with_raw_change_set(envelope.change_set_bytes()).unwrap();
    let announce = [(rcop_wire::HEADER_ENVELOPE, "2".to_owned())];

    let ok = post_with(addr, v2.clone(), true, &announce).await;
    assert_eq!(ok.status, 200, "{}", String::from_utf8_lossy(&ok.body));
    assert_eq!(decode_response(&ok.body).data, run_locally(&shard, &req, 32 << 20).data);
    // One flip in each part (the middle byte of each).
    let parts = [
        ("request", 8 + envelope.request_bytes().len() / 2),
        ("mem-data", 12 + envelope.request_bytes().len() + envelope.mem_data_bytes().len() / 2),
        ("change set", v2.len() - 12 - envelope.change_set_bytes().len() / 2),
    ];
    for (part, at) in parts {
        let mut bad = v2.clone();
        bad[at] ^= 0x10;
        let reply = post_with(addr, bad, true, &announce).await;
        let text = String::from_utf8_lossy(&reply.body).into_owned();
        assert_eq!(reply.status, 400, "{part}: {text}");
        assert!(text.contains(&format!("{part} at offset")) && text.contains("crc32c"), "{text}");
    }
    // Format 1 where 2 is announced (a flipped format number), and an unknown announcement.
    let downgraded = post_with(addr, v1.clone(), true, &announce).await;
    assert_eq!(downgraded.status, 400);
    assert!(String::from_utf8_lossy(&downgraded.body).contains("header says 2"));
    let unknown = [(rcop_wire::HEADER_ENVELOPE, "7".to_owned())];
    assert_eq!(post_with(addr, v1.clone(), true, &unknown).await.status, 400);
    // Without the header, both formats are read (upstream nodes send format 1).
    assert_eq!(post(addr, v1, true).await.status, 200);
    assert_eq!(post(addr, v2, true).await.status, 200);
    handle.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_body_gets_413() {
    let store = memory_store();
    let mut config = test_config();
    config.max_request_size = ReadableSize(1024);
    let handle = start(config, store, 1 << 30, 8 << 30).await;
    let reply = post(handle.local_addr(), vec![0u8; 4096], true).await;
    assert_eq!(reply.status, 413);
    // Still serving.
    assert_eq!(get(handle.local_addr(), "/healthz").await.status, 200);
    handle.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_threshold_rejects_with_503_or_413_when_it_can_never_fit() {
    let store = memory_store();
    let shard = build_shard(Arc::clone(&store)).await;
    let body = export(&shard, &cop_request(&agg_dag()));

    // 1 MiB may be reserved, but others hold all but 1 KiB of it: 503, retry later.
    let mut config = test_config();
    config.limiter.memory_upper_threshold = MemoryThreshold::Absolute(ReadableSize(1 << 20));
    let handle = start(config, Arc::clone(&store), 1 << 30, 8 << 30).await;
    let held = handle.worker().limiter().reserve_memory((1 << 20) - 1024).unwrap();
    let reply = post(handle.local_addr(), body.clone(), true).await;
    assert_eq!(reply.status, 503, "{}", String::from_utf8_lossy(&reply.body));
    assert!(String::from_utf8_lossy(&reply.body).contains("memory limit exceeded"));
    drop(held);
    assert_eq!(post(handle.local_addr(), body.clone(), true).await.status, 200);
    let metrics =
        String::from_utf8(get(handle.local_addr(), "/metrics").await.body.to_vec()).unwrap();
    assert!(metrics.contains("type=\"memory_limit_exceeded\"} 1"), "{metrics}");
    handle.shutdown().await.unwrap();

    // The snapshot needs tens of KiB and only 1 KiB may ever be reserved: 413, not retryable.
    let mut config = test_config();
    config.limiter.memory_upper_threshold = MemoryThreshold::Absolute(ReadableSize(1024));
    let handle = start(config, Arc::clone(&store), 1 << 30, 8 << 30).await;
    let reply = post(handle.local_addr(), body, true).await;
    assert_eq!(reply.status, 413, "{}", String::from_utf8_lossy(&reply.body));
    assert!(String::from_utf8_lossy(&reply.body).contains("memory limit exceeded"));
    handle.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_pressure_wait_ends_in_503_at_the_deadline() {
    let store = memory_store();
    let shard = build_shard(Arc::clone(&store)).await;
    let mut config = test_config();
    config.limiter.cop_limiter.wait_min_duration =
        rcop_limiter::ReadableDuration(std::time::Duration::from_millis(5));
    config.limiter.cop_limiter.wait_max_duration =
        rcop_limiter::ReadableDuration(std::time::Duration::from_millis(10));
    config.limiter.memory_upper_threshold = MemoryThreshold::Absolute(ReadableSize(1 << 30));
    // RSS at 95% of the limit: above high-mem-ratio 0.8; a single keyspace is "heavy" once it
    // has a sample, so the second request waits until its 200 ms deadline.
    let handle = start(config, Arc::clone(&store), 95, 100).await;
    let addr = handle.local_addr();
    let mut req = cop_request(&agg_dag());
    req.context.as_mut().unwrap().max_execution_duration_ms = 200;
    let first = post(addr, export(&shard, &req), true).await;
    assert_eq!(first.status, 200, "no samples yet: admitted");
    let started = std::time::Instant::now();
    let second = post(addr, export(&shard, &req), true).await;
    assert_eq!(second.status, 503, "{}", String::from_utf8_lossy(&second.body));
    assert!(started.elapsed() >= std::time::Duration::from_millis(150));
    handle.shutdown().await.unwrap();
}

/// A client that goes away cancels its request: the wait for admission ends, the request is
/// counted as cancelled, its memory comes back and the worker keeps serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_disconnects_cancels_its_request() {
    use tokio::io::AsyncWriteExt;
    let store = memory_store();
    let shard = build_shard(Arc::clone(&store)).await;
    let mut config = test_config();
    config.limiter.cop_limiter.wait_min_duration =
        rcop_limiter::ReadableDuration(std::time::Duration::from_secs(20));
    config.limiter.cop_limiter.wait_max_duration =
        rcop_limiter::ReadableDuration(std::time::Duration::from_secs(30));
    config.limiter.memory_upper_threshold = MemoryThreshold::Absolute(ReadableSize(1 << 30));
    // As in the test above: the second request of the one keyspace waits for memory.
    let handle = start(config, Arc::clone(&store), 95, 100).await;
    let addr = handle.local_addr();
    let mut req = cop_request(&agg_dag());
    req.context.as_mut().unwrap().max_execution_duration_ms = 20_000;
    let body = export(&shard, &req);
    assert_eq!(post(addr, body.clone(), true).await.status, 200);

    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /coprocessor HTTP/1.1\r\nhost: {addr}\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&body).await.unwrap();
    let metrics =
        || async { String::from_utf8(get(addr, "/metrics").await.body.to_vec()).unwrap() };
    // Waiting for admission, holding the body's bytes.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !metrics().await.contains("tikv_worker_remote_cop_processing_requests_counter 1") {
        assert!(std::time::Instant::now() < deadline, "{}", metrics().await);
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(handle.worker().limiter().memory_limiter().used() > 0);
    drop(stream);
    // Well before the request's own 20 s deadline and the cop-limiter's 20–30 s naps, with
    // room for a loaded machine.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let text = metrics().await;
        if text.contains("rcop_worker_cancelled_requests_total 1") {
            assert!(
                text.contains("tikv_worker_remote_cop_processing_requests_counter 0"),
                "{text}"
            );
            break;
        }
        assert!(std::time::Instant::now() < deadline, "not cancelled: {text}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(handle.worker().limiter().memory_limiter().used(), 0);
    assert_eq!(get(addr, "/healthz").await.status, 200);
    handle.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coprocessor_errors_are_500_with_a_protobuf_body_when_accepted() {
    let store = memory_store();
    let shard = build_shard(Arc::clone(&store)).await;
    let handle = start(test_config(), Arc::clone(&store), 1 << 30, 8 << 30).await;
    let addr = handle.local_addr();
    // A request type the worker does not serve (it serves DAG, analyze and checksum).
    let mut req = cop_request(&agg_dag());
    req.tp = 999;
    let body = export(&shard, &req);

    let pb = post(addr, body.clone(), true).await;
    assert_eq!(pb.status, 500);
    assert_eq!(pb.content_type.as_deref(), Some(rcop_wire::CONTENT_TYPE_PROTOBUF));
    let resp = decode_response(&pb.body);
    assert_eq!(resp.other_error, "unsupported coprocessor request type 999");

    let text = post(addr, body, false).await;
    assert_eq!(text.status, 500);
    assert_ne!(text.content_type.as_deref(), Some(rcop_wire::CONTENT_TYPE_PROTOBUF));
    assert!(String::from_utf8_lossy(&text.body).contains("unsupported coprocessor request type"));
    handle.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_file_in_the_store_is_an_error_not_a_crash() {
    let store = memory_store();
    let shard = build_shard(Arc::clone(&store)).await;
    // The worker reads another (empty) store: the change set names files it cannot find.
    let handle = start(test_config(), memory_store(), 1 << 30, 8 << 30).await;
    let reply = post(handle.local_addr(), export(&shard, &cop_request(&agg_dag())), true).await;
    assert!(reply.status == 500 || reply.status == 503, "{}", reply.status);
    assert!(String::from_utf8_lossy(&reply.body).contains("failed to construct snapshot"));
    assert_eq!(get(handle.local_addr(), "/healthz").await.status, 200);
    handle.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_stops_accepting_and_returns() {
    let handle = start(test_config(), memory_store(), 1 << 30, 8 << 30).await;
    let addr = handle.local_addr();
    assert_eq!(get(addr, "/healthz").await.status, 200);
    // An idle keep-alive connection does not hold the shutdown up.
    let idle = TcpStream::connect(addr).await.unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(5), handle.shutdown())
        .await
        .expect("graceful shutdown finished")
        .unwrap();
    drop(idle);
    assert!(TcpStream::connect(addr).await.is_err(), "listener closed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_beyond_the_permit_queue_is_answered_with_200_or_503() {
    let store = memory_store();
    let shard = build_shard(Arc::clone(&store)).await;
    let mut config = test_config();
    // 1 core: 2 keyspace permits and a keyspace queue of 1.
    config.limiter.worker_limiter.keyspace_max_queue_size = 1;
    let worker = Worker::builder(config)
        .store(Arc::clone(&store))
        .memory_probe(Arc::new(ManualMemoryProbe::new(1 << 30, 8 << 30)))
        .cores(1)
        .build()
        .unwrap();
    let handle = worker.bind().await.unwrap().spawn();
    let addr = handle.local_addr();
    let body = export(&shard, &cop_request(&agg_dag()));
    let replies = futures::future::join_all((0..24).map(|_| post(addr, body.clone(), true))).await;
    let ok = replies.iter().filter(|r| r.status == 200).count();
    for r in &replies {
        assert!(r.status == 200 || r.status == 503, "{}", r.status);
        if r.status == 503 {
            assert!(String::from_utf8_lossy(&r.body).contains("queue is full"));
        }
    }
    assert!(ok >= 1, "some requests were served");
    // Everything was released: a later request is served and no memory stays reserved.
    assert_eq!(post(addr, body, true).await.status, 200);
    let metrics = String::from_utf8(get(addr, "/metrics").await.body.to_vec()).unwrap();
    assert!(metrics.contains("tikv_worker_memory_limiter_current_used 0"), "{metrics}");
    assert!(metrics.contains("tikv_worker_remote_cop_processing_requests_counter 0"));
    handle.shutdown().await.unwrap();
}

/// Reservations count decompressed bytes: blocks are reserved at their stored size, and each
/// grows the reservation by what it decompresses to before it is decompressed. Highly
/// compressible rows whose stored blocks fit but whose decompressed blocks do not get a 503.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reservations_grow_to_the_decompressed_blocks() {
    use rcop_snap::{FileIds, Shard, ShardConfig};
    let store = memory_store();
    let mut cfg = ShardConfig::new(7, common::prefix(1), common::prefix(2), 4).unwrap();
    cfg.block_size = 16 << 10;
    let shard = Shard::with_store(cfg, Arc::clone(&store), FileIds::default()).unwrap();
    let mut value = Vec::new();
    rcop_datum::row::RowEncoder::new()
        .int(1, 1)
        .bytes(2, &vec![b'a'; 4096])
        .finish(&mut value)
        .unwrap();
    for h in 1..=400 {
        shard.put(&record_key(h), 10, 11, &value).unwrap();
    }
    shard.flush().await.unwrap();
    shard.compact(0).await.unwrap();
    let mut req = cop_request(&agg_dag());
    req.data = {
        // Count the rows: the c2 column is a string here, so only count(1).
        let mut dag = agg_dag();
        let agg = dag.executors[2].aggregation.as_mut().unwrap();
        agg.agg_func.truncate(1);
        dag.output_offsets = vec![0, 1];
        dag.encode_to_vec().into()
    };
    let body = export(&shard, &req);
    let want = run_locally(&shard, &req, 32 << 20).data;

    // The stored blocks fit in 512 KiB, the 1.6 MiB they decompress to never can: 413.
    let mut config = test_config();
    config.limiter.memory_upper_threshold = MemoryThreshold::Absolute(ReadableSize(512 << 10));
    let handle = start(config, Arc::clone(&store), 1 << 30, 8 << 30).await;
    let reply = post(handle.local_addr(), body.clone(), true).await;
    let text = String::from_utf8_lossy(&reply.body).into_owned();
    assert_eq!(reply.status, 413, "{text}");
    assert!(text.contains("decompressed blocks"), "{text}");
    assert_eq!(handle.worker().limiter().memory_limiter().used(), 0);
    handle.shutdown().await.unwrap();

    // They would fit, but others hold most of the capacity now: 503, retry.
    let mut config = test_config();
    config.limiter.memory_upper_threshold = MemoryThreshold::Absolute(ReadableSize(4 << 20));
    let handle = start(config, Arc::clone(&store), 1 << 30, 8 << 30).await;
    let held = handle.worker().limiter().reserve_memory(3 << 20).unwrap();
    let reply = post(handle.local_addr(), body.clone(), true).await;
    let text = String::from_utf8_lossy(&reply.body).into_owned();
    assert_eq!(reply.status, 503, "{text}");
    assert!(text.contains("no memory budget"), "{text}");
    drop(held);
    assert_eq!(handle.worker().limiter().memory_limiter().used(), 0);
    handle.shutdown().await.unwrap();

    let mut config = test_config();
    config.limiter.memory_upper_threshold = MemoryThreshold::Absolute(ReadableSize(8 << 20));
    let handle = start(config, Arc::clone(&store), 1 << 30, 8 << 30).await;
    let reply = post(handle.local_addr(), body, true).await;
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.body));
    assert_eq!(decode_response(&reply.body).data, want);
    handle.shutdown().await.unwrap();
}

/// The engine's state and response grow the request's reservation: a capacity that holds
/// the body and the snapshot but not the answer is a 413 naming the execution (it could never
/// run here), a capacity that is mostly held by others is a 503, and enough is a 200 equal
/// to local execution; nothing stays reserved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_engine_draws_on_the_request_reservation() {
    let store = memory_store();
    let shard = build_shard(Arc::clone(&store)).await;
    let req = cop_request(&scan_dag());
    let body = export(&shard, &req);
    let want = run_locally(&shard, &req, 32 << 20).data;
    let run = |capacity: u64, others: u64| {
        let (store, body) = (Arc::clone(&store), body.clone());
        async move {
            let mut config = test_config();
            config.limiter.memory_upper_threshold =
                MemoryThreshold::Absolute(ReadableSize(capacity));
            let handle = start(config, store, 1 << 30, 8 << 30).await;
            let held =
                (others > 0).then(|| handle.worker().limiter().reserve_memory(others).unwrap());
            let reply = post(handle.local_addr(), body, true).await;
            drop(held);
            assert_eq!(handle.worker().limiter().memory_limiter().used(), 0);
            handle.shutdown().await.unwrap();
            reply
        }
    };
    let reply = run(96 << 10, 0).await;
    let text = String::from_utf8_lossy(&reply.body).into_owned();
    assert_eq!(reply.status, 413, "{text}");
    assert!(text.contains("with its execution"), "{text}");
    let reply = run(1 << 20, (1 << 20) - (80 << 10)).await;
    assert_eq!(reply.status, 503, "{}", String::from_utf8_lossy(&reply.body));
    let reply = run(1 << 20, 0).await;
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.body));
    assert_eq!(decode_response(&reply.body).data, want);
}

/// `/metrics` is gzipped for a scraper that asks for it, plain otherwise.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_are_gzipped_when_asked() {
    use std::io::Read;
    let handle = start(test_config(), memory_store(), 1 << 30, 8 << 30).await;
    let addr = handle.local_addr();
    let req = |encoding: &str| {
        hyper::Request::get(format!("http://{addr}/metrics"))
            .header("host", addr.to_string())
            .header("accept-encoding", encoding)
            .body(http_body_util::Full::new(Bytes::new()))
            .unwrap()
    };
    let zipped = common::fixture::send(addr, req("deflate, gzip;q=0.8")).await;
    assert_eq!(zipped.status, 200);
    let mut text = String::new();
    flate2::read::GzDecoder::new(&zipped.body[..]).read_to_string(&mut text).unwrap();
    assert!(text.contains("tikv_worker_remote_cop_dag_request_counter"), "{text}");
    let plain = common::fixture::send(addr, req("gzip;q=0, identity")).await;
    assert!(String::from_utf8_lossy(&plain.body).contains("# HELP"));
    assert!(
        zipped.body.len() * 3 < plain.body.len(),
        "{} vs {}",
        zipped.body.len(),
        plain.body.len()
    );
    handle.shutdown().await.unwrap();
}

/// CRC-64/XZ bit by bit (poly 0x42F0E1EBA9EA3693 reflected, init and xorout all ones),
/// independent of the engine's implementation.
fn crc64_xz(parts: &[&[u8]]) -> u64 {
    let mut crc = u64::MAX;
    for &b in parts.iter().flat_map(|p| p.iter()) {
        crc ^= u64::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xC96C_5795_D787_0F42 } else { crc >> 1 };
        }
    }
    !crc
}

/// A checksum request (tp 105) through the worker: the rebuilt snapshot's pairs checksummed
/// as TiKV does, equal to local execution on the node's snapshot and to a CRC computed here
/// over the rows the fixture wrote (newest visible version at the read timestamp, deletes
/// and later versions left out).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checksum_requests_match_an_independent_crc_of_the_visible_rows() {
    use common::row;
    let store = memory_store();
    let shard = build_shard(Arc::clone(&store)).await;
    let handle = start(test_config(), Arc::clone(&store), 1 << 30, 8 << 30).await;
    let addr = handle.local_addr();
    let mut req = cop_request(&agg_dag());
    req.tp = rcop_proto::REQ_TYPE_CHECKSUM;
    req.paging_size = 0;
    req.data = Bytes::from(tipb::ChecksumRequest::default().encode_to_vec());

    let reply = post(addr, export(&shard, &req), true).await;
    assert_eq!(reply.status, 200, "{:?}", String::from_utf8_lossy(&reply.body));
    let resp = decode_response(&reply.body);
    assert!(resp.other_error.is_empty(), "{}", resp.other_error);
    let got = tipb::ChecksumResponse::decode(resp.data.clone()).unwrap();

    let (mut sum, mut kvs, mut bytes) = (0u64, 0u64, 0u64);
    for h in 1..=1000i64 {
        if (7..=600).contains(&h) && (h - 7) % 70 == 0 {
            continue; // deleted at ts 32
        }
        let value =
            if (50..=600).contains(&h) && h % 50 == 0 { row(6, -h) } else { row(h % 7, h * 10) };
        let key = record_key(h);
        sum ^= crc64_xz(&[&key, &value]);
        kvs += 1;
        bytes += (key.len() + value.len()) as u64;
    }
    assert_eq!(got.total_kvs, Some(kvs));
    assert_eq!(got.total_bytes, Some(bytes));
    assert_eq!(got.checksum, Some(sum));
    assert_eq!(resp.data, run_locally(&shard, &req, 1 << 20).data, "equal to local execution");
    // Scan details: every key examined (the 9 deleted ones too), the bytes of those keys
    // and of the visible values.
    let scan = resp.exec_details_v2.as_ref().and_then(|d| d.scan_detail_v2).unwrap();
    assert_eq!((scan.total_versions, scan.processed_versions), (1000, kvs));
    assert_eq!(scan.total_versions_size, bytes + 9 * record_key(1).len() as u64);
    let time = resp.exec_details_v2.as_ref().and_then(|d| d.time_detail_v2).unwrap();
    assert!(time.kv_read_wall_time_ns > 0, "the snapshot rebuild is the KV read: {time:?}");
    assert!(time.kv_read_wall_time_ns <= time.total_rpc_wall_time_ns);

    // A rewrite rule whose new prefix the keys do not carry is the caller's error.
    let rule = tipb::ChecksumRewriteRule {
        old_prefix: Some(Bytes::from_static(b"x")),
        new_prefix: Some(Bytes::from_static(b"nope")),
    };
    req.data = Bytes::from(
        tipb::ChecksumRequest { rule: Some(rule), ..Default::default() }.encode_to_vec(),
    );
    let reply = post(addr, export(&shard, &req), true).await;
    assert_eq!(reply.status, 500);
    assert!(decode_response(&reply.body).other_error.contains("new prefix"));
    let text = String::from_utf8(get(addr, "/metrics").await.body.to_vec()).unwrap();
    assert!(
        text.contains("tikv_worker_remote_checksum_request_counter{path=\"http\"} 2"),
        "{text}"
    );
    handle.shutdown().await.unwrap();
}

/// Mem-data v2 with a transaction file: the worker reads its chunk from the object store and
/// layers it over the shipped rows and SSTs — new rows appear, deletes hide rows, locks are
/// invisible — checked by a checksum of the visible rows computed here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transaction_files_are_read_from_the_store_and_layered_over_the_snapshot() {
    use common::row;
    use rcop_sst::txn::{OP_DELETE, OP_LOCK, OP_PUT, TxnChunkBuilder};
    let store = memory_store();
    let shard = build_shard(Arc::clone(&store)).await;
    let inner = |h: i64| record_key(h)[4..].to_vec();
    let mut b = TxnChunkBuilder::new(256);
    b.add(&inner(1), OP_DELETE, b"").unwrap();
    b.add(&inner(2), OP_DELETE, b"").unwrap();
    b.add(&inner(3), OP_LOCK, b"").unwrap();
    for h in 2001..=2010 {
        b.add(&inner(h), OP_PUT, &row(1, h)).unwrap();
    }
    store.put_txn_chunk(9001, Bytes::from(b.finish().unwrap())).await.unwrap();
    let refs = rcop_proto::enginepb::TxnFileRefs {
        txn_file_refs: vec![rcop_proto::enginepb::TxnFileRef {
            start_ts: 490,
            chunk_ids: vec![9001],
            version: 500,
            ..Default::default()
        }],
    };
    let handle = start(test_config(), Arc::clone(&store), 1 << 30, 8 << 30).await;
    let mut req = cop_request(&agg_dag());
    req.tp = rcop_proto::REQ_TYPE_CHECKSUM;
    req.paging_size = 0;
    req.data = Bytes::from(tipb::ChecksumRequest::default().encode_to_vec());
    let reply = post(handle.local_addr(), export_with_txn_files(&shard, &req, &refs), true).await;
    assert_eq!(reply.status, 200, "{:?}", String::from_utf8_lossy(&reply.body));
    let got = tipb::ChecksumResponse::decode(decode_response(&reply.body).data).unwrap();
    let (mut sum, mut kvs) = (0u64, 0u64);
    for h in (3..=1000i64).chain(2001..=2010) {
        if (7..=600).contains(&h) && (h - 7) % 70 == 0 {
            continue;
        }
        let value = if h > 1000 {
            row(1, h)
        } else if (50..=600).contains(&h) && h % 50 == 0 {
            row(6, -h)
        } else {
            row(h % 7, h * 10)
        };
        sum ^= crc64_xz(&[&record_key(h), &value]);
        kvs += 1;
    }
    assert_eq!((got.total_kvs, got.checksum), (Some(kvs), Some(sum)));
    // A missing chunk answers as a missing SST does: 500, not retried, naming the object.
    let missing = rcop_proto::enginepb::TxnFileRefs {
        txn_file_refs: vec![rcop_proto::enginepb::TxnFileRef {
            chunk_ids: vec![4242],
            version: 500,
            ..Default::default()
        }],
    };
    let reply =
        post(handle.local_addr(), export_with_txn_files(&shard, &req, &missing), false).await;
    assert_eq!(reply.status, 500, "{:?}", String::from_utf8_lossy(&reply.body));
    assert!(String::from_utf8_lossy(&reply.body).contains("not found"));
    handle.shutdown().await.unwrap();
}

/// A change set carrying an encrypted shard's data key (upstream's `_encryption` property) is
/// refused with 400 naming it — the storage node then runs the request itself — before any
/// file is read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_encrypted_shard_is_a_400_the_node_runs_locally() {
    let store = memory_store();
    let shard = build_shard(Arc::clone(&store)).await;
    let handle = start(test_config(), Arc::clone(&store), 1 << 30, 8 << 30).await;
    let gets = store.stats().gets;
    let body = export_with(&shard, &cop_request(&agg_dag()), |cs| {
        let props = cs.snapshot.as_mut().unwrap().properties.get_or_insert_with(Default::default);
        props.keys.push("_encryption".into());
        props.values.push(Bytes::from_static(&[1; 69]));
    });
    let reply = post(handle.local_addr(), body, false).await;
    assert_eq!(reply.status, 400);
    let text = String::from_utf8_lossy(&reply.body);
    assert!(text.contains("encrypted shard"), "{text}");
    assert_eq!(store.stats().gets, gets, "nothing was read");
    handle.shutdown().await.unwrap();
}
