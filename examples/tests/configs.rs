//! The sample configurations in `examples/config/` load, `--print-default-config` prints a
//! file that loads back to the defaults, and `--check-config` checks the object store for
//! real: a local directory, and an in-process S3 on 127.0.0.1 with the right and the wrong
//! credentials.
#![expect(clippy::unwrap_used, reason = "process and file plumbing")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use rcop_examples::NodeConfig;
use rcop_worker::WorkerConfig;

fn config_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("config")
}

#[test]
fn every_sample_config_loads() {
    let mut seen = 0;
    for entry in std::fs::read_dir(config_dir()).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("worker") {
            let cfg = WorkerConfig::from_toml(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(cfg.security.enabled(), name.contains("tls"), "{name}");
        } else if name.starts_with("node") {
            let cfg = NodeConfig::from_toml(&text).unwrap_or_else(|e| panic!("{name}: {e:#}"));
            assert_eq!(cfg.security.enabled(), name.contains("tls"), "{name}");
        } else {
            panic!("{name}: neither a worker nor a node config");
        }
        seen += 1;
    }
    assert_eq!(seen, 6, "worker and node, each local, S3 and TLS");
}

fn run(bin: &str, args: &[&str], cwd: &Path) -> (bool, String) {
    let out = Command::new(bin).args(args).current_dir(cwd).output().unwrap();
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

const WORKER: &str = env!("CARGO_BIN_EXE_rcop-worker");
const NODE: &str = env!("CARGO_BIN_EXE_rcop-storage-node");

#[test]
fn default_configs_print_and_load_back() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, text) = run(WORKER, &["--print-default-config"], dir.path());
    assert!(ok, "{text}");
    let back = WorkerConfig::from_toml(&text).unwrap();
    assert_eq!(toml::to_string(&back).unwrap(), toml::to_string(&WorkerConfig::default()).unwrap());
    let (ok, text) = run(NODE, &["--print-default-config"], dir.path());
    assert!(ok, "{text}");
    let back = NodeConfig::from_toml(&text).unwrap();
    assert_eq!(toml::to_string(&back).unwrap(), toml::to_string(&NodeConfig::default()).unwrap());
}

#[test]
fn check_config_checks_a_local_store_and_a_bad_file() {
    let dir = tempfile::tempdir().unwrap();
    for (bin, file) in [(WORKER, "worker.toml"), (NODE, "node.toml")] {
        let path = config_dir().join(file);
        let (ok, text) =
            run(bin, &["--config", path.to_str().unwrap(), "--check-config"], dir.path());
        assert!(ok, "{file}: {text}");
        assert!(text.contains("[dfs] local root") && text.contains("config OK"), "{text}");
    }
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "addr = \"127.0.0.1:0\"\nmax-request-size = 0\n").unwrap();
    let (ok, text) =
        run(WORKER, &["--config", bad.to_str().unwrap(), "--check-config"], dir.path());
    assert!(!ok && text.contains("max-request-size"), "{text}");
    // A secret file that is not there.
    let secret = dir.path().join("secret.toml");
    std::fs::write(&secret, "[security]\nshared-secret-path = \"/nonexistent/secret\"\n").unwrap();
    let (ok, text) =
        run(WORKER, &["--config", secret.to_str().unwrap(), "--check-config"], dir.path());
    assert!(!ok && text.contains("shared-secret-path"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_config_lists_the_bucket_with_the_configured_credentials() {
    use s3s::auth::SimpleAuth;
    use s3s::service::S3ServiceBuilder;
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("rcop")).unwrap();
    let mut b = S3ServiceBuilder::new(s3s_fs::FileSystem::new(root.path()).unwrap());
    b.set_auth(SimpleAuth::from_single("rcop-access-key", "rcop-secret-key-change-me"));
    let service = b.build();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let service = service.clone();
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    let dir = Arc::new(tempfile::tempdir().unwrap());
    for (file, bin) in [("worker-s3.toml", WORKER), ("node-s3.toml", NODE)] {
        let text = std::fs::read_to_string(config_dir().join(file))
            .unwrap()
            .replace("http://127.0.0.1:9000", &format!("http://{addr}"));
        let good = dir.path().join(file);
        std::fs::write(&good, &text).unwrap();
        let wrong = dir.path().join(format!("wrong-{file}"));
        std::fs::write(&wrong, text.replace("rcop-secret-key-change-me", "not-the-secret"))
            .unwrap();
        let missing = dir.path().join(format!("missing-{file}"));
        std::fs::write(&missing, text.replace("bucket = \"rcop\"", "bucket = \"nope\"")).unwrap();
        let cwd = Arc::clone(&dir);
        let (good, wrong, missing) = tokio::task::spawn_blocking(move || {
            let check = |p: &Path| {
                run(bin, &["--config", p.to_str().unwrap(), "--check-config"], cwd.path())
            };
            (check(&good), check(&wrong), check(&missing))
        })
        .await
        .unwrap();
        assert!(good.0 && good.1.contains("bucket \"rcop\" answers"), "{file}: {}", good.1);
        assert!(!wrong.0 && wrong.1.contains("[dfs]"), "{file}: {}", wrong.1);
        assert!(!missing.0 && missing.1.contains("[dfs]"), "{file}: {}", missing.1);
    }
}
