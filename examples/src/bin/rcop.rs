//! `rcop`: a command-line client for people — query a storage node, inspect a worker.
//!
//! ```text
//! rcop query --node http://127.0.0.1:20160 tpch q1
//! rcop query --node http://127.0.0.1:20160 --dag my-query.json
//! rcop dag tpch q6 > my-query.json
//! rcop stats --worker http://127.0.0.1:19000
//! ```

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use clap::{Args as ClapArgs, Parser, Subcommand};
use prost::Message;
use rcop_examples::client::{self, HttpClient, Prepared};
use rcop_examples::node::{HEADER_ELAPSED_US, HEADER_PATH, HEADER_PATH_DETAIL};
use rcop_examples::{NodeInfo, dag_json, table};
use rcop_proto::coprocessor;

/// A client for people: send queries to an rcop storage node and read a worker's state.
#[derive(Debug, Parser)]
#[command(name = "rcop", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Sends a query to a storage node (`POST /coprocessor`) and prints its rows as a table,
    /// with the node's decision (local or remote) and the timings.
    Query(QueryArgs),
    /// Prints a built-in query as the JSON DAG `query --dag` reads: a starting point for
    /// your own.
    Dag {
        /// `tpch`.
        source: String,
        /// The query: q1, q6, topn, selective, wide-scan, or a go-tpc task (q03_orders).
        name: String,
    },
    /// Shows a worker's state from its `/metrics` and `/readyz`: requests in flight and
    /// served, the limiter, cache hit rates, object-store traffic, the busiest keyspaces.
    Stats(StatsArgs),
}

#[derive(Debug, ClapArgs)]
struct TlsArgs {
    /// CA certificate (PEM) for https:// URLs.
    #[arg(long, value_name = "FILE", requires_all = ["cert", "key"])]
    ca: Option<PathBuf>,
    /// Client certificate (PEM) for https:// URLs.
    #[arg(long, value_name = "FILE", requires = "ca")]
    cert: Option<PathBuf>,
    /// Client key (PEM) for https:// URLs.
    #[arg(long, value_name = "FILE", requires = "ca")]
    key: Option<PathBuf>,
    /// Seconds to wait for an answer.
    #[arg(long, default_value_t = 120, value_name = "SECS")]
    timeout: u64,
}

impl TlsArgs {
    fn client(&self) -> Result<HttpClient> {
        let tls = match (&self.ca, &self.cert, &self.key) {
            (Some(ca), Some(cert), Some(key)) => {
                let mut security = rcop_tls::SecurityConfig::default();
                security.ca_path = ca.clone();
                security.cert_path = cert.clone();
                security.key_path = key.clone();
                Some(security.client_config(&[b"http/1.1"]).context("--ca/--cert/--key")?)
            }
            _ => None,
        };
        Ok(HttpClient::new(tls, Duration::from_secs(self.timeout)))
    }
}

#[derive(Debug, ClapArgs)]
struct QueryArgs {
    /// The storage node's HTTP address, e.g. http://127.0.0.1:20160.
    #[arg(long, value_name = "URL")]
    node: String,
    /// A DAG in the JSON form (`rcop dag tpch q1` prints one; docs/operations.md describes
    /// it) instead of a built-in query.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["source", "name"])]
    dag: Option<PathBuf>,
    /// `tpch` for a built-in query.
    #[arg(value_name = "SOURCE", required_unless_present = "dag")]
    source: Option<String>,
    /// The built-in query: q1, q6, topn, selective, wide-scan over the `rowid` lineitem, or
    /// a go-tpc task (q03_orders, or q3 for every task of Q3); omitted: list them.
    #[arg(value_name = "NAME")]
    name: Option<String>,
    /// Send each query this many times; the times printed are the medians.
    #[arg(long, default_value_t = 1, value_name = "N")]
    repeat: usize,
    /// Print at most this many rows of each answer (the count is always exact).
    #[arg(long, default_value_t = 50, value_name = "ROWS")]
    max_rows: usize,
    /// Read timestamp (TSO); defaults to now.
    #[arg(long, value_name = "TS")]
    start_ts: Option<u64>,
    #[command(flatten)]
    tls: TlsArgs,
}

