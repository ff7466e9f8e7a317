//! What the `rcop` command-line client needs: a small HTTP/1.1 client (plain or TLS) for the
//! storage node's and the worker's endpoints, the built-in queries by name, and a reader of
//! Prometheus' text format for `rcop stats`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Uri;
use hyper_util::rt::TokioIo;
use rcop_proto::coprocessor;

use crate::dag_json::{self, DagFile, RangeSpec};
use crate::tpch::{self, pushdowns, schema};
use crate::{NodeInfo, dags};

/// An HTTP answer: status, headers (lower-case names) and body.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// Response headers, names lower-cased.
    pub headers: BTreeMap<String, String>,
    /// The body.
    pub body: Bytes,
}

impl Answer {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

/// A one-request-per-connection HTTP/1.1 client for `http://` and `https://` URLs.
#[derive(Clone)]
pub struct HttpClient {
    tls: Option<Arc<rcop_tls::ClientConfig>>,
    timeout: Duration,
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClient")
            .field("tls", &self.tls.is_some())
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl HttpClient {
    /// A client; `tls` is used for `https://` URLs (which fail without it).
    pub fn new(tls: Option<Arc<rcop_tls::ClientConfig>>, timeout: Duration) -> Self {
        HttpClient { tls, timeout }
    }

    /// `GET url`.
    ///
    /// # Errors
    ///
    /// As [`request`](Self::request).
    pub async fn get(&self, url: &str) -> Result<Answer> {
        self.request("GET", url, Bytes::new()).await
    }

    /// `POST url` with `body`.
    ///
    /// # Errors
    ///
    /// As [`request`](Self::request).
    pub async fn post(&self, url: &str, body: Bytes) -> Result<Answer> {
        self.request("POST", url, body).await
    }

    /// Sends one request on a new connection.
    ///
    /// # Errors
    ///
    /// A bad URL, a refused or timed-out connection (the message says which address), a TLS
    /// failure, a broken exchange.
    pub async fn request(&self, method: &str, url: &str, body: Bytes) -> Result<Answer> {
        tokio::time::timeout(self.timeout, self.exchange(method, url, body))
            .await
            .with_context(|| format!("{url}: no answer within {:?}", self.timeout))?
    }

    async fn exchange(&self, method: &str, url: &str, body: Bytes) -> Result<Answer> {
        let uri: Uri = url.parse().with_context(|| format!("{url:?} is not a URL"))?;
        let https = match uri.scheme_str() {
            Some("http") => false,
            Some("https") => true,
            _ => bail!("{url:?}: only http:// and https:// URLs"),
        };
        let host = uri.host().with_context(|| format!("{url:?} has no host"))?.to_owned();
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        let bare = host.trim_start_matches('[').trim_end_matches(']').to_owned();
        let stream = tokio::net::TcpStream::connect((bare.as_str(), port))
            .await
            .with_context(|| format!("cannot connect to {host}:{port}"))?;
        let _ = stream.set_nodelay(true);
        let path = uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
        let request = hyper::Request::builder()
            .method(method)
            .uri(path)
            .header(hyper::header::HOST, format!("{host}:{port}"))
            .header(hyper::header::CONTENT_TYPE, rcop_wire::CONTENT_TYPE_OCTET_STREAM)
            .body(Full::new(body))
            .context("building the request")?;
        if https {
            let tls = self
                .tls
                .clone()
                .with_context(|| format!("{url}: an https:// URL needs --ca, --cert and --key"))?;
            let name = rustls::pki_types::ServerName::try_from(bare.clone())
                .with_context(|| format!("{bare:?} is no TLS server name"))?;
            let stream = tokio_rustls::TlsConnector::from(tls)
                .connect(name, stream)
                .await
                .with_context(|| format!("TLS handshake with {host}:{port}"))?;
            send(TokioIo::new(stream), request).await
        } else {
            send(TokioIo::new(stream), request).await
        }
    }
}

async fn send<I>(io: I, request: hyper::Request<Full<Bytes>>) -> Result<Answer>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(io).await.context("HTTP handshake")?;
    let conn = tokio::spawn(conn);
    let response = sender.send_request(request).await.context("the connection broke")?;
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    let body = response.into_body().collect().await.context("reading the answer")?.to_bytes();
    conn.abort();
    Ok(Answer { status, headers, body })
}

/// A query to send: a title, the DAG with its output names and types, and its key ranges.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The query's name.
    pub name: String,
    /// What it computes, when known.
    pub sql: String,
    /// The DAG and its outputs.
    pub file: DagFile,
    /// The key ranges under the node's keyspace.
    pub ranges: Vec<coprocessor::KeyRange>,
}

