//! `rcop-worker --config worker.toml`: the remote-coprocessor worker service.
//!
//! Reads the TOML configuration (every key in `docs/configuration.md`), binds `addr`, prints
//! `listening on <addr>` once ready and serves until SIGINT or SIGTERM, then shuts down
//! gracefully.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use rcop_worker::{Worker, WorkerConfig};

/// The binary allocates with mimalloc (feature `mimalloc`, on by default): memory freed after
/// a burst of large requests goes back to the OS, so RSS — which the cop-limiter reads —
/// falls back toward its baseline instead of staying at the peak, as it does with glibc's
/// retained arenas (`examples/tests/rss.rs`, `tools/rss-burst.sh`).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The remote-coprocessor worker: serves `POST /coprocessor` (envelope v1 bodies from storage
/// nodes), `GET /healthz` and `GET /metrics` over HTTP/1.1.
///
/// With `cop-addr`, also serves `tikvpb.Tikv/Coprocessor` over gRPC for TiDB (the delegate
/// path; `[delegate]` finds the storage nodes) and prints `grpc listening on <addr>` first.
///
/// Prints `listening on <addr>` on stdout once it accepts connections; logs go to stderr.
/// SIGINT or SIGTERM stop it gracefully (in-flight requests finish).
#[derive(Debug, Parser)]
#[command(name = "rcop-worker", version, about, long_about)]
struct Args {
    /// TOML configuration file (kebab-case keys: addr, [dfs], cop-block-cache-size,
    /// cop-max-resp-size, max-request-size, memory-upper-threshold, thread-pool-size-factor,
    /// [cop-limiter], [worker-limiter]; see docs/configuration.md). Without it every key takes
    /// its default.
    #[arg(short, long, value_name = "FILE")]
    config: Option<PathBuf>,

    /// Listen address, overriding `addr` from the file (port 0 picks a free port).
    #[arg(long, value_name = "HOST:PORT")]
    addr: Option<SocketAddr>,

    /// Log filter in tracing's EnvFilter syntax (e.g. `info`, `rcop_worker=debug`); defaults
    /// to the RUST_LOG environment variable, else `info`.
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
        print!("{}", toml::to_string(&WorkerConfig::default())?);
        return Ok(());
    }
    rcop_examples::init_logging(args.log.as_deref(), "info", args.log_format)?;
    let mut config =
        rcop_examples::load_config(args.config.as_deref(), |t| Ok(WorkerConfig::from_toml(t)?))?;
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
    let runtime = rcop_examples::io_runtime("rcop-io")?;
    runtime.block_on(async move {
        let cop_addr = config.cop_addr()?;
        let worker = Worker::builder(config).build().context("cannot build the worker")?;
        let server = worker.bind().await.context("cannot bind the listen address")?;
        let mut stdout = std::io::stdout().lock();
        if let Some(addr) = cop_addr {
            let grpc = rcop_worker::GrpcServer::bind(std::sync::Arc::clone(server.worker()), addr)
                .await
                .context("cannot bind cop-addr")?;
            writeln!(stdout, "grpc listening on {}", grpc.local_addr()?)?;
            // Stops with the process: the HTTP server below owns the shutdown signal.
            tokio::spawn(grpc.run(std::future::pending()));
        }
        writeln!(stdout, "listening on {}", server.local_addr())?;
        stdout.flush()?;
        drop(stdout);
        server.run(rcop_examples::shutdown_signal()).await.context("server failed")
    })
}