#[derive(Debug, ClapArgs)]
struct StatsArgs {
    /// The worker's HTTP address, e.g. http://127.0.0.1:19000.
    #[arg(long, value_name = "URL")]
    worker: String,
    /// Keyspaces listed, the busiest first.
    #[arg(long, default_value_t = 10, value_name = "N")]
    top: usize,
    #[command(flatten)]
    tls: TlsArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Query(args) => query(args).await,
            Command::Dag { source, name } => {
                if source != "tpch" {
                    bail!("unknown source {source:?}: only `tpch`");
                }
                println!("{}", client::builtin_json(&name)?);
                Ok(())
            }
            Command::Stats(args) => stats(args).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = std::io::stdout().flush();
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn base(url: &str) -> &str {
    url.trim_end_matches('/')
}

async fn node_info(http: &HttpClient, node: &str) -> Result<NodeInfo> {
    let url = format!("{}/info", base(node));
    let answer = http.get(&url).await.with_context(|| {
        format!("cannot reach the storage node at {node} (is rcop-storage-node running there?)")
    })?;
    if answer.status != 200 {
        bail!(
            "{url} answered {}: {} (is {node} an rcop storage node?)",
            answer.status,
            String::from_utf8_lossy(&answer.body).trim()
        );
    }
    serde_json::from_slice(&answer.body).with_context(|| format!("{url}: not a node's /info"))
}

async fn query(args: QueryArgs) -> Result<()> {
    let http = args.tls.client()?;
    let info = node_info(&http, &args.node).await?;
    let prepared: Vec<Prepared> = match (&args.dag, args.source.as_deref(), args.name.as_deref()) {
        (Some(path), _, _) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let file = dag_json::parse(&text)
                .with_context(|| format!("{} is not a valid DAG", path.display()))?;
            let prefix = rcop_examples::tpch::keyspace_prefix(info.keyspace_id)?;
            let ranges = dag_json::key_ranges(&file, &prefix)?;
            vec![Prepared { name: path.display().to_string(), sql: String::new(), file, ranges }]
        }
        (None, Some("tpch"), Some(name)) => client::resolve(name, &info)?,
        (None, Some("tpch"), None) => {
            let names = client::available(&info)?;
            if names.is_empty() {
                println!("the node at {} has loaded no TPC-H tables", args.node);
            } else {
                println!("queries the node at {} answers:\n  {}", args.node, names.join("\n  "));
            }
            return Ok(());
        }
        (None, Some(other), _) => bail!("unknown source {other:?}: only `tpch`"),
        (None, None, _) => bail!("give `tpch NAME` or --dag FILE"),
    };
    let url = format!("{}/coprocessor", base(&args.node));
    let mut failed = 0;
    for p in &prepared {
        if let Err(e) = run_one(&http, &url, &info, p, &args).await {
            failed += 1;
            eprintln!("error: {}: {e:#}", p.name);
        }
    }
    if failed > 0 {
        bail!("{failed} of {} queries failed", prepared.len());
    }
    Ok(())
}

struct Timed {
    path: String,
    detail: String,
    node_us: u64,
    round_trip: Duration,
    response: coprocessor::Response,
}

async fn send(http: &HttpClient, url: &str, body: Bytes) -> Result<Timed> {
    let started = Instant::now();
    let answer = http.post(url, body).await?;
    let round_trip = started.elapsed();
    if answer.status != 200 {
        bail!(
            "the node refused the request ({}): {}",
            answer.status,
            String::from_utf8_lossy(&answer.body).trim()
        );
    }
    let response = coprocessor::Response::decode(answer.body.clone())
        .context("the node's answer is no coprocessor.Response")?;
    Ok(Timed {
        path: answer.header(HEADER_PATH).unwrap_or("?").to_owned(),
        detail: answer.header(HEADER_PATH_DETAIL).unwrap_or("").to_owned(),
        node_us: answer.header(HEADER_ELAPSED_US).and_then(|v| v.parse().ok()).unwrap_or(0),
        round_trip,
        response,
    })
}

fn median<T: Copy + Ord>(mut v: Vec<T>) -> T {
    v.sort_unstable();
    v[v.len() / 2]
}