impl Prepared {
    /// The `coprocessor.Request` for `info`'s keyspace and region at `start_ts`.
    pub fn request(&self, info: &NodeInfo, start_ts: u64) -> coprocessor::Request {
        use prost::Message;
        coprocessor::Request {
            context: Some(rcop_proto::kvrpcpb::Context {
                region_id: info.region_id,
                keyspace_id: Some(info.keyspace_id),
                api_version: 2,
                max_execution_duration_ms: 60_000,
                ..Default::default()
            }),
            tp: rcop_proto::REQ_TYPE_DAG,
            data: Bytes::from(self.file.dag.encode_to_vec()),
            ranges: self.ranges.clone(),
            start_ts,
            ..Default::default()
        }
    }
}

/// The example queries over `lineitem` in the `rowid` schema, by their CLI names.
const EXAMPLES: [&str; 5] = ["q1", "q6", "topn", "selective", "wide-scan"];

fn example(name: &str) -> Result<Option<dags::Query>> {
    Ok(match name {
        "q1" | "q01" => Some(dags::q1()?),
        "q6" | "q06" => Some(dags::q6()?),
        "topn" | "top-n" => Some(dags::top_n()?),
        "selective" => Some(dags::selective()?),
        "wide-scan" => Some(dags::wide_scan()),
        _ => None,
    })
}

/// An example's handle range as a JSON-form range (none: the whole table).
fn example_ranges(q: &dags::Query) -> Vec<RangeSpec> {
    match q.handles {
        Some((first, last)) => vec![RangeSpec::Handles(first, last.saturating_add(1))],
        None => Vec::new(),
    }
}

/// The names `rcop query … tpch NAME` accepts for what `info` loaded.
pub fn available(info: &NodeInfo) -> Result<Vec<String>> {
    let mut out = Vec::new();
    if info.tables.iter().any(|t| t.schema == "rowid" && t.table == "lineitem") {
        out.extend(EXAMPLES.iter().map(|s| (*s).to_owned()));
    }
    let go_tpc: Vec<&str> =
        info.tables.iter().filter(|t| t.schema == "go-tpc").map(|t| t.table.as_str()).collect();
    for task in pushdowns::all()? {
        if go_tpc.contains(&task.table.name) {
            out.push(task.name.clone());
        }
    }
    Ok(out)
}

/// Output names of a DAG that only scans and filters `table` (its columns' names), else
/// `None`.
fn scan_names(table: &schema::TableDef, file: &DagFile) -> Option<Vec<String>> {
    let scan = file.dag.executors.first()?.tbl_scan.as_ref()?;
    let plain = file
        .dag
        .executors
        .iter()
        .skip(1)
        .all(|e| e.selection.is_some() || e.top_n.is_some() || e.limit.is_some());
    if !plain {
        return None;
    }
    file.dag
        .output_offsets
        .iter()
        .map(|&o| {
            let id = scan.columns.get(o as usize)?.column_id?;
            let i = usize::try_from(id.checked_sub(1)?).ok()?;
            table.cols.get(i).map(|c| c.0.to_owned())
        })
        .collect()
}

