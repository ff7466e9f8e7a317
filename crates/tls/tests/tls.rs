//! `[security]` over real TCP on 127.0.0.1 with certificates made at run time: mutual TLS,
//! foreign and missing client certificates, the `cert-allowed-cn` allow-list, optional client
//! certificates, certificate reload, the handshake timeout, and gRPC through `incoming` and
//! `GrpcConnector`.
#![expect(clippy::unwrap_used, reason = "test fixtures")]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rcop_tls::{ClientCertMode, Error, SecurityConfig, TestPki, TlsServer};
use rustls::pki_types::ServerName;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str) -> Dir {
        let p = std::env::temp_dir().join(format!("rcop-tls-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Dir(p)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Accepts one connection with `server`; echoes 4 bytes back when it is accepted.
async fn serve_one(
    server: Arc<TlsServer>,
) -> (std::net::SocketAddr, tokio::task::JoinHandle<rcop_tls::Result<Option<rcop_tls::PeerIdentity>>>)
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        let (mut stream, peer) = server.accept(tcp, Duration::from_millis(500)).await?;
        let mut buf = [0u8; 4];
        stream.read_exact(&mut buf).await.map_err(Error::Handshake)?;
        stream.write_all(&buf).await.map_err(Error::Handshake)?;
        stream.flush().await.map_err(Error::Handshake)?;
        Ok(peer)
    });
    (addr, task)
}

/// Connects with `client` and exchanges 4 bytes; the server certificate's DER.
async fn talk(
    addr: std::net::SocketAddr,
    client: Arc<rustls::ClientConfig>,
) -> std::io::Result<Vec<u8>> {
    let tcp = TcpStream::connect(addr).await?;
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let mut s = tokio_rustls::TlsConnector::from(client).connect(name, tcp).await?;
    s.write_all(b"ping").await?;
    let mut buf = [0u8; 4];
    s.read_exact(&mut buf).await?;
    assert_eq!(&buf, b"ping");
    Ok(s.get_ref().1.peer_certificates().unwrap()[0].to_vec())
}

fn no_client_cert(pki_ca: &std::path::Path) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    let pem = std::fs::read(pki_ca).unwrap();
    for c in rustls::pki_types::CertificateDer::pem_slice_iter(&pem) {
        roots.add(c.unwrap()).unwrap();
    }
    use rustls::pki_types::pem::PemObject;
    Arc::new(
        rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth(),
    )
}

#[test]
fn config_parses_upstreams_keys_and_names_bad_values() {
    let c: SecurityConfig = toml::from_str(
        r#"
        ca-path = "/etc/rcop/ca.pem"
        cert-path = "/etc/rcop/node.pem"
        key-path = "/etc/rcop/node.key"
        cert-allowed-cn = ["storage-node", "tidb"]
        client-cert = "optional"
        cert-reload-interval = "1m"
        "#,
    )
    .unwrap();
    assert!(c.enabled());
    c.validate().unwrap();
    assert_eq!(c.client_cert, ClientCertMode::Optional);
    assert_eq!(c.cert_allowed_cn, ["storage-node", "tidb"]);
    assert_eq!(c.cert_reload_interval.0, Duration::from_secs(60));
    let off = SecurityConfig::default();
    assert!(!off.enabled());
    off.validate().unwrap();
    assert_eq!(off.client_cert, ClientCertMode::Required);
    for (text, key) in [
        ("ca-path = \"a\"", "ca-path"),
        ("ca-path = \"a\"\ncert-path = \"b\"", "ca-path"),
        ("cert-allowed-cn = [\"x\"]", "cert-allowed-cn"),
        (
            "ca-path = \"a\"\ncert-path = \"b\"\nkey-path = \"c\"\ncert-allowed-cn = [\" \"]",
            "cert-allowed-cn",
        ),
        (
            "ca-path = \"a\"\ncert-path = \"b\"\nkey-path = \"c\"\ncert-reload-interval = \"0s\"",
            "cert-reload-interval",
        ),
    ] {
        let c: SecurityConfig = toml::from_str(text).unwrap();
        match c.validate() {
            Err(Error::Config { key: k, .. }) => assert_eq!(k, key, "{text}"),
            other => panic!("{text}: {other:?}"),
        }
    }
    assert!(toml::from_str::<SecurityConfig>("client-cert = \"sometimes\"").is_err());
    assert!(toml::from_str::<SecurityConfig>("unknown = 1").is_err());
}

