//! Worker discovery over real TCP: workers listen on one port of several loopback addresses
//! (127.0.0.2, 127.0.0.3, …, all of Linux's 127/8 is local), and a resolver the test
//! steers answers a DNS name with a changing set of them — a Kubernetes headless service
//! whose pods come and go. Affinity across the changes, a request in flight across a swap,
//! failed answers, config updates, the task's timing, TLS verified against the name, and
//! the system resolver on `localhost`.

#![expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers outside #[test] fns unwrap known-good setup"
)]

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use prometheus::Registry;
use prost::Message;
use rcop_offload::{
    BoxFuture, Dispatch, Error, ManualClock, Offloader, RemoteError, Resolver, RoutingKey,
    SnapshotSource, SourceError, rendezvous_order,
};
use rcop_proto::coprocessor::{KeyRange, Request, Response};
use rcop_proto::enginepb::ChangeSet;
use rcop_wire::MemDataWriter;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

mod common;
use common::{NOW_MS, config, dag_request};
const NAME: &str = "workers.rcop.test";

/// A resolver answering each name with what the test last set; counts its calls.
#[derive(Debug, Default)]
struct Steered {
    answers: Mutex<HashMap<String, Result<Vec<IpAddr>, io::ErrorKind>>>,
    calls: AtomicUsize,
}

impl Steered {
    fn answer(&self, name: &str, hosts: &[u8]) {
        let ips = hosts.iter().map(|&h| IpAddr::V4(Ipv4Addr::new(127, 0, 0, h))).collect();
        self.answers.lock().unwrap().insert(name.to_owned(), Ok(ips));
    }

    fn fail(&self, name: &str, kind: io::ErrorKind) {
        self.answers.lock().unwrap().insert(name.to_owned(), Err(kind));
    }
}

impl Resolver for Steered {
    fn resolve<'a>(&'a self, name: &'a str) -> BoxFuture<'a, io::Result<Vec<IpAddr>>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let answer = self.answers.lock().unwrap().get(name).cloned();
        Box::pin(async move {
            match answer {
                Some(Ok(ips)) => Ok(ips),
                Some(Err(kind)) => Err(io::Error::from(kind)),
                None => Err(io::Error::new(io::ErrorKind::NotFound, format!("unknown {name}"))),
            }
        })
    }
}

/// Permits of a worker's gate: more requests than any test sends at once.
const GATE: u32 = 1 << 20;

/// A worker on one loopback address: answers every request with its address as the data,
/// after a permit of `gate` when the test holds requests back.
struct Worker {
    host: u8,
    served: Arc<AtomicUsize>,
    /// Requests that arrived (before the gate).
    arrived: Arc<AtomicUsize>,
    gate: Arc<Semaphore>,
    task: JoinHandle<()>,
}

