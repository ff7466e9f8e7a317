//! `cargo run --release -p rcop-examples --bin quickstart`: the whole remote coprocessor in
//! one process on loopback, with a local-directory object store.
//!
//! Loads TPC-H `lineitem`, starts a worker and a storage node, sends Q1, Q6, a filter + TopN
//! and a small selective query to the storage node, prints for each the decision, the rows
//! and the times, and checks that the offloaded answers equal local execution.
//!
//! Each query also runs the first way: a gRPC client playing TiDB sends the
//! `coprocessor.Request` to the worker's `cop-addr`, the worker fetches the delegate from the
//! node's `grpc-addr`, executes and answers; its time is printed beside the second way's
//! (the median of `--repeat` runs of each), and its answer must equal local execution too.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use clap::Parser;
use prost::Message;
use rcop_datum::{Datum, Time, TimeType};
use rcop_examples::{LoadSpec, NodeConfig, Path, StorageNode, dags};
use rcop_limiter::ReadableSize;
use rcop_proto::tikvpb::tikv_client::TikvClient;
use rcop_proto::tipb;
use rcop_sst::SstStore;
use rcop_worker::{DfsConfig, GrpcServer, Worker, WorkerConfig};

/// The binary allocates with mimalloc (feature `mimalloc`, on by default): memory freed after
/// a burst of large requests goes back to the OS, so RSS — which the cop-limiter reads —
/// falls back toward its baseline instead of staying at the peak, as it does with glibc's
/// retained arenas (`examples/tests/rss.rs`, `tools/rss-burst.sh`).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Runs a storage node and a worker in one process over loopback HTTP, loads TPC-H
/// lineitem, sends example pushdown queries and compares offloaded with local answers.
#[derive(Debug, Parser)]
#[command(name = "quickstart", version, about, long_about)]
struct Args {
    /// TPC-H scale factor of lineitem (0.05 ≈ 300k rows).
    #[arg(long, default_value_t = 0.05, value_name = "SF")]
    scale_factor: f64,

    /// Offload threshold (`remote-coprocessor-min-blocks-size`): estimated block bytes at or
    /// above which a request goes to the worker. Upstream's default is 32MiB; the default
    /// here is small so full scans at small scale factors are offloaded.
    #[arg(long, default_value = "4MiB", value_name = "SIZE")]
    min_blocks_size: String,

    /// Newest rows kept in the storage node's memtable (shipped with each request).
    #[arg(long, default_value_t = 2_000, value_name = "ROWS")]
    memtable_tail: u64,

    /// Object-store directory; a fresh temporary directory (removed at exit) by default.
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,

    /// The worker's `data-dir`, where its disk cache of SST segments lives (kept across runs
    /// when given); a fresh temporary directory by default.
    #[arg(long, value_name = "DIR")]
    worker_dir: Option<PathBuf>,

    /// Runs of each way per query; the times printed are the medians.
    #[arg(long, default_value_t = 3, value_name = "N")]
    repeat: usize,

    /// Log filter in tracing's EnvFilter syntax; defaults to RUST_LOG, else `warn`.
    #[arg(long, value_name = "FILTER")]
    log: Option<String>,

    /// Log line format: `text`, or `json` (one object per line) for a log collector.
    #[arg(long, value_enum, default_value_t)]
    log_format: rcop_examples::LogFormat,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    rcop_examples::init_logging(args.log.as_deref(), "warn", args.log_format)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    runtime.block_on(run(args))
}