async fn run_one(
    http: &HttpClient,
    url: &str,
    info: &NodeInfo,
    p: &Prepared,
    args: &QueryArgs,
) -> Result<()> {
    let start_ts = args.start_ts.unwrap_or_else(rcop_examples::dags::tso_now);
    let body = Bytes::from(p.request(info, start_ts).encode_to_vec());
    let mut runs = Vec::new();
    for _ in 0..args.repeat.max(1) {
        runs.push(send(http, url, body.clone()).await?);
    }
    let node_us = median(runs.iter().map(|r| r.node_us).collect());
    let round_trip = median(runs.iter().map(|r| r.round_trip).collect());
    let Some(last) = runs.pop() else { bail!("no run") };
    let rows = dag_json::render_rows(&last.response, &p.file.types)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "-- {}", p.name)?;
    if !p.sql.is_empty() {
        writeln!(out, "-- {}", p.sql)?;
    }
    let names: Vec<&str> = p.file.names.iter().map(String::as_str).collect();
    let shown = rows.len().min(args.max_rows);
    write!(out, "{}", table::render(&names, &rows[..shown]))?;
    if shown < rows.len() {
        writeln!(out, "… {} more rows", rows.len() - shown)?;
    }
    let scanned = last
        .response
        .exec_details_v2
        .as_ref()
        .and_then(|d| d.scan_detail_v2.as_ref())
        .map(|s| s.processed_versions);
    writeln!(
        out,
        "{} row{} · node {:.1} ms · round trip {:.1} ms{}{}",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        node_us as f64 / 1000.0,
        round_trip.as_secs_f64() * 1000.0,
        scanned.map(|n| format!(" · {n} keys scanned")).unwrap_or_default(),
        if args.repeat > 1 { format!(" (medians of {})", args.repeat) } else { String::new() },
    )?;
    writeln!(out, "decision: {} — {}", last.path, last.detail)?;
    writeln!(out)?;
    Ok(())
}

