//! Shared code of the rcop binaries (`rcop-worker`, `rcop-storage-node`, `quickstart`):
//! TPC-H `lineitem` loading through a storage-node shard, the example storage node and the
//! example pushdown DAGs. The binaries stay thin: parse flags and config, build these, run.

pub mod dags;
pub mod node;
pub mod tpch;

pub use node::{LoadSpec, NodeConfig, Path, StorageNode};
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

/// Sets up `tracing` logs on stderr with `filter` (tracing's EnvFilter syntax), else the
/// `RUST_LOG` environment variable, else `default`.
///
/// # Errors
///
/// An invalid filter.
pub fn init_logging(filter: Option<&str>, default: &str) -> anyhow::Result<()> {
    use anyhow::Context;
    use tracing_subscriber::EnvFilter;
    let filter = match filter {
        Some(f) => EnvFilter::try_new(f).context("invalid --log filter")?,
        None => EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default)),
    };
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
    Ok(())
}

/// Completes on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = term => {}
    }
}