async fn run(args: Args) -> anyhow::Result<()> {
    let tmp = tempfile::tempdir().context("temporary directory")?;
    let root = args.data_dir.clone().unwrap_or_else(|| tmp.path().join("sst"));
    let dfs = DfsConfig::local(&root);
    println!("object store: local directory {}", root.display());

    // Worker on an ephemeral loopback port, with its disk cache under its own data dir.
    let worker_dir = args.worker_dir.clone().unwrap_or_else(|| tmp.path().join("worker"));
    let worker_cfg = WorkerConfig::default()
        .with_addr(SocketAddr::from(([127, 0, 0, 1], 0)))
        .with_dfs(dfs.clone())
        .with_cop_block_cache_size(ReadableSize(256 << 20))
        .with_data_dir(&worker_dir);
    let worker = Worker::builder(worker_cfg).build()?.bind().await?.spawn();
    println!(
        "worker listening on {}; data-dir {} (disk cache of SST segments)",
        worker.local_addr(),
        worker_dir.display()
    );

    // Storage node pointing at it.
    let kvengine = rcop_offload::Config::from_toml_str(&format!(
        "remote-coprocessor-addr = \"http://{}\"\nremote-coprocessor-min-blocks-size = {:?}",
        worker.local_addr(),
        args.min_blocks_size
    ))?;
    let node_cfg = NodeConfig {
        addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        dfs: dfs.clone(),
        kvengine,
        keyspace_id: 1,
        load: vec![LoadSpec {
            scale_factor: args.scale_factor,
            memtable_tail: args.memtable_tail,
            ..LoadSpec::default()
        }],
        ..NodeConfig::default()
    };
    let store = Arc::new(SstStore::from_config(&dfs.store_config())?);
    let node = Arc::new(StorageNode::new(&node_cfg, store)?);
    let started = Instant::now();
    let mut progress = rcop_examples::Progress::stderr(
        "loading lineitem rows",
        rcop_examples::tpch::estimated_rows("lineitem", args.scale_factor),
    );
    let report =
        node.load(&node_cfg.load[0], dags::tso_now(), |rows| progress.update(rows)).await?;
    let stats = node.shard().stats();
    progress.finish(report.rows, "");
    eprintln!(
        "loaded lineitem (sf {}): {} rows in {:.1?}; {} in the memtable, L1 tables {}",
        args.scale_factor,
        report.rows,
        started.elapsed(),
        report.memtable_rows,
        stats.level_tables[0]
    );
    let start_ts = (report.max_commit_ts + 10).max(dags::tso_now());
    let prefix = rcop_examples::tpch::keyspace_prefix(node.keyspace_id())?;

    // The first way: the node's delegate endpoint, the worker's cop-addr, a TiDB client.
    let node_grpc = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let node_grpc_addr = node_grpc.local_addr()?;
    let (stop_node_grpc, stopped) = tokio::sync::oneshot::channel::<()>();
    let node_grpc_task = tokio::spawn(Arc::clone(&node).serve_grpc(node_grpc, async move {
        let _ = stopped.await;
    }));
    let grpc_cfg = WorkerConfig::from_toml(&format!(
        "cop-addr = \"127.0.0.1:0\"\n[delegate]\nstores = {{ \"{}\" = \"{node_grpc_addr}\" }}",
        node.store_id()
    ))?;
    let cop_addr = grpc_cfg.cop_addr()?.context("cop-addr")?;
    // The worker above was built without [delegate]; its cop-addr listener gets the stores.
    let client = rcop_worker::DelegateClient::from_config(&grpc_cfg.delegate)?
        .with_metrics(worker.worker().metrics().clone());
    let cop = GrpcServer::bind_with(Arc::clone(worker.worker()), Arc::new(client), cop_addr)
        .await?
        .spawn()?;
    println!(
        "worker cop-addr (gRPC) {}; storage node grpc-addr {node_grpc_addr}",
        cop.local_addr()
    );
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{}", cop.local_addr()))?
        .connect()
        .await?;
    let mut tidb = TikvClient::new(channel).max_decoding_message_size(usize::MAX);
    let repeat = args.repeat.max(1);

    let mut mismatches = 0;
    let mut summary: Vec<Vec<String>> = Vec::new();
    for query in dags::all()? {
        let mut req = dags::request(&query, node.keyspace_id(), &prefix, 1, start_ts);
        if let Some(ctx) = req.context.as_mut() {
            ctx.region_epoch = Some(rcop_proto::metapb::RegionEpoch { conf_ver: 1, version: 1 });
            ctx.peer = Some(rcop_proto::metapb::Peer {
                id: 1,
                store_id: node.store_id(),
                ..Default::default()
            });
        }
        let mut second = Vec::with_capacity(repeat);
        let mut first = Vec::with_capacity(repeat);
        let (mut resp, mut path, mut delegated) = (None, None, None);
        for _ in 0..repeat {
            let (r, p, took) = node.handle(req.clone()).await;
            second.push(took);
            (resp, path) = (Some(r), Some(p));
            let t = Instant::now();
            let d = tidb.coprocessor(req.clone()).await?.into_inner();
            first.push(t.elapsed());
            delegated = Some(d);
        }
        let (Some(resp), Some(path), Some(delegated)) = (resp, path, delegated) else {
            bail!("no run");
        };
        let (first, second) = (median(&mut first), median(&mut second));
        println!("\n== {} ==\n   {}", query.name, query.sql);
        println!("   decision: {path}");
        println!(
            "   time: second way (TiDB -> node, which decides) {second:.1?}; first way (TiDB -> worker -> node, gRPC) {first:.1?}; first - second {:+.1} ms (median of {repeat})",
            (first.as_secs_f64() - second.as_secs_f64()) * 1e3
        );
        if !delegated.other_error.is_empty()
            || delegated.region_error.is_some()
            || delegated.locked.is_some()
        {
            bail!("{} failed the first way: {:?}", query.name, delegated);
        }
        if !resp.other_error.is_empty() || resp.region_error.is_some() || resp.locked.is_some() {
            bail!("{} failed: {:?}", query.name, resp);
        }
        let width = query.dag.output_offsets.len();
        let rows = decode_rows(&resp.data, width)?;
        let shown: Vec<Vec<String>> = rows
            .iter()
            .take(12)
            .map(|row| {
                row.iter()
                    .enumerate()
                    .map(|(i, d)| match d {
                        Datum::Uint(packed) if query.date_outputs.contains(&i) => {
                            Time::from_packed_u64(*packed, TimeType::Date, 0)
                                .map_or_else(|_| packed.to_string(), |t| t.to_string())
                        }
                        d => show(d),
                    })
                    .collect()
            })
            .collect();
        for line in rcop_examples::table::render(&query.columns, &shown).lines() {
            println!("   {line}");
        }
        if rows.len() > 12 {
            println!("   … {} rows", rows.len());
        }
        let local_node = Arc::clone(&node);
        let local_req = req.clone();
        let t = Instant::now();
        let local =
            tokio::task::spawn_blocking(move || local_node.execute_local(&local_req)).await?;
        let local_time = t.elapsed();
        let same = local.data == resp.data;
        let same_first = local.data == delegated.data;
        if !same || !same_first {
            mismatches += 1;
        }
        let how = if matches!(path, Path::Remote { .. }) { "offloaded" } else { "served" };
        let decision = if matches!(path, Path::Remote { .. }) { "remote" } else { "local" };
        summary.push(vec![
            query.name.to_owned(),
            decision.to_owned(),
            format!("{:.1}", second.as_secs_f64() * 1e3),
            format!("{:.1}", first.as_secs_f64() * 1e3),
            format!("{:.1}", local_time.as_secs_f64() * 1e3),
            if same && same_first { "yes" } else { "NO" }.to_owned(),
        ]);
        println!(
            "   local execution: {local_time:.1?}; {how} result {} local result; first-way result {} local result",
            if same { "==" } else { "!=" },
            if same_first { "==" } else { "!=" }
        );
    }
    println!("\nsummary (median ms):");
    let headers = ["query", "decision", "second way", "first way", "local", "equal"];
    for line in rcop_examples::table::render(&headers, &summary).lines() {
        println!("   {line}");
    }
    if let Some(ia) = worker.worker().disk_cache() {
        let s = ia.stats();
        println!(
            "\nworker disk cache: {} segment reads from the cache, {} from the object store; \
             {} segments ({} KiB) on disk, {} KiB in memory",
            s.hits,
            s.misses,
            s.disk_segments,
            s.disk_bytes >> 10,
            s.memory_bytes >> 10
        );
    }
    drop(tidb);
    cop.shutdown().await?;
    let _ = stop_node_grpc.send(());
    node_grpc_task.await??;
    worker.shutdown().await?;
    if mismatches > 0 {
        bail!("{mismatches} quer(ies) differ between offloaded and local execution");
    }
    println!("\nall results identical between both ways and local execution");
    Ok(())
}

fn median(times: &mut [std::time::Duration]) -> std::time::Duration {
    times.sort();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

fn decode_rows(data: &[u8], width: usize) -> anyhow::Result<Vec<Vec<Datum>>> {
    let sel = tipb::SelectResponse::decode(data).context("SelectResponse")?;
    if let Some(e) = sel.error {
        bail!("query error: {:?}", e);
    }
    let mut all = Vec::new();
    for c in &sel.chunks {
        all.extend(Datum::decode_all(c.rows_data.as_deref().unwrap_or(&[]))?);
    }
    Ok(all.chunks(width.max(1)).map(<[Datum]>::to_vec).collect())
}

fn show(d: &Datum) -> String {
    match d {
        Datum::Null => "NULL".into(),
        Datum::Int(v) => v.to_string(),
        Datum::Uint(v) => v.to_string(),
        Datum::Float(v) => v.to_string(),
        Datum::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Datum::Decimal(v) => v.to_string(),
        Datum::Time(v) => v.to_string(),
        other => format!("{other:?}"),
    }
}
