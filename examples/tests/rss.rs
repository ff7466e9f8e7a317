//! Memory goes back: a worker process's RSS after a burst of 64 concurrent 12.7 MiB requests
//! falls back towards its baseline (the binaries allocate with mimalloc, feature `mimalloc`).
//!
//! Without the feature (`cargo test -p rcop-examples --no-default-features --test rss --
//! --nocapture`) the same run prints the system allocator's figures and asserts nothing:
//! `tools/rss-burst.sh` runs both and prints them side by side.
#![expect(clippy::unwrap_used, reason = "process and socket plumbing in test helpers")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use rcop_examples::{LoadSpec, NodeConfig, StorageNode, dags};
use rcop_snap::{LockCheck, NoLocks};
use rcop_wire::{EnvelopeWriter, MemDataFormat};

const BURST: usize = 64;

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Resident set size of process `pid` in bytes, from `/proc/<pid>/status`.
fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

fn post(addr: &str, body: &[u8]) -> u16 {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    write!(
        s,
        "POST /coprocessor HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    s.write_all(body).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let head = String::from_utf8_lossy(&out[..out.len().min(32)]).into_owned();
    head.split(' ').nth(1).unwrap().parse().unwrap()
}

const MIB: f64 = 1024.0 * 1024.0;

#[test]
fn rss_returns_near_its_baseline_after_a_burst() {
    // Every row stays in the memtable: the body is all mem-data, the worker needs no file.
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let store = Arc::new(
        rcop_sst::SstStore::from_config(
            &rcop_sst::StoreConfig::default().with_backend(rcop_sst::Backend::Memory),
        )
        .unwrap(),
    );
    let local = StorageNode::new(&NodeConfig::default(), store).unwrap();
    let spec = LoadSpec { scale_factor: 0.01, memtable_tail: 1 << 20, ..Default::default() };
    rt.block_on(local.load(&spec, dags::tso_now(), |_| {})).unwrap();
    let prefix = rcop_examples::tpch::keyspace_prefix(1).unwrap();
    let req = dags::request(&dags::q6().unwrap(), 1, &prefix, 1, dags::tso_now());
    let mut body = Vec::new();
    let mut writer = EnvelopeWriter::new(&mut body, &req).unwrap();
    let mut mem = writer.mem_data(MemDataFormat::V2);
    let cs = local
        .shard()
        .export(&req.ranges, &LockCheck::si(req.start_ts), &NoLocks, &mut mem)
        .unwrap();
    mem.finish().unwrap();
    let snap = cs.snapshot.as_ref().unwrap();
    assert!(snap.l0_creates.is_empty() && snap.table_creates.is_empty(), "rows only");
    writer.finish(&cs).unwrap();
    assert!(body.len() > 8 << 20, "a 9 MiB body: {} bytes", body.len());
    let body = Arc::new(body);

    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("worker.toml");
    std::fs::write(
        &config,
        format!(
            "addr = \"127.0.0.1:0\"\nmemory-upper-threshold = \"4GiB\"\n\
             [worker-limiter]\nmax-queue-size = 256\nkeyspace-max-queue-size = 256\n\
             [dfs]\nroot = {:?}\n",
            dir.path().join("dfs")
        ),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rcop-worker"))
        .args(["--log", "warn", "--config"])
        .arg(&config)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let _worker = Killed(child);
    let addr = line.trim().rsplit(' ').next().unwrap().to_owned();

    for _ in 0..3 {
        assert_eq!(post(&addr, &body), 200);
    }
    std::thread::sleep(Duration::from_secs(1));
    let baseline = rss(pid);

    let peak = Arc::new(AtomicU64::new(baseline));
    let sampling = Arc::new(AtomicBool::new(true));
    let sampler = {
        let (peak, sampling) = (Arc::clone(&peak), Arc::clone(&sampling));
        std::thread::spawn(move || {
            while sampling.load(Ordering::Relaxed) {
                peak.fetch_max(rss(pid), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    };
    let clients: Vec<_> = (0..BURST)
        .map(|_| {
            let (addr, body) = (addr.clone(), Arc::clone(&body));
            std::thread::spawn(move || post(&addr, &body))
        })
        .collect();
    let statuses: Vec<u16> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    sampling.store(false, Ordering::Relaxed);
    sampler.join().unwrap();
    assert!(statuses.iter().all(|&s| s == 200), "{statuses:?}");
    std::thread::sleep(Duration::from_secs(2));
    let after = rss(pid);
    let peak = peak.load(Ordering::Relaxed);
    let allocator = if cfg!(feature = "mimalloc") { "mimalloc" } else { "system" };
    println!(
        "rss {allocator}: baseline {:.0} MiB, peak {:.0} MiB during {BURST} × {:.1} MiB requests, \
         {:.0} MiB 2 s after",
        baseline as f64 / MIB,
        peak as f64 / MIB,
        body.len() as f64 / MIB,
        after as f64 / MIB
    );
    assert!(peak > baseline + (64 << 20), "the burst must raise RSS to mean anything");
    if cfg!(feature = "mimalloc") {
        // Most of what the burst took goes back (glibc keeps nearly all of it): within half of
        // the rise above baseline, allowing up to 10 s for the allocator's delayed purges on a
        // loaded machine. Measured quiet: a quarter kept after 2 s; loaded: up to 30 %.
        let rise = peak - baseline;
        let mut kept = after.saturating_sub(baseline);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while kept > rise / 2 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(250));
            kept = rss(pid).saturating_sub(baseline);
        }
        assert!(kept <= rise / 2, "kept {kept} of a rise of {rise}");
    }
}