impl Worker {
    fn start(host: u8, listener: TcpListener, tls: Option<TlsAcceptor>) -> Worker {
        let served = Arc::new(AtomicUsize::new(0));
        let arrived = Arc::new(AtomicUsize::new(0));
        let gate = Arc::new(Semaphore::new(GATE as usize));
        let (s, a, g) = (served.clone(), arrived.clone(), gate.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { return };
                let (served, arrived, gate, tls) = (s.clone(), a.clone(), g.clone(), tls.clone());
                tokio::spawn(async move {
                    let service = service_fn(move |req: hyper::Request<Incoming>| {
                        let (served, arrived, gate) =
                            (served.clone(), arrived.clone(), gate.clone());
                        async move {
                            req.into_body().collect().await?;
                            arrived.fetch_add(1, Ordering::SeqCst);
                            drop(gate.acquire().await.unwrap());
                            served.fetch_add(1, Ordering::SeqCst);
                            let answer = Response {
                                data: format!("127.0.0.{host}").into_bytes().into(),
                                ..Response::default()
                            };
                            Ok::<_, hyper::Error>(hyper::Response::new(Full::new(Bytes::from(
                                answer.encode_to_vec(),
                            ))))
                        }
                    });
                    let http = http1::Builder::new();
                    let _ = match tls {
                        None => http.serve_connection(TokioIo::new(stream), service).await,
                        Some(tls) => {
                            let Ok(stream) = tls.accept(stream).await else { return };
                            http.serve_connection(TokioIo::new(stream), service).await
                        }
                    };
                });
            }
        });
        Worker { host, served, arrived, gate, task }
    }

    fn served(&self) -> usize {
        self.served.load(Ordering::SeqCst)
    }

    /// Holds every later request until [`release`](Self::release).
    async fn hold(&self) {
        self.gate.acquire_many(GATE).await.unwrap().forget();
    }

    fn release(&self) {
        self.gate.add_permits(GATE as usize);
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Listeners on one port of each of `hosts` (127.0.0.h): a port free on the first address
/// may be taken on another, so a few ports are tried.
async fn bind_one_port(hosts: &[u8]) -> (u16, Vec<TcpListener>) {
    'port: for _ in 0..20 {
        let first = TcpListener::bind((Ipv4Addr::new(127, 0, 0, hosts[0]), 0)).await.unwrap();
        let port = first.local_addr().unwrap().port();
        let mut listeners = vec![first];
        for &h in &hosts[1..] {
            match TcpListener::bind((Ipv4Addr::new(127, 0, 0, h), port)).await {
                Ok(l) => listeners.push(l),
                Err(_) => continue 'port,
            }
        }
        return (port, listeners);
    }
    panic!("no port free on every address of {hosts:?}");
}

async fn workers(hosts: &[u8], tls: Option<TlsAcceptor>) -> (u16, Vec<Worker>) {
    let (port, listeners) = bind_one_port(hosts).await;
    let workers =
        hosts.iter().zip(listeners).map(|(&h, l)| Worker::start(h, l, tls.clone())).collect();
    (port, workers)
}

fn url(scheme: &str, host: u8, port: u16) -> String {
    format!("{scheme}://127.0.0.{host}:{port}/coprocessor")
}

/// A source whose every request is heavy enough to offload.
struct Heavy;

impl SnapshotSource for Heavy {
    fn estimated_range_blocks_size(&self, _: &[KeyRange]) -> Result<u64, SourceError> {
        Ok(1 << 40)
    }

    fn export(
        &self,
        _: &Request,
        mem_data: &mut MemDataWriter<'_>,
    ) -> Result<ChangeSet, SourceError> {
        mem_data.push(b"x\0\0\x01t_r1", 10, 11, b"value");
        Ok(ChangeSet::default())
    }
}

/// The worker URL that answered, and its data, of a dispatch that got an answer.
async fn answered_by(o: &Offloader, shard: u64) -> (String, String) {
    match o.dispatch(&dag_request(shard, 10_000), &Heavy).await {
        Dispatch::Respond { answer, worker: Some(worker), .. } => {
            let data = String::from_utf8(answer.response().data.to_vec()).unwrap();
            (worker.to_string(), data)
        }
        other => panic!("shard {shard}: {other:?}"),
    }
}

fn workers_of(o: &Offloader) -> Vec<String> {
    o.client().workers().iter().map(|w| w.to_string()).collect()
}

/// The worker the rendezvous hash picks for `shard` among `set`.
fn first_choice(set: &[String], shard: u64) -> String {
    set[rendezvous_order(set, RoutingKey { keyspace_id: 1, shard_id: shard })[0]].clone()
}

fn metric(registry: &Registry, name: &str, label: Option<&str>) -> f64 {
    for family in registry.gather() {
        if family.name() != name {
            continue;
        }
        let gauge = family.get_field_type() == prometheus::proto::MetricType::GAUGE;
        for m in family.get_metric() {
            if label.is_none_or(|v| m.get_label().iter().any(|l| l.value() == v)) {
                return if gauge { m.get_gauge().get_value() } else { m.get_counter().get_value() };
            }
        }
    }
    0.0
}

/// Waits up to 10 s for `check`.
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(10);
    while !check() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

