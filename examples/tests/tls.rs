//! `[security]` end to end on loopback, with certificates made at run time: a storage node
//! offloads to a TLS worker (`https://`, its certificate as identity), TiDB calls the
//! worker's gRPC `cop-addr` over TLS and the worker fetches the delegate from the node's TLS
//! gRPC endpoint; answers equal local execution. Clients outside `cert-allowed-cn`, without
//! a certificate or speaking plain HTTP are refused and counted; HTTP/2 is chosen by ALPN.
#![expect(clippy::unwrap_used, reason = "fixture setup in helpers")]

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rcop_examples::{LoadSpec, NodeConfig, Path, StorageNode, dags};
use rcop_limiter::ManualMemoryProbe;
use rcop_proto::tikvpb::tikv_client::TikvClient;
use rcop_sst::{Backend, SstStore, StoreConfig};
use rcop_tls::{GrpcConnector, SecurityConfig, TestPki};
use rcop_worker::{GrpcServer, Worker, WorkerConfig};
use rustls::pki_types::ServerName;
use tonic::transport::{Channel, Endpoint};

fn metric(text: &str, series: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series).map(|v| v.trim().parse().unwrap()))
        .unwrap_or(0)
}

async fn tidb(
    addr: SocketAddr,
    who: &SecurityConfig,
) -> Result<TikvClient<Channel>, tonic::transport::Error> {
    let connector = GrpcConnector::new(who.client_config(&[b"h2"]).unwrap());
    let channel = Endpoint::from_shared(format!("https://{addr}"))
        .unwrap()
        .connect_with_connector(connector)
        .await?;
    Ok(TikvClient::new(channel).max_decoding_message_size(usize::MAX))
}

