//! The `rcop-worker` binary as a real process: config file, `listening on`, HTTP, SIGTERM.
#![expect(clippy::unwrap_used, reason = "process and socket plumbing in test helpers")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_rcop-worker");

/// Kills the child if a test fails before it exits.
struct Guard(Option<Child>);

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn http_get(addr: &str, path: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

#[test]
fn serves_from_a_config_file_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("worker.toml");
    std::fs::write(
        &config,
        format!(
            "addr = \"127.0.0.1:0\"\ncop-block-cache-size = \"8MiB\"\n[dfs]\nbackend = \"local\"\nroot = {:?}\n",
            dir.path().join("sst")
        ),
    )
    .unwrap();
    let child = Command::new(BIN)
        .arg("--config")
        .arg(&config)
        .arg("--log")
        .arg("warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut guard = Guard(Some(child));
    let stdout = guard.0.as_mut().unwrap().stdout.take().unwrap();
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let addr = line.trim().strip_prefix("listening on ").unwrap().to_owned();
    assert!(addr.starts_with("127.0.0.1:") && !addr.ends_with(":0"), "{addr}");

    let health = http_get(&addr, "/healthz");
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    assert!(health.ends_with("ok\n"));
    let metrics = http_get(&addr, "/metrics");
    assert!(metrics.contains("tikv_worker_remote_cop_request_duration_seconds"), "{metrics}");
    assert!(metrics.contains("tikv_worker_memory_limiter_current_used"));

    let mut child = guard.0.take().unwrap();
    let term = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status().unwrap();
    assert!(term.success());
    let status = child.wait().unwrap();
    assert!(status.success(), "graceful exit: {status}");
}

#[test]
fn bad_config_fails_with_the_key_named() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("worker.toml");
    std::fs::write(&config, "addr = \"127.0.0.1:0\"\ncop-max-resp-size = 0\n").unwrap();
    let out = Command::new(BIN).arg("--config").arg(&config).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cop-max-resp-size"), "{err}");
}

#[test]
fn help_explains_every_flag() {
    let out = Command::new(BIN).arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in ["--config", "--addr", "--log", "--help", "--version", "listening on"] {
        assert!(help.contains(flag), "{flag} missing from:\n{help}");
    }
}