const SHARDS: u64 = 60;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shards_keep_their_worker_while_the_name_grows_shrinks_and_fails() {
    let (port, w) = workers(&[2, 3, 4], None).await;
    let resolver = Arc::new(Steered::default());
    resolver.answer(NAME, &[3, 2]);
    let registry = Registry::new();
    let name_url = format!("http://Workers.RCOP.test:{port}");
    // An hour between rounds: every round in this test is one it asks for.
    let o = Arc::new(
        Offloader::builder(config(&[&name_url], "remote-coprocessor-resolve-interval = \"1h\""))
            .clock(Arc::new(ManualClock::new(NOW_MS)))
            .registry(&registry)
            .resolver(resolver.clone())
            .build()
            .unwrap(),
    );
    o.client().resolve_workers().await.unwrap();
    let two = vec![url("http", 2, port), url("http", 3, port)];
    assert_eq!(workers_of(&o), two, "one worker per address, sorted, the name lower-cased");
    assert_eq!(metric(&registry, "rcop_offload_workers", None), 2.0);

    // Two workers: each shard lands on its rendezvous choice among the addresses.
    let mut before = Vec::new();
    for shard in 0..SHARDS {
        let (worker, data) = answered_by(&o, shard).await;
        assert_eq!(worker, first_choice(&two, shard), "shard {shard}");
        assert!(worker.contains(&data), "{worker} answered as {data}");
        before.push(worker);
    }
    assert!(w[0].served() > 0 && w[1].served() > 0, "both workers have shards");
    assert_eq!(w[2].served(), 0);

    // A third pod: only shards that now prefer it move; the others stay where their
    // blocks are cached.
    resolver.answer(NAME, &[4, 2, 3]);
    o.client().resolve_workers().await.unwrap();
    let three = vec![url("http", 2, port), url("http", 3, port), url("http", 4, port)];
    assert_eq!(workers_of(&o), three);
    let mut moved = 0;
    for shard in 0..SHARDS {
        let (worker, _) = answered_by(&o, shard).await;
        if worker == before[shard as usize] {
            continue;
        }
        assert_eq!(worker, three[2], "shard {shard} moved to an old worker");
        moved += 1;
    }
    assert!((5..=40).contains(&moved), "{moved} of {SHARDS} shards moved to the new worker");
    assert_eq!(w[2].served(), moved);

    // A request to 127.0.0.2 is in flight when the name shrinks to 127.0.0.3 alone.
    let shard = (0..SHARDS).find(|&s| first_choice(&three, s) == three[0]).unwrap();
    w[0].hold().await;
    let arrived = w[0].arrived.load(Ordering::SeqCst);
    let in_flight = tokio::spawn({
        let o = o.clone();
        async move { answered_by(&o, shard).await }
    });
    eventually("the request to reach 127.0.0.2", || w[0].arrived.load(Ordering::SeqCst) > arrived)
        .await;
    resolver.answer(NAME, &[3]);
    o.client().resolve_workers().await.unwrap();
    assert_eq!(workers_of(&o), [url("http", 3, port)]);
    assert_eq!(metric(&registry, "rcop_offload_workers", None), 1.0);
    w[0].release();
    let (worker, data) = in_flight.await.unwrap();
    assert_eq!((worker.as_str(), data.as_str()), (three[0].as_str(), "127.0.0.2"));
    // Its next request goes to the one worker left.
    assert_eq!(answered_by(&o, shard).await.0, url("http", 3, port));

    // A failed or empty answer keeps the last good set, and is counted.
    resolver.fail(NAME, io::ErrorKind::ConnectionRefused);
    match o.client().resolve_workers().await {
        Err(Error::Resolve { name, source }) => {
            assert_eq!((name.as_str(), source.kind()), (NAME, io::ErrorKind::ConnectionRefused));
        }
        other => panic!("{other:?}"),
    }
    resolver.answer(NAME, &[]);
    assert!(matches!(o.client().resolve_workers().await, Err(Error::Resolve { .. })));
    assert_eq!(workers_of(&o), [url("http", 3, port)]);
    let errors = "rcop_offload_worker_resolve_errors_total";
    assert_eq!(metric(&registry, errors, Some("error")), 1.0);
    assert_eq!(metric(&registry, errors, Some("empty")), 1.0);
    assert_eq!(answered_by(&o, 1).await.0, url("http", 3, port));

    // A config update that keeps the name keeps its addresses (no shard moves back to the
    // bare name); one that drops it drops them.
    o.update(&config(
        &[&name_url],
        "remote-coprocessor-resolve-interval = \"1h\"\nfallback-to-local = true",
    ))
    .unwrap();
    assert_eq!(workers_of(&o), [url("http", 3, port)]);
    let literal = url("http", 4, port);
    o.update(&config(&[&literal], "")).unwrap();
    assert_eq!(workers_of(&o), std::slice::from_ref(&literal));
    assert_eq!(answered_by(&o, 1).await.0, literal);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_task_resolves_at_start_on_update_and_every_interval_and_stops_with_the_offloader() {
    let port = 19_000;
    let resolver = Arc::new(Steered::default());
    resolver.answer("a.rcop.test", &[2]);
    resolver.answer("b.rcop.test", &[9]);
    let a = format!("http://a.rcop.test:{port}");
    let o = Offloader::builder(config(&[&a], "remote-coprocessor-resolve-interval = \"1h\""))
        .resolver(resolver.clone())
        .build()
        .unwrap();
    // Before the first answer the name is a worker as it is; the task resolves it at once.
    eventually("the first round", || workers_of(&o) == [url("http", 2, port)]).await;

    // An update wakes the task: the new name is resolved long before the hour is up, and
    // the kept name's new answer comes with it.
    resolver.answer("a.rcop.test", &[2, 3]);
    let b = format!("http://b.rcop.test:{port}");
    o.update(&config(&[&a, &b], "remote-coprocessor-resolve-interval = \"1h\"")).unwrap();
    let both = [url("http", 2, port), url("http", 3, port), url("http", 9, port)];
    eventually("the round after the update", || workers_of(&o) == both).await;

    // Every second now: a changed answer arrives without anyone asking.
    o.update(&config(&[&a, &b], "remote-coprocessor-resolve-interval = \"1s\"")).unwrap();
    resolver.answer("a.rcop.test", &[3]);
    eventually("a periodic round", || {
        workers_of(&o) == [url("http", 3, port), url("http", 9, port)]
    })
    .await;
    // Two more rounds (two names each) take at least one interval.
    let (calls, started) = (resolver.calls.load(Ordering::SeqCst), Instant::now());
    eventually("two more rounds", || resolver.calls.load(Ordering::SeqCst) >= calls + 4).await;
    assert!(started.elapsed() >= Duration::from_millis(900), "rounds come once per interval");

    // "0s" turns discovery off: names are workers as they are, and nothing is resolved.
    o.update(&config(&[&a], "remote-coprocessor-resolve-interval = \"0s\"")).unwrap();
    assert_eq!(workers_of(&o), [format!("{a}/coprocessor")]);

    // The task holds the resolver; it lets go when the offloader drops.
    assert!(Arc::strong_count(&resolver) > 1);
    drop(o);
    eventually("the task to stop", || Arc::strong_count(&resolver) == 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_system_resolver_expands_localhost() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let worker = Worker::start(1, listener, None);
    let registry = Registry::new();
    let o = Offloader::builder(config(&[&format!("http://localhost:{port}")], ""))
        .clock(Arc::new(ManualClock::new(NOW_MS)))
        .registry(&registry)
        .build()
        .unwrap();
    o.client().resolve_workers().await.unwrap();
    let set = workers_of(&o);
    assert!(set.contains(&url("http", 1, port)), "{set:?}");
    assert!(set.iter().all(|w| !w.contains("localhost")), "{set:?}");
    // Whatever else localhost resolves to here (::1), 127.0.0.1 answers.
    for shard in 0..4 {
        assert_eq!(answered_by(&o, shard).await.1, "127.0.0.1");
    }
    assert_eq!(worker.served(), 4);
    assert_eq!(metric(&registry, "rcop_offload_workers", None), set.len() as f64);
}

#[test]
fn discovery_without_a_runtime_is_a_typed_error() {
    let resolver: Arc<dyn Resolver> = Arc::new(Steered::default());
    match Offloader::builder(config(&["http://w.rcop.test:1"], ""))
        .resolver(resolver.clone())
        .build()
    {
        Err(Error::NoRuntime) => {}
        other => panic!("{other:?}"),
    }
    // Off, or only IP literals: no task needed.
    let off = config(&["http://w.rcop.test:1"], "remote-coprocessor-resolve-interval = \"0s\"");
    let o = Offloader::builder(off).resolver(resolver.clone()).build().unwrap();
    assert_eq!(workers_of(&o), ["http://w.rcop.test:1/coprocessor"]);
    let o =
        Offloader::builder(config(&["http://127.0.0.1:1"], "")).resolver(resolver).build().unwrap();
    // A name added later needs the task: refused, and nothing changes.
    assert!(matches!(o.update(&config(&["http://w.rcop.test:1"], "")), Err(Error::NoRuntime)));
    assert_eq!(workers_of(&o), ["http://127.0.0.1:1/coprocessor"]);
    // A runtime given to the builder runs the task wherever the offloader was built.
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let steered = Arc::new(Steered::default());
    steered.answer("w.rcop.test", &[5]);
    let o = Offloader::builder(config(&["http://w.rcop.test:1"], ""))
        .resolver(steered)
        .runtime(runtime.handle().clone())
        .build()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    while workers_of(&o) != ["http://127.0.0.5:1/coprocessor"] {
        assert!(Instant::now() < until, "{:?}", workers_of(&o));
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_addresses_are_verified_against_the_name() {
    let dir = tempfile::tempdir().unwrap();
    let pki = rcop_tls::TestPki::new(dir.path(), "discovery").unwrap();
    // The certificate names the service only: no address of any pod.
    let worker_tls = pki.issue("worker", &[NAME]).unwrap();
    let node_tls = pki.issue("node", &[]).unwrap();
    let server = worker_tls.server(&[b"http/1.1"]).unwrap();
    let (port, w) = workers(&[2, 3], Some(TlsAcceptor::from(server.config()))).await;
    let client_tls = rcop_tls::ClientConfig::clone(&node_tls.client_config(&[]).unwrap());

    let resolver = Arc::new(Steered::default());
    resolver.answer(NAME, &[2, 3]);
    let o = Offloader::builder(config(&[&format!("https://{NAME}:{port}")], ""))
        .clock(Arc::new(ManualClock::new(NOW_MS)))
        .tls_config(client_tls.clone())
        .resolver(resolver)
        .build()
        .unwrap();
    o.client().resolve_workers().await.unwrap();
    let set = vec![url("https", 2, port), url("https", 3, port)];
    assert_eq!(workers_of(&o), set);
    for shard in 0..16 {
        let (worker, data) = answered_by(&o, shard).await;
        assert_eq!(worker, first_choice(&set, shard));
        assert!(worker.contains(&data));
    }
    assert!(w[0].served() > 0 && w[1].served() > 0, "both pods served over TLS");

    // The same address written as a literal is verified against the address, which the
    // certificate does not name: the handshake fails and nothing is sent.
    let served = w[0].served();
    let literal = Offloader::builder(config(&[&url("https", 2, port)], "fallback-to-local = true"))
        .clock(Arc::new(ManualClock::new(NOW_MS)))
        .tls_config(client_tls)
        .build()
        .unwrap();
    match literal.dispatch(&dag_request(1, 10_000), &Heavy).await {
        Dispatch::FallbackLocal { error: RemoteError::AllWorkersFailed { last, .. }, .. } => {
            assert!(matches!(*last, RemoteError::Network { .. }), "{last:?}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(w[0].served(), served);
    assert_eq!(w[0].host, 2);
}