#[test]
fn missing_or_bad_files_are_typed_errors() {
    let dir = Dir::new("files");
    let pki = TestPki::new(&dir.0, "files").unwrap();
    let good = pki.issue("worker", &["127.0.0.1"]).unwrap();
    let missing =
        SecurityConfig::from_paths(dir.0.join("nope.pem"), &good.cert_path, &good.key_path);
    assert!(matches!(missing.server(&[]), Err(Error::Read { .. })));
    let junk = dir.0.join("junk.pem");
    std::fs::write(&junk, b"not pem at all").unwrap();
    let bad_cert = SecurityConfig::from_paths(&good.ca_path, &junk, &good.key_path);
    assert!(matches!(bad_cert.server(&[]), Err(Error::Pem { .. })), "{:?}", bad_cert.server(&[]));
    let bad_key = SecurityConfig::from_paths(&good.ca_path, &good.cert_path, &junk);
    assert!(matches!(bad_key.client_config(&[]), Err(Error::Pem { .. })));
    // A key of another certificate.
    let other = pki.issue("other", &["127.0.0.1"]).unwrap();
    let mismatched = SecurityConfig::from_paths(&good.ca_path, &good.cert_path, &other.key_path);
    assert!(mismatched.server(&[]).is_err());
    assert!(matches!(SecurityConfig::default().server(&[]), Err(Error::Config { .. })));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutual_tls_accepts_the_cas_clients_and_refuses_others() {
    let dir = Dir::new("mtls");
    let pki = TestPki::new(&dir.0.join("a"), "a").unwrap();
    let foreign = TestPki::new(&dir.0.join("b"), "b").unwrap();
    let worker = pki.issue("worker", &["127.0.0.1", "localhost"]).unwrap();
    let node = pki.issue("storage-node", &["node.local"]).unwrap();
    let intruder = pki.issue("intruder", &[]).unwrap();
    let stranger = foreign.issue("storage-node", &[]).unwrap();

    // No allow-list: any certificate of the CA.
    let server = Arc::new(worker.server(&[b"http/1.1"]).unwrap());
    let (addr, task) = serve_one(Arc::clone(&server)).await;
    talk(addr, node.client_config(&[b"http/1.1"]).unwrap()).await.unwrap();
    let peer = task.await.unwrap().unwrap().unwrap();
    assert_eq!(peer.common_names, ["storage-node"]);
    assert_eq!(peer.dns_names, ["node.local"]);

    // A certificate of another CA, and none at all, fail the handshake.
    for client in
        [SecurityConfig::from_paths(foreign.ca_path(), &stranger.cert_path, &stranger.key_path)]
    {
        // The client trusts the worker's CA but presents a foreign certificate.
        let mut c = client;
        c.ca_path = pki.ca_path();
        let (addr, task) = serve_one(Arc::clone(&server)).await;
        let _ = talk(addr, c.client_config(&[]).unwrap()).await;
        assert!(matches!(task.await.unwrap(), Err(Error::Handshake(_))));
    }
    let (addr, task) = serve_one(Arc::clone(&server)).await;
    let _ = talk(addr, no_client_cert(&pki.ca_path())).await;
    assert!(matches!(task.await.unwrap(), Err(Error::Handshake(_))));

    // The allow-list: storage-node passes, intruder (same CA) does not.
    let listed = Arc::new(worker.clone().with_allowed_cn(["storage-node"]).server(&[]).unwrap());
    let (addr, task) = serve_one(Arc::clone(&listed)).await;
    talk(addr, node.client_config(&[]).unwrap()).await.unwrap();
    task.await.unwrap().unwrap();
    let (addr, task) = serve_one(Arc::clone(&listed)).await;
    let _ = talk(addr, intruder.client_config(&[]).unwrap()).await;
    let e = task.await.unwrap().unwrap_err();
    assert!(matches!(&e, Error::NotAllowed(who) if who.contains("intruder")), "{e}");
    assert_eq!(e.reason_label(), "not_allowed");
    // A SAN DNS name matches too.
    let by_dns = Arc::new(worker.clone().with_allowed_cn(["node.local"]).server(&[]).unwrap());
    let (addr, task) = serve_one(by_dns).await;
    talk(addr, node.client_config(&[]).unwrap()).await.unwrap();
    task.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn optional_client_certificates() {
    let dir = Dir::new("optional");
    let pki = TestPki::new(&dir.0, "opt").unwrap();
    let worker =
        pki.issue("worker", &["127.0.0.1"]).unwrap().with_client_cert(ClientCertMode::Optional);
    let server = Arc::new(worker.server(&[]).unwrap());
    let (addr, task) = serve_one(Arc::clone(&server)).await;
    talk(addr, no_client_cert(&pki.ca_path())).await.unwrap();
    assert_eq!(task.await.unwrap().unwrap(), None, "no certificate, no identity");
    // With an allow-list, a client without a certificate is refused.
    let listed = Arc::new(worker.with_allowed_cn(["storage-node"]).server(&[]).unwrap());
    let (addr, task) = serve_one(listed).await;
    let _ = talk(addr, no_client_cert(&pki.ca_path())).await;
    assert!(matches!(task.await.unwrap(), Err(Error::NotAllowed(_))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificates_are_reloaded_when_their_files_change() {
    let dir = Dir::new("reload");
    let pki = TestPki::new(&dir.0, "reload").unwrap();
    let worker = pki.issue("worker", &["127.0.0.1"]).unwrap();
    let node = pki.issue("storage-node", &[]).unwrap().client_config(&[]).unwrap();
    let server = Arc::new(
        worker.clone().with_cert_reload_interval(Duration::from_millis(20)).server(&[]).unwrap(),
    );
    let (addr, task) = serve_one(Arc::clone(&server)).await;
    let first = talk(addr, Arc::clone(&node)).await.unwrap();
    task.await.unwrap().unwrap();

    // A new certificate for the same name (new key, new serial) replaces the files.
    std::thread::sleep(Duration::from_millis(30));
    pki.issue("worker", &["127.0.0.1"]).unwrap();
    std::thread::sleep(Duration::from_millis(30));
    let (addr, task) = serve_one(Arc::clone(&server)).await;
    let second = talk(addr, Arc::clone(&node)).await.unwrap();
    task.await.unwrap().unwrap();
    assert_ne!(first, second, "new connections get the new certificate");

    // A broken file keeps the last good certificate.
    std::fs::write(&worker.cert_path, b"-----BEGIN CERTIFICATE-----\ngarbage\n").unwrap();
    std::thread::sleep(Duration::from_millis(30));
    let (addr, task) = serve_one(Arc::clone(&server)).await;
    let third = talk(addr, node).await.unwrap();
    task.await.unwrap().unwrap();
    assert_eq!(second, third);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_client_is_dropped_at_the_handshake_timeout() {
    let dir = Dir::new("timeout");
    let pki = TestPki::new(&dir.0, "timeout").unwrap();
    let server = Arc::new(pki.issue("worker", &["127.0.0.1"]).unwrap().server(&[]).unwrap());
    let (addr, task) = serve_one(server).await;
    let _silent = TcpStream::connect(addr).await.unwrap();
    let started = std::time::Instant::now();
    let e = task.await.unwrap().unwrap_err();
    assert!(matches!(e, Error::HandshakeTimeout(_)), "{e}");
    assert!(started.elapsed() < Duration::from_secs(3));
}