/// The built-in queries `name` stands for on a node that loaded what `info` lists: one of
/// the examples over `lineitem` (`q1`, `q6`, `topn`, `selective`, `wide-scan`) when the
/// `rowid` schema is loaded, else the go-tpc pushdown tasks (`q03_orders`, or `q3` for every
/// task of Q3 over a loaded table).
///
/// # Errors
///
/// An unknown name (the message lists the known ones), a query over a table not loaded.
pub fn resolve(name: &str, info: &NodeInfo) -> Result<Vec<Prepared>> {
    let lower = name.to_ascii_lowercase();
    let prefix = tpch::keyspace_prefix(info.keyspace_id)?;
    let rowid = info.tables.iter().any(|t| t.schema == "rowid" && t.table == "lineitem");
    if rowid && let Some(q) = example(&lower)? {
        let text = dag_json::to_json(&q.dag, &example_ranges(&q), &q.columns)?;
        let file = dag_json::parse(&text)?;
        let key_ranges = dag_json::key_ranges(&file, &prefix)?;
        return Ok(vec![Prepared {
            name: q.name.to_owned(),
            sql: q.sql.to_owned(),
            file,
            ranges: key_ranges,
        }]);
    }
    let loaded: Vec<&str> =
        info.tables.iter().filter(|t| t.schema == "go-tpc").map(|t| t.table.as_str()).collect();
    // `q3` and `q03` both stand for every task of query 3.
    let query_prefix =
        lower.strip_prefix('q').and_then(|n| n.parse::<u32>().ok()).map(|n| format!("q{n:02}_"));
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for task in pushdowns::all()? {
        let matches =
            task.name == lower || query_prefix.as_deref().is_some_and(|p| task.name.starts_with(p));
        if !matches {
            continue;
        }
        if !loaded.contains(&task.table.name) {
            skipped.push(format!("{} (needs {})", task.name, task.table.name));
            continue;
        }
        let (start, end) = pushdowns::key_range(&task, &prefix)?;
        let text = dag_json::to_json(&task.dag, &[], &[])?;
        let mut file = dag_json::parse(&text)?;
        if let Some(names) = scan_names(task.table, &file) {
            file.names = names;
        }
        out.push(Prepared {
            name: task.name.clone(),
            sql: task.sql.clone(),
            file,
            ranges: vec![coprocessor::KeyRange { start: start.into(), end: end.into() }],
        });
    }
    if out.is_empty() {
        let known = available(info)?;
        if !skipped.is_empty() {
            bail!(
                "{name} needs go-tpc tables this node has not loaded: {}; it answers: {}",
                skipped.join(", "),
                if known.is_empty() { "nothing".to_owned() } else { known.join(", ") }
            );
        }
        if known.is_empty() {
            bail!("{name}: the node has loaded no TPC-H tables");
        }
        bail!("unknown query {name:?}; this node answers: {}", known.join(", "));
    }
    Ok(out)
}

/// The JSON form of built-in query `name` (any of the examples or the pushdown tasks,
/// loaded or not).
///
/// # Errors
///
/// An unknown name.
pub fn builtin_json(name: &str) -> Result<String> {
    let lower = name.to_ascii_lowercase();
    if let Some(q) = example(&lower)? {
        return dag_json::to_json(&q.dag, &example_ranges(&q), &q.columns);
    }
    for task in pushdowns::all()? {
        if task.name == lower {
            let ranges = match task.range {
                pushdowns::Range::Table | pushdowns::Range::IndexFull(_) => Vec::new(),
                _ => {
                    let (s, e) = pushdowns::key_range(&task, &[])?;
                    vec![RangeSpec::Raw(s, e)]
                }
            };
            return dag_json::to_json(&task.dag, &ranges, &[]);
        }
    }
    let tasks: Vec<String> = pushdowns::all()?.into_iter().map(|t| t.name).collect();
    bail!("unknown query {name:?}; built in: {}, {}", EXAMPLES.join(", "), tasks.join(", "))
}

/// One sample of Prometheus' text format.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Metric name (with `_bucket`, `_sum`, `_count` suffixes as exposed).
    pub name: String,
    /// Labels.
    pub labels: BTreeMap<String, String>,
    /// Value.
    pub value: f64,
}

/// Parses Prometheus' text exposition format (comments and malformed lines skipped).
pub fn parse_metrics(text: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (series, value) = match line.rsplit_once(' ') {
            Some(x) => x,
            None => continue,
        };
        let Ok(value) = value.parse::<f64>() else { continue };
        let (name, labels) = match series.split_once('{') {
            Some((name, rest)) => (name, parse_labels(rest.trim_end_matches('}'))),
            None => (series, BTreeMap::new()),
        };
        out.push(Sample { name: name.to_owned(), labels, value });
    }
    out
}