/// The request TiDB sends: region 7, leader peer on store 1.
fn tidb_request(node: &StorageNode, query: &dags::Query) -> rcop_proto::coprocessor::Request {
    let prefix = rcop_examples::tpch::keyspace_prefix(node.keyspace_id()).unwrap();
    let mut req = dags::request(query, node.keyspace_id(), &prefix, 7, dags::tso_now());
    let ctx = req.context.get_or_insert_with(Default::default);
    ctx.region_epoch = Some(rcop_proto::metapb::RegionEpoch { conf_ver: 1, version: 3 });
    ctx.peer = Some(rcop_proto::metapb::Peer { id: 71, store_id: 1, ..Default::default() });
    req
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_ways_over_mutual_tls_equal_local_and_strangers_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::new(&dir.path().join("pki"), "rcop").unwrap();
    let sans = ["127.0.0.1", "localhost"];
    let worker_sec = pki.issue("worker", &sans).unwrap().with_allowed_cn(["storage-node", "tidb"]);
    let node_sec = pki.issue("storage-node", &sans).unwrap().with_allowed_cn(["worker"]);
    let tidb_sec = pki.issue("tidb", &[]).unwrap();
    let intruder = pki.issue("intruder", &[]).unwrap();

    let store = Arc::new(
        SstStore::from_config(&StoreConfig::default().with_backend(Backend::Memory)).unwrap(),
    );
    // The node's delegate endpoint is bound first: the worker's [delegate] names it.
    let node_grpc = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let node_grpc_addr = node_grpc.local_addr().unwrap();
    let config = WorkerConfig::from_toml(&format!(
        "addr = \"127.0.0.1:0\"\ncop-block-cache-size = \"16MiB\"\n\
         [delegate]\nstores = {{ \"1\" = \"{node_grpc_addr}\" }}"
    ))
    .unwrap()
    .with_security(worker_sec.clone());
    let server = Worker::builder(config)
        .store(Arc::clone(&store))
        .memory_probe(Arc::new(ManualMemoryProbe::new(1 << 30, 8 << 30)))
        .cores(2)
        .build()
        .unwrap()
        .bind()
        .await
        .unwrap();
    let worker = Arc::clone(server.worker());
    let cop = GrpcServer::bind(Arc::clone(&worker), SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap()
        .spawn()
        .unwrap();
    let http = server.spawn();
    let worker_addr = http.local_addr();

    let kvengine = rcop_offload::Config::from_toml_str(&format!(
        "remote-coprocessor-addr = \"https://{worker_addr}\"\n\
         remote-coprocessor-min-blocks-size = \"256KiB\""
    ))
    .unwrap();
    let node_cfg = NodeConfig { kvengine, security: node_sec.clone(), ..NodeConfig::default() };
    let node = StorageNode::new(&node_cfg, Arc::clone(&store)).unwrap();
    let spec = LoadSpec { scale_factor: 0.002, memtable_tail: 250, ..LoadSpec::default() };
    node.load(&spec, dags::tso_now(), |_| {}).await.unwrap();
    let node = Arc::new(node);
    tokio::spawn(Arc::clone(&node).serve_grpc(node_grpc, std::future::pending()));

    // The second way: node -> worker over https, the node's certificate its identity.
    let q6 = dags::q6().unwrap();
    let req = tidb_request(&node, &q6);
    let (resp, path, _) = node.handle(req.clone()).await;
    assert!(matches!(path, Path::Remote { .. }), "{path}");
    assert!(resp.other_error.is_empty() && resp.region_error.is_none(), "{resp:?}");
    assert_eq!(resp.data, node.execute_local(&req).data, "Q6 over https differs from local");

    // The first way: TiDB -> worker (TLS) -> node (TLS) -> worker -> TiDB.
    let mut client = tidb(cop.local_addr(), &tidb_sec).await.unwrap();
    for query in [dags::q1().unwrap(), q6] {
        let req = tidb_request(&node, &query);
        let resp = client.coprocessor(req.clone()).await.unwrap().into_inner();
        assert!(resp.other_error.is_empty() && resp.region_error.is_none(), "{resp:?}");
        assert_eq!(resp.data, node.execute_local(&req).data, "{} delegated over TLS", query.name);
    }

    // A certificate of the CA but outside cert-allowed-cn: refused on both listeners.
    let refused = match tidb(cop.local_addr(), &intruder).await {
        Err(_) => true,
        Ok(mut c) => c.coprocessor(tidb_request(&node, &dags::q6().unwrap())).await.is_err(),
    };
    assert!(refused, "an intruder's call must fail");
    let tls = intruder.client_config(&[b"http/1.1"]).unwrap();
    let tcp = tokio::net::TcpStream::connect(worker_addr).await.unwrap();
    let name = ServerName::try_from("127.0.0.1").unwrap();
    if let Ok(s) = tokio_rustls::TlsConnector::from(tls).connect(name, tcp).await {
        // The handshake may finish before the server checks the identity; nothing is served.
        let (mut sender, conn) =
            hyper::client::conn::http1::handshake(TokioIo::new(s)).await.unwrap();
        tokio::spawn(conn);
        let req = hyper::Request::get("/healthz")
            .header("host", "x")
            .body(Empty::<Bytes>::new())
            .unwrap();
        assert!(sender.send_request(req).await.is_err(), "the intruder gets no answer");
    }
    // Plain HTTP to the TLS port: no answer either.
    let tcp = tokio::net::TcpStream::connect(worker_addr).await.unwrap();
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await.unwrap();
    tokio::spawn(conn);
    let req =
        hyper::Request::get("/healthz").header("host", "x").body(Empty::<Bytes>::new()).unwrap();
    let plain =
        tokio::time::timeout(std::time::Duration::from_secs(15), sender.send_request(req)).await;
    assert!(!matches!(plain, Ok(Ok(ref r)) if r.status() == 200), "plain HTTP must not be served");

    // HTTP/2 by ALPN, with the node's certificate.
    let tls = node_sec.client_config(&[b"h2"]).unwrap();
    let tcp = tokio::net::TcpStream::connect(worker_addr).await.unwrap();
    let s = tokio_rustls::TlsConnector::from(tls)
        .connect(ServerName::try_from("127.0.0.1").unwrap(), tcp)
        .await
        .unwrap();
    assert_eq!(s.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let (mut sender, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(s)).await.unwrap();
    tokio::spawn(conn);
    let refused = |text: &str, listener: &str, reason: &str| {
        metric(
            text,
            &format!(
                "rcop_worker_tls_refused_total{{listener=\"{listener}\",reason=\"{reason}\"}}"
            ),
        )
    };
    // The client may see its connection fail before the server has counted the refusal:
    // read the metrics until the plain-HTTP refusal shows, for at most 10 s.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    let text = loop {
        let req = hyper::Request::get(format!("https://{worker_addr}/metrics"))
            .body(Empty::<Bytes>::new())
            .unwrap();
        let resp = sender.send_request(req).await.unwrap();
        assert_eq!(resp.status(), 200);
        let text = String::from_utf8(resp.into_body().collect().await.unwrap().to_bytes().to_vec())
            .unwrap();
        if refused(&text, "http", "handshake") >= 1 || tokio::time::Instant::now() > deadline {
            break text;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    let refused = |listener: &str, reason: &str| refused(&text, listener, reason);
    assert!(refused("grpc", "not_allowed") >= 1, "{text}");
    assert!(refused("http", "not_allowed") + refused("http", "handshake") >= 1, "{text}");
    assert!(refused("http", "handshake") >= 1, "plain HTTP fails the handshake: {text}");
    assert_eq!(metric(&text, "tikv_worker_remote_cop_dag_request_counter{path=\"http\"}"), 1);
    assert_eq!(metric(&text, "tikv_worker_remote_cop_dag_request_counter{path=\"grpc\"}"), 2);

    drop(client);
    cop.shutdown().await.unwrap();
    http.shutdown().await.unwrap();
}
