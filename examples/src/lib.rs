//! Shared code of the rcop binaries (`rcop-worker`, `rcop-storage-node`, `quickstart`):
//! TPC-H `lineitem` loading through a storage-node shard, the example storage node and the
//! example pushdown DAGs. The binaries stay thin: parse flags and config, build these, run.

pub mod client;
pub mod dag_json;
pub mod dags;
pub mod node;
pub mod progress;
pub mod table;
pub mod tpch;

pub use node::{LoadSpec, LoadedTable, NodeConfig, NodeInfo, Path, StorageNode};
pub use progress::Progress;
pub use tpch::{LINEITEM_TABLE_ID, LoadReport, load_table};

/// Reads and parses the configuration file at `path` with `parse`, or returns the defaults
/// when no file is given. Errors name the file.
///
/// # Errors
///
/// An unreadable file or what `parse` reports.
pub fn load_config<T: Default>(
    path: Option<&std::path::Path>,
    parse: impl FnOnce(&str) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    use anyhow::Context;
    let Some(path) = path else { return Ok(T::default()) };
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read config file {}", path.display()))?;
    parse(&text).with_context(|| format!("invalid config file {}", path.display()))
}

/// What `--check-config` checks beyond parsing and validating a file: the object store answers
/// with these settings (one listing of the prefix: the bucket exists and the credentials may
/// read it), the TLS files load, the shared secret is readable. Returns one line per check.
///
/// # Errors
///
/// The first check that fails, with what it was checking.
pub async fn check_environment(
    dfs: &rcop_worker::DfsConfig,
    security: &rcop_tls::SecurityConfig,
) -> anyhow::Result<Vec<String>> {
    use anyhow::Context;
    let mut done = Vec::new();
    let store = rcop_sst::SstStore::from_config(&dfs.store_config()).context("[dfs]")?;
    store.check().await.context("[dfs]: the object store does not answer")?;
    done.push(match dfs.backend {
        rcop_worker::DfsBackend::Local => {
            format!("[dfs] local root {} is usable", dfs.root.display())
        }
        rcop_worker::DfsBackend::S3 => format!("[dfs] bucket {:?} answers a listing", dfs.bucket),
    });
    if security.enabled() {
        security.client_config(&[]).context("[security]: the certificate files")?;
        done.push("[security] certificate, key and CA load".to_owned());
    }
    if security.shared_secret().context("[security] shared-secret-path")?.is_some() {
        done.push("[security] shared secret is readable".to_owned());
    }
    Ok(done)
}

/// A multi-thread tokio runtime for a binary's network I/O, its threads named `name`.
///
/// # Errors
///
/// The runtime cannot start.
pub fn io_runtime(name: &str) -> anyhow::Result<tokio::runtime::Runtime> {
    use anyhow::Context;
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name(name)
        .build()
        .context("cannot start the I/O runtime")
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line (timestamp, level, message, fields, the request's span with
    /// its upstream tag), for log collectors.
    Json,
}

/// Sets up `tracing` logs on stderr with `filter` (tracing's EnvFilter syntax), else the
/// `RUST_LOG` environment variable, else `default`, in `format`.
///
/// # Errors
///
/// An invalid filter.
pub fn init_logging(filter: Option<&str>, default: &str, format: LogFormat) -> anyhow::Result<()> {
    use anyhow::Context;
    use tracing_subscriber::EnvFilter;
    let filter = match filter {
        Some(f) => EnvFilter::try_new(f).context("invalid --log filter")?,
        None => EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default)),
    };
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().with_current_span(true).with_span_list(false).init(),
    }
    Ok(())
}

/// Completes on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    // No SIGTERM elsewhere: Ctrl-C (Ctrl-Break on Windows) only.
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = term => {}
    }
}