fn parse_labels(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut rest = text;
    while let Some((key, after)) = rest.split_once("=\"") {
        let mut value = String::new();
        let mut chars = after.char_indices();
        let mut end = after.len();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, n)) = chars.next() {
                        value.push(if n == 'n' { '\n' } else { n });
                    }
                }
                '"' => {
                    end = i + 1;
                    break;
                }
                c => value.push(c),
            }
        }
        out.insert(key.trim().trim_start_matches(',').trim().to_owned(), value);
        rest = after.get(end..).unwrap_or("");
    }
    out
}

/// Sums the samples named `name` whose labels include every pair of `labels`.
pub fn sum(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    samples
        .iter()
        .filter(|s| s.name == name)
        .filter(|s| labels.iter().all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v)))
        .fold(0.0, |acc, s| acc + s.value)
}

/// The value of histogram `name`'s quantile `q` (0..1) for the samples with `labels`, by
/// linear interpolation in its buckets; `None` without observations.
pub fn histogram_quantile(
    samples: &[Sample],
    name: &str,
    labels: &[(&str, &str)],
    q: f64,
) -> Option<f64> {
    let bucket = format!("{name}_bucket");
    let mut buckets: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
    for s in samples.iter().filter(|s| s.name == bucket) {
        if !labels.iter().all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v)) {
            continue;
        }
        let le = match s.labels.get("le").map(String::as_str) {
            Some("+Inf") => f64::INFINITY,
            Some(x) => x.parse().ok()?,
            None => continue,
        };
        let e = buckets.entry(le.to_bits()).or_insert((le, 0.0));
        e.1 += s.value;
    }
    let mut sorted: Vec<(f64, f64)> = buckets.into_values().collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total = sorted.last()?.1;
    if total <= 0.0 {
        return None;
    }
    let rank = q * total;
    let (mut lo, mut below) = (0.0, 0.0);
    for (le, count) in sorted {
        if count >= rank {
            if le.is_infinite() {
                return Some(lo);
            }
            let within = count - below;
            let frac = if within > 0.0 { (rank - below) / within } else { 1.0 };
            return Some(lo + (le - lo) * frac);
        }
        lo = le;
        below = count;
    }
    None
}

/// Bytes for people: `512 B`, `1.5 KiB`, `12.0 MiB`, `3.2 GiB`.
pub fn human_bytes(b: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 { format!("{v:.0} B") } else { format!("{v:.1} {}", UNITS[unit]) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_text_parses() {
        let text = "# HELP x y\n# TYPE x counter\nx 3\ny{a=\"1\",b=\"q\\\"z\"} 2.5\n\
                    h_bucket{le=\"0.1\"} 1\nh_bucket{le=\"1\"} 3\nh_bucket{le=\"+Inf\"} 4\nbad line here\n";
        let s = parse_metrics(text);
        assert_eq!(s.len(), 5);
        assert_eq!(sum(&s, "x", &[]), 3.0);
        assert_eq!(s[1].labels.get("b").unwrap(), "q\"z");
        assert_eq!(sum(&s, "y", &[("a", "1")]), 2.5);
        assert_eq!(sum(&s, "y", &[("a", "2")]), 0.0);
        // Median: rank 2 of 4 falls halfway into (0.1, 1].
        let p50 = histogram_quantile(&s, "h", &[], 0.5).unwrap();
        assert!((p50 - 0.55).abs() < 1e-9, "{p50}");
        assert_eq!(histogram_quantile(&s, "missing", &[], 0.5), None);
    }

    #[test]
    fn bytes_for_people() {
        assert_eq!(human_bytes(512.0), "512 B");
        assert_eq!(human_bytes(1536.0), "1.5 KiB");
        assert_eq!(human_bytes(12.0 * 1024.0 * 1024.0), "12.0 MiB");
    }

    #[test]
    fn every_builtin_prints_and_resolves() {
        for name in EXAMPLES {
            let text = builtin_json(name).unwrap();
            assert!(dag_json::parse(&text).is_ok(), "{name}");
        }
        for task in pushdowns::all().unwrap() {
            let text = builtin_json(&task.name).unwrap();
            let file = dag_json::parse(&text).unwrap();
            assert_eq!(file.dag, task.dag, "{}", task.name);
            assert_eq!(file.types.len(), task.outputs.len(), "{}", task.name);
        }
        assert!(builtin_json("q99").is_err());
    }
}
