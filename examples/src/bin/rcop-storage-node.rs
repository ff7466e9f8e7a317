//! `rcop-storage-node --config node.toml`: an example storage node that loads TPC-H data at
//! start-up and serves `POST /coprocessor` (a kvproto `coprocessor.Request`), executing each
//! request locally or offloading it to a worker by upstream's decision rules.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::Parser;
use rcop_examples::{NodeConfig, StorageNode};
use rcop_sst::SstStore;

/// The binary allocates with mimalloc (feature `mimalloc`, on by default): memory freed after
/// a burst of large requests goes back to the OS, so RSS — which the cop-limiter reads —
/// falls back toward its baseline instead of staying at the peak, as it does with glibc's
/// retained arenas (`examples/tests/rss.rs`, `tools/rss-burst.sh`).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Example storage node: loads the `[[load]]` tables through its shard (SSTs into `[dfs]`,
/// the newest rows in the memtable), then serves `POST /coprocessor` with a kvproto
/// `coprocessor.Request` body and answers a `coprocessor.Response`, executed locally or
/// offloaded to the `[kvengine] remote-coprocessor-addr` workers. Also `GET /healthz` and
/// `GET /metrics` (with `rcop_offload_requests_total{path}`). With `grpc-addr`, also serves
/// `tikvpb.Tikv/DelegateCoprocessor` for workers on the delegate path (`[delegate]
/// max-concurrency`, `max-request-size`; `store-id` names this node).
///
/// Prints `listening on <addr>` on stdout once loaded and accepting; logs and the loading
/// progress go to stderr.
#[derive(Debug, Parser)]
#[command(name = "rcop-storage-node", version, about, long_about)]
struct Args {
    /// TOML configuration file: addr, keyspace-id, [dfs], [kvengine], [[load]] (see
    /// docs/configuration.md and docs/tpch.md). Without it every key takes its default.
    #[arg(short, long, value_name = "FILE")]
    config: Option<PathBuf>,

    /// Listen address, overriding `addr` from the file (port 0 picks a free port).
    #[arg(long, value_name = "HOST:PORT")]
    addr: Option<SocketAddr>,

    /// Log filter in tracing's EnvFilter syntax; defaults to RUST_LOG, else `info`.
    #[arg(long, value_name = "FILTER")]
    log: Option<String>,

    /// Log line format: `text`, or `json` (one object per line) for a log collector.
    #[arg(long, value_enum, default_value_t)]
    log_format: rcop_examples::LogFormat,

    /// Print every key at its default as a TOML file, and exit.
    #[arg(long, conflicts_with = "check_config")]
    print_default_config: bool,

    /// Parse and validate the configuration, check that the object store answers (for S3:
    /// the bucket and the credentials), that the TLS files load and the shared secret is
    /// readable; print what was checked and exit (non-zero on the first failure).
    #[arg(long)]
    check_config: bool,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if args.print_default_config {
        print!("{}", toml::to_string(&NodeConfig::default())?);
        return Ok(());
    }
    rcop_examples::init_logging(args.log.as_deref(), "info", args.log_format)?;
    let mut config = rcop_examples::load_config(args.config.as_deref(), NodeConfig::from_toml)?;
    if let Some(addr) = args.addr {
        config.addr = addr;
    }
    if args.check_config {
        let checked = rcop_examples::io_runtime("rcop-check")?
            .block_on(rcop_examples::check_environment(&config.dfs, &config.security))?;
        for line in checked {
            println!("ok: {line}");
        }
        println!("config OK");
        return Ok(());
    }
    let runtime = rcop_examples::io_runtime("rcop-node-io")?;
    runtime.block_on(async move {
        let store = Arc::new(
            SstStore::from_config(&config.dfs.store_config()).context("cannot open [dfs]")?,
        );
        let node = StorageNode::new(&config, store)?;
        let mut ts = rcop_examples::dags::tso_now();
        for spec in &config.load {
            let mut progress = rcop_examples::Progress::stderr(
                format!("loading {} (sf {}) rows", spec.table, spec.scale_factor),
                rcop_examples::tpch::estimated_rows(&spec.table, spec.scale_factor),
            );
            let report = node
                .load(spec, ts, |rows| progress.update(rows))
                .await
                .with_context(|| format!("loading {}", spec.table))?;
            progress.finish(report.rows, &format!(", {} in the memtable", report.memtable_rows));
            ts = report.max_commit_ts + 10;
        }
        // Serve with the workers behind DNS names known (discovery keeps them current).
        node.resolve_workers().await;
        let listener =
            tokio::net::TcpListener::bind(config.addr).await.context("cannot bind addr")?;
        let node = Arc::new(node);
        let mut stdout = std::io::stdout().lock();
        if let Some(addr) = config.grpc_addr()? {
            let grpc =
                tokio::net::TcpListener::bind(addr).await.context("cannot bind grpc-addr")?;
            writeln!(stdout, "grpc listening on {}", grpc.local_addr()?)?;
            // Stops with the process: the HTTP server below owns the shutdown signal.
            tokio::spawn(Arc::clone(&node).serve_grpc(grpc, std::future::pending()));
        }
        writeln!(stdout, "listening on {}", listener.local_addr()?)?;
        stdout.flush()?;
        drop(stdout);
        node.serve(listener, rcop_examples::shutdown_signal()).await
    })
}