async fn stats(args: StatsArgs) -> Result<()> {
    use client::{histogram_quantile as quantile, human_bytes, sum};
    let http = args.tls.client()?;
    let root = base(&args.worker);
    let metrics = http.get(&format!("{root}/metrics")).await.with_context(|| {
        format!("cannot reach the worker at {} (is rcop-worker running there?)", args.worker)
    })?;
    if metrics.status != 200 {
        bail!("{root}/metrics answered {}", metrics.status);
    }
    let text = std::str::from_utf8(&metrics.body).context("/metrics is not text")?;
    let s = client::parse_metrics(text);
    if !s.iter().any(|x| x.name.starts_with("tikv_worker_remote_cop")) {
        bail!("{root}/metrics has no worker metrics (is {} an rcop worker?)", args.worker);
    }
    let ready = match http.get(&format!("{root}/readyz")).await {
        Ok(a) if a.status == 200 => "ready".to_owned(),
        Ok(a) => format!("NOT ready: {}", String::from_utf8_lossy(&a.body).trim()),
        Err(e) => format!("readiness unknown: {e:#}"),
    };
    let n = |v: f64| format!("{v:.0}");
    let rate = |hits: f64, misses: f64| {
        if hits + misses > 0.0 {
            format!("{:.1} %", 100.0 * hits / (hits + misses))
        } else {
            "-".to_owned()
        }
    };
    let ms = |v: Option<f64>| v.map_or("-".to_owned(), |x| format!("{:.1} ms", x * 1000.0));
    let mut out = std::io::stdout().lock();
    writeln!(out, "worker {} — {ready}\n", args.worker)?;

    let req = "tikv_worker_remote_cop_request_duration_seconds";
    let mut rows = Vec::new();
    for path in ["http", "grpc"] {
        rows.push(vec![
            path.to_owned(),
            n(sum(&s, "tikv_worker_remote_cop_dag_request_counter", &[("path", path)])),
            ms(quantile(&s, req, &[("path", path)], 0.5)),
            ms(quantile(&s, req, &[("path", path)], 0.99)),
        ]);
    }
    writeln!(
        out,
        "requests: {} in flight, {} cancelled, {} answered\n{}",
        n(sum(&s, "tikv_worker_remote_cop_processing_requests_counter", &[])),
        n(sum(&s, "rcop_worker_cancelled_requests_total", &[])),
        human_bytes(sum(&s, "tikv_worker_remote_cop_dag_response_size", &[])),
        table::render(&["path", "requests", "p50", "p99"], &rows)
    )?;

    let mut failed: Vec<Vec<String>> = s
        .iter()
        .filter(|x| x.name == "tikv_worker_remote_cop_failed_requests_counter" && x.value > 0.0)
        .map(|x| vec![x.labels.get("type").cloned().unwrap_or_default(), n(x.value)])
        .collect();
    failed.sort();
    let wait = "tikv_worker_limiter_request_wait_duration_seconds";
    writeln!(
        out,
        "limiter: {} memory in use; waiting {} for memory, {} for a permit; wait p99 {} (memory), {} (permit)",
        human_bytes(sum(&s, "tikv_worker_memory_limiter_current_used", &[])),
        n(sum(&s, "tikv_worker_limiter_waiting_requests_counter", &[("type", "cop_limiter")])),
        n(sum(&s, "tikv_worker_limiter_waiting_requests_counter", &[("type", "permit")])),
        ms(quantile(&s, wait, &[("type", "cop_limiter")], 0.99)),
        ms(quantile(&s, wait, &[("type", "permit")], 0.99)),
    )?;
    if failed.is_empty() {
        writeln!(out, "failed requests: none\n")?;
    } else {
        writeln!(out, "failed requests:\n{}", table::render(&["reason", "count"], &failed))?;
    }

    let cache_row = |name: &str, prefix: &str| {
        let hits = sum(&s, &format!("{prefix}_hits_total"), &[]);
        let misses = sum(&s, &format!("{prefix}_misses_total"), &[]);
        vec![
            name.to_owned(),
            n(hits),
            n(misses),
            rate(hits, misses),
            human_bytes(sum(&s, &format!("{prefix}_bytes"), &[])),
            human_bytes(sum(&s, &format!("{prefix}_capacity_bytes"), &[])),
        ]
    };
    let mut caches = vec![
        cache_row("block", "rcop_worker_block_cache"),
        cache_row("meta", "rcop_worker_meta_cache"),
    ];
    if s.iter().any(|x| x.name == "kv_engine_ia_manager_segments_disk_size") {
        let misses = sum(&s, "kv_engine_ia_read_segment_cache_miss", &[]);
        let reads = sum(&s, "kv_engine_ia_read_segment_duration_seconds_count", &[]);
        caches.push(vec![
            "disk segments".to_owned(),
            n((reads - misses).max(0.0)),
            n(misses),
            rate((reads - misses).max(0.0), misses),
            human_bytes(
                sum(&s, "kv_engine_ia_manager_segments_disk_size", &[])
                    + sum(&s, "kv_engine_ia_manager_segments_memory_size", &[]),
            ),
            human_bytes(
                sum(&s, "kv_engine_ia_main_queue_capacity", &[])
                    + sum(&s, "kv_engine_ia_small_queue_capacity", &[]),
            ),
        ]);
    }
    writeln!(
        out,
        "caches:\n{}",
        table::render(&["cache", "hits", "misses", "hit rate", "used", "capacity"], &caches)
    )?;

    let os = "rcop_worker_object_store";
    let store_rows: Vec<Vec<String>> = ["get", "put"]
        .iter()
        .map(|op| {
            let l = [("op", *op)];
            vec![
                (*op).to_owned(),
                n(sum(&s, &format!("{os}_requests_total"), &l)),
                human_bytes(sum(&s, &format!("{os}_bytes_total"), &l)),
                n(sum(&s, &format!("{os}_errors_total"), &l)),
                ms(quantile(&s, &format!("{os}_request_duration_seconds"), &l, 0.5)),
                ms(quantile(&s, &format!("{os}_request_duration_seconds"), &l, 0.99)),
            ]
        })
        .collect();
    writeln!(
        out,
        "object store:\n{}",
        table::render(&["op", "requests", "bytes", "errors", "p50", "p99"], &store_rows)
    )?;

    let mut keyspaces: Vec<(String, f64)> = s
        .iter()
        .filter(|x| x.name == "rcop_worker_keyspace_requests_total")
        .filter_map(|x| x.labels.get("keyspace").map(|k| (k.clone(), x.value)))
        .collect();
    keyspaces.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let ks_rows: Vec<Vec<String>> = keyspaces
        .iter()
        .take(args.top)
        .map(|(k, requests)| {
            let l = [("keyspace", k.as_str())];
            vec![
                k.clone(),
                n(*requests),
                n(sum(&s, "rcop_worker_keyspace_scanned_keys_total", &l)),
                human_bytes(sum(&s, "rcop_worker_keyspace_scanned_bytes_total", &l)),
                human_bytes(sum(&s, "rcop_worker_keyspace_response_bytes_total", &l)),
            ]
        })
        .collect();
    if ks_rows.is_empty() {
        writeln!(out, "keyspaces: no requests yet")?;
    } else {
        writeln!(
            out,
            "keyspaces (busiest {} of {}):\n{}",
            ks_rows.len(),
            keyspaces.len(),
            table::render(
                &["keyspace", "requests", "keys scanned", "scanned", "answered"],
                &ks_rows
            )
        )?;
    }
    Ok(())
}
