//! Slow and idle clients over real TCP on 127.0.0.1: a slow-loris crowd larger than
//! `max-connections` is dropped at `header-read-timeout` while a well-behaved client is still
//! served; a stalled body gets 408 at `body-read-timeout`; the open-connection gauge returns to
//! zero.
#![expect(clippy::unwrap_used, reason = "test fixtures")]

use std::sync::Arc;
use std::time::{Duration, Instant};

use rcop_limiter::ManualMemoryProbe;
use rcop_sst::{Backend, SstStore, StoreConfig};
use rcop_worker::{Worker, WorkerConfig, WorkerHandle};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn start() -> WorkerHandle {
    let config = WorkerConfig::from_toml(
        "addr = \"127.0.0.1:0\"\nmax-connections = 8\nheader-read-timeout = \"300ms\"\n\
         body-read-timeout = \"300ms\"",
    )
    .unwrap();
    let store = Arc::new(
        SstStore::from_config(&StoreConfig::default().with_backend(Backend::Memory)).unwrap(),
    );
    Worker::builder(config)
        .store(store)
        .memory_probe(Arc::new(ManualMemoryProbe::new(1 << 30, 8 << 30)))
        .cores(2)
        .build()
        .unwrap()
        .bind()
        .await
        .unwrap()
        .spawn()
}

/// Sends `request` on a new connection and reads until the server closes; the status line.
async fn exchange(addr: std::net::SocketAddr, request: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(request).await.unwrap();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).lines().next().unwrap_or_default().to_owned()
}

fn gauge(text: &str, name: &str) -> i64 {
    text.lines().find_map(|l| l.strip_prefix(name)?.trim().parse().ok()).unwrap_or(-1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_loris_is_dropped_and_others_are_served() {
    let worker = start().await;
    let addr = worker.local_addr();

    // Five times `max-connections` clients that never finish their headers.
    let mut loris = Vec::new();
    for _ in 0..40 {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(b"POST /coprocessor HTTP/1.1\r\nHost: x\r\nX-Slow: ").await.unwrap();
        loris.push(s);
    }
    let started = Instant::now();
    let healthz = exchange(addr, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let status = tokio::time::timeout(Duration::from_secs(8), healthz).await.unwrap();
    assert!(status.contains(" 200 "), "{status:?}");
    let waited = started.elapsed();
    // Each slow client is closed by the server, not left holding a slot.
    for mut s in loris {
        let mut buf = [0u8; 256];
        let closed = tokio::time::timeout(Duration::from_secs(5), async {
            loop {
                match s.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {} // a 408 before the close, depending on the hyper version
                }
            }
        })
        .await;
        assert!(closed.is_ok(), "a slow client's connection stays open");
    }
    eprintln!("well-behaved client served after {waited:?} behind 40 slow ones");

    // A body that stalls after 10 of 1000 bytes: 408 at body-read-timeout.
    let status = exchange(
        addr,
        b"POST /coprocessor HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n0123456789",
    )
    .await;
    assert!(status.contains(" 408 "), "{status:?}");

    tokio::time::sleep(Duration::from_millis(400)).await;
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await.unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.unwrap();
    let text = String::from_utf8_lossy(&out);
    assert_eq!(gauge(&text, "rcop_worker_open_connections"), 1, "only the scrape's own");
    assert!(
        text.contains("tikv_worker_remote_cop_failed_requests_counter{type=\"body_timeout\"} 1")
    );
    worker.shutdown().await.unwrap();
}
