//! The storage node's offload knobs: upstream's `[kvengine]` names, kebab-case, plus the
//! client, retry and fallback knobs this crate adds.

use std::fmt;
use std::net::IpAddr;
use std::time::Duration;

pub use rcop_units::{ReadableDuration, ReadableSize};
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};

use crate::error::Error;

/// Default `remote-coprocessor-min-blocks-size`: 32 MiB (upstream).
pub const DEFAULT_MIN_BLOCKS_SIZE: u64 = 32 * 1024 * 1024;
/// Default `remote-coprocessor-num-ranges` (upstream).
pub const DEFAULT_NUM_RANGES: usize = 2048;
/// Default `remote-coprocessor-min-process-duration`: 30 ms (upstream).
pub const DEFAULT_MIN_PROCESS_DURATION: Duration = Duration::from_millis(30);
/// Default `remote-coprocessor-request-timeout`: the deadline of a request whose
/// `context.max_execution_duration_ms` is 0 (upstream `DEFAULT_COP_TIMEOUT`, 20 s).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(20);
/// Default `remote-coprocessor-backoff-base`: 1 s (upstream `ExponentialBackoff` base).
pub const DEFAULT_BACKOFF_BASE: Duration = Duration::from_secs(1);
/// Default `remote-coprocessor-backoff-max`: 30 s (upstream `ExponentialBackoff` cap).
pub const DEFAULT_BACKOFF_MAX: Duration = Duration::from_secs(30);
/// Default `remote-coprocessor-connect-timeout`: 3 s, well under the request deadline so a
/// black-holed worker leaves time to fail over.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// Default `remote-coprocessor-pool-idle-timeout`: 30 s, below a worker's default
/// `header-read-timeout` (60 s, which also closes its idle connections), so the node drops an
/// idle connection before the worker does and never sends on one the worker is closing.
pub const DEFAULT_POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// Default `remote-coprocessor-pool-max-idle-per-host`: 64 idle connections per worker.
pub const DEFAULT_POOL_MAX_IDLE_PER_HOST: usize = 64;
/// Default `remote-coprocessor-max-response-size`: 256 MiB, eight times the worker's default
/// `cop-max-resp-size` page (32 MiB), so only a broken worker reaches it.
pub const DEFAULT_MAX_RESPONSE_SIZE: u64 = 256 * 1024 * 1024;

/// Default `remote-coprocessor-max-whole-response-size`: 1 GiB. A non-paging request whose
/// answer the worker cut into pages is resumed and assembled on the node up to this many
/// bytes; beyond it the request runs locally.
pub const DEFAULT_MAX_WHOLE_RESPONSE_SIZE: u64 = 1 << 30;

/// Default `remote-coprocessor-resolve-interval`: 10 s. A Kubernetes headless service's
/// records change when a pod becomes ready or goes away, and CoreDNS serves them with a 5 s
/// TTL by default, so a new worker takes its shards within about 15 s; one `getaddrinfo`
/// per name every 10 s costs nothing.
pub const DEFAULT_RESOLVE_INTERVAL: Duration = Duration::from_secs(10);

/// The shortest non-zero `remote-coprocessor-resolve-interval`: 1 s, so a value meant as
/// seconds but written as milliseconds cannot turn the node into a DNS load generator.
pub const MIN_RESOLVE_INTERVAL: Duration = Duration::from_secs(1);

/// Offload configuration, the storage node's `[kvengine]` section (kebab-case keys).
///
/// Every key is optional; [`Config::default`] gives the documented defaults and an empty
/// worker list, which keeps every request local. Unknown keys are ignored so that the
/// struct can be flattened into a larger `[kvengine]` section.
///
/// ```
/// use std::time::Duration;
/// use rcop_offload::Config;
///
/// let config = Config::from_toml_str(r#"
///     remote-coprocessor-addr = ["http://10.0.0.1:19000", "http://10.0.0.2:19000/coprocessor"]
///     remote-coprocessor-min-blocks-size = "64MiB"
///     remote-coprocessor-min-process-duration = "50ms"
/// "#)?;
/// assert_eq!(config.remote_coprocessor_min_blocks_size.as_u64(), 64 << 20);
/// let min_process = config.remote_coprocessor_min_process_duration.as_duration();
/// assert_eq!(min_process, Duration::from_millis(50));
/// assert_eq!(config.remote_coprocessor_num_ranges, 2048);
/// assert_eq!(config.worker_urls()?[0].to_string(), "http://10.0.0.1:19000/coprocessor");
/// # Ok::<(), rcop_offload::Error>(())
/// ```
///
/// Non-exhaustive: outside this crate, start from [`Config::default`] or
/// [`Config::from_toml_str`] and assign the public fields.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default, rename_all = "kebab-case")]
#[non_exhaustive]
pub struct Config {
    /// Worker URL(s) for heavy DAG requests: one string or a list. An empty string or list
    /// disables offloading. A URL without a path gets `/coprocessor`. A URL whose host is a
    /// DNS name stands for every address the name resolves to (see
    /// [`remote_coprocessor_resolve_interval`](Self::remote_coprocessor_resolve_interval)).
    pub remote_coprocessor_addr: WorkerAddrs,
    /// Worker URL(s) for analyze (tp 104) and checksum (tp 105) requests, upstream's
    /// `remote-worker-addr`: when set, those requests always go remote, whatever their size
    /// (the statistics work of a whole region is the heaviest a node runs); empty (the
    /// default) keeps them local. Same forms as `remote-coprocessor-addr` (the same workers
    /// may serve both; DNS names are discovered the same way).
    pub remote_worker_addr: WorkerAddrs,
    /// How often the DNS names of `remote-coprocessor-addr` are resolved again (default
    /// 10 s; at least 1 s). Each address a name resolves to is one worker of the rendezvous
    /// set, so a Kubernetes headless service spreads shards over its pods; a failed or empty
    /// answer keeps the previous addresses. `"0s"` turns discovery off: a name is then one
    /// worker, resolved by the HTTP client at each connection, as an IP address is.
    pub remote_coprocessor_resolve_interval: ReadableDuration,
    /// Estimated block bytes at or above which a request is offloaded (default 32 MiB;
    /// `"32MiB"`, `"32000000"` or an integer).
    pub remote_coprocessor_min_blocks_size: ReadableSize,
    /// A request with at least this many ranges skips the estimate (default 2048).
    pub remote_coprocessor_num_ranges: usize,
    /// Lazy patterns whose recent local runs took longer than this on average are
    /// offloaded (default 30 ms).
    pub remote_coprocessor_min_process_duration: ReadableDuration,
    /// When a remote attempt fails retryably, tell the caller to run locally instead of
    /// retrying until the deadline (default false, as upstream: no fallback).
    pub fallback_to_local: bool,
    /// Deadline of a request whose `context.max_execution_duration_ms` is 0 (default 20 s).
    pub remote_coprocessor_request_timeout: ReadableDuration,
    /// First backoff step between retry rounds (default 1 s); sleeps are equal-jitter.
    pub remote_coprocessor_backoff_base: ReadableDuration,
    /// Largest backoff step (default 30 s).
    pub remote_coprocessor_backoff_max: ReadableDuration,
    /// TCP connect timeout of one attempt (default 3 s).
    pub remote_coprocessor_connect_timeout: ReadableDuration,
    /// How long an idle pooled connection is kept (default 90 s).
    pub remote_coprocessor_pool_idle_timeout: ReadableDuration,
    /// Idle pooled connections kept per worker (default 64; 0 disables reuse).
    pub remote_coprocessor_pool_max_idle_per_host: usize,
    /// Largest response body accepted from a worker (default 256 MiB).
    pub remote_coprocessor_max_response_size: ReadableSize,
    /// Largest answer assembled from a worker's pages for a non-paging request (default
    /// 1 GiB); a larger one runs locally instead.
    pub remote_coprocessor_max_whole_response_size: ReadableSize,
    /// This node's status address, sent as `x-dfs-remote-cache-addr` so workers may read
    /// files from it first (default empty: header not sent).
    pub dfs_remote_cache_addr: String,
    /// Whether offload bodies carry a crc32c of each part (envelope format 2, announced by
    /// the `x-rcop-envelope: 2` header). Default true; set false for workers that read
    /// upstream's format 1 only.
    pub remote_coprocessor_envelope_checksum: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            remote_coprocessor_addr: WorkerAddrs::default(),
            remote_worker_addr: WorkerAddrs::default(),
            remote_coprocessor_resolve_interval: ReadableDuration(DEFAULT_RESOLVE_INTERVAL),
            remote_coprocessor_min_blocks_size: ReadableSize(DEFAULT_MIN_BLOCKS_SIZE),
            remote_coprocessor_num_ranges: DEFAULT_NUM_RANGES,
            remote_coprocessor_min_process_duration: ReadableDuration(DEFAULT_MIN_PROCESS_DURATION),
            fallback_to_local: false,
            remote_coprocessor_request_timeout: ReadableDuration(DEFAULT_REQUEST_TIMEOUT),
            remote_coprocessor_backoff_base: ReadableDuration(DEFAULT_BACKOFF_BASE),
            remote_coprocessor_backoff_max: ReadableDuration(DEFAULT_BACKOFF_MAX),
            remote_coprocessor_connect_timeout: ReadableDuration(DEFAULT_CONNECT_TIMEOUT),
            remote_coprocessor_pool_idle_timeout: ReadableDuration(DEFAULT_POOL_IDLE_TIMEOUT),
            remote_coprocessor_pool_max_idle_per_host: DEFAULT_POOL_MAX_IDLE_PER_HOST,
            remote_coprocessor_max_response_size: ReadableSize(DEFAULT_MAX_RESPONSE_SIZE),
            remote_coprocessor_max_whole_response_size: ReadableSize(
                DEFAULT_MAX_WHOLE_RESPONSE_SIZE,
            ),
            dfs_remote_cache_addr: String::new(),
            remote_coprocessor_envelope_checksum: true,
        }
    }
}

impl Config {
    /// Parses the body of a `[kvengine]` section (keys at top level) and validates it.
    ///
    /// # Errors
    ///
    /// [`Error::ConfigParse`] for bad TOML or a value of the wrong shape (the message quotes
    /// the offending line, key included); [`Error::Config`] from [`validate`](Self::validate).
    pub fn from_toml_str(text: &str) -> Result<Config, Error> {
        let config: Config = toml::from_str(text).map_err(|e| Error::ConfigParse(Box::new(e)))?;
        config.validate()?;
        Ok(config)
    }

    /// Checks values that parse but make no sense.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] naming the key: a worker URL that is not `http://` or `https://`
    /// with a host, a non-zero `remote-coprocessor-resolve-interval` under 1 s,
    /// `remote-coprocessor-num-ranges` of 0, a zero request timeout or backoff
    /// base, a backoff base above the max, a zero connect timeout or response size.
    pub fn validate(&self) -> Result<(), Error> {
        self.worker_urls()?;
        self.stats_worker_config().worker_urls().map_err(|e| match e {
            Error::Config { reason, .. } => Error::Config { key: "remote-worker-addr", reason },
            other => other,
        })?;
        let invalid =
            |key: &'static str, reason: &str| Err(Error::Config { key, reason: reason.to_owned() });
        let resolve = self.remote_coprocessor_resolve_interval.as_duration();
        if !resolve.is_zero() && resolve < MIN_RESOLVE_INTERVAL {
            return invalid(
                "remote-coprocessor-resolve-interval",
                "must be \"0s\" (no discovery) or at least 1s",
            );
        }
        if self.remote_coprocessor_num_ranges == 0 {
            return invalid("remote-coprocessor-num-ranges", "must be at least 1");
        }
        if self.remote_coprocessor_request_timeout.is_zero() {
            return invalid("remote-coprocessor-request-timeout", "must be greater than 0");
        }
        if self.remote_coprocessor_backoff_base.is_zero() {
            return invalid("remote-coprocessor-backoff-base", "must be greater than 0");
        }
        if self.remote_coprocessor_backoff_base > self.remote_coprocessor_backoff_max {
            return invalid(
                "remote-coprocessor-backoff-max",
                "must not be smaller than remote-coprocessor-backoff-base",
            );
        }
        if self.remote_coprocessor_connect_timeout.is_zero() {
            return invalid("remote-coprocessor-connect-timeout", "must be greater than 0");
        }
        if self.remote_coprocessor_max_response_size.as_u64() == 0 {
            return invalid("remote-coprocessor-max-response-size", "must be greater than 0");
        }
        if self.remote_coprocessor_max_whole_response_size.as_u64() == 0 {
            return invalid("remote-coprocessor-max-whole-response-size", "must be greater than 0");
        }
        // A header value: visible ASCII, spaces and tabs.
        if !self.dfs_remote_cache_addr.bytes().all(|b| b == b'\t' || (b' '..=b'~').contains(&b)) {
            return invalid("dfs-remote-cache-addr", "is not a valid HTTP header value");
        }
        Ok(())
    }

    /// The worker URLs, checked, with `/coprocessor` appended where the path is empty.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for `remote-coprocessor-addr` when a URL is not `http://` /
    /// `https://` with a host.
    pub fn worker_urls(&self) -> Result<Vec<String>, Error> {
        Ok(self.parsed_worker_urls()?.iter().map(WorkerUrl::to_string).collect())
    }

    /// The worker URLs, checked and taken apart.
    pub(crate) fn parsed_worker_urls(&self) -> Result<Vec<WorkerUrl>, Error> {
        self.remote_coprocessor_addr.0.iter().map(|url| parse_worker_url(url)).collect()
    }

    /// This configuration with `remote-worker-addr` as the worker list: what the client of
    /// analyze and checksum requests is built from.
    pub(crate) fn stats_worker_config(&self) -> Config {
        Config {
            remote_coprocessor_addr: self.remote_worker_addr.clone(),
            remote_worker_addr: WorkerAddrs::default(),
            ..self.clone()
        }
    }

    /// The re-resolution interval of worker names; `None` when discovery is off (`"0s"`).
    pub(crate) fn resolve_interval(&self) -> Option<Duration> {
        let interval = self.remote_coprocessor_resolve_interval.as_duration();
        (!interval.is_zero()).then_some(interval)
    }
}

/// A checked worker URL, `{scheme}://{userinfo@}{host}{:port}{path}`, in its parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct WorkerUrl {
    /// `http` or `https`, lower case.
    pub(crate) scheme: &'static str,
    /// `user[:password]@`, or empty.
    userinfo: String,
    /// The host as written (an IPv6 literal with its brackets).
    host: String,
    /// `:port` as written, or empty.
    port: String,
    /// The path, `/coprocessor` when none was given.
    path: String,
    /// The host when it is a DNS name, lower case; `None` for an IP literal.
    name: Option<String>,
}

impl WorkerUrl {
    /// The host when it is a DNS name (lower case), not an IP address.
    pub(crate) fn dns_name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// This URL with its host replaced by `ip` (the scheme, user, port and path kept).
    pub(crate) fn with_ip(&self, ip: IpAddr) -> String {
        let WorkerUrl { scheme, userinfo, port, path, .. } = self;
        match ip {
            IpAddr::V4(v4) => format!("{scheme}://{userinfo}{v4}{port}{path}"),
            IpAddr::V6(v6) => format!("{scheme}://{userinfo}[{v6}]{port}{path}"),
        }
    }
}

impl fmt::Display for WorkerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let WorkerUrl { scheme, userinfo, host, port, path, .. } = self;
        write!(f, "{scheme}://{userinfo}{host}{port}{path}")
    }
}

/// Checks a worker URL (`http[s]://authority[/path]`) and gives an empty path
/// `/coprocessor`. No query or fragment; the authority has no spaces or controls.
fn parse_worker_url(url: &str) -> Result<WorkerUrl, Error> {
    let bad = |reason: String| Error::Config { key: "remote-coprocessor-addr", reason };
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(bad(format!("{url:?} must start with http:// or https://")));
    };
    let scheme = if scheme.eq_ignore_ascii_case("http") {
        "http"
    } else if scheme.eq_ignore_ascii_case("https") {
        "https"
    } else {
        return Err(bad(format!("{url:?} must start with http:// or https://")));
    };
    let (authority, path) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
    let (userinfo, host) =
        authority.rfind('@').map_or(("", authority), |i| authority.split_at(i + 1));
    // `host_part` as written (IPv6 in brackets), `port_part` empty or `:port`.
    let (host_part, port_part, host_only, ip) = if host.starts_with('[') {
        let Some(close) = host.find(']') else {
            return Err(bad(format!("{url:?} has an unclosed IPv6 address")));
        };
        let (bracketed, port_part) = host.split_at(close + 1);
        let inner = bracketed.get(1..close).unwrap_or_default();
        (bracketed, port_part, inner, inner.parse::<std::net::Ipv6Addr>().ok().map(IpAddr::V6))
    } else {
        let (h, port_part) = host.find(':').map_or((host, ""), |i| host.split_at(i));
        (h, port_part, h, h.parse::<std::net::Ipv4Addr>().ok().map(IpAddr::V4))
    };
    if host_only.is_empty() {
        return Err(bad(format!("{url:?} has no host")));
    }
    if !port_part.is_empty() {
        let port = port_part.strip_prefix(':').unwrap_or(port_part);
        let digits = !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit());
        if !port_part.starts_with(':') || !digits || port.parse::<u16>().is_err() {
            return Err(bad(format!("{url:?} has a bad port {port:?}")));
        }
    }
    let visible = |s: &str| s.bytes().all(|b| b.is_ascii_graphic());
    if !visible(authority) || !visible(path) || url.contains(['?', '#']) {
        return Err(bad(format!("{url:?} is not a URL of the form http[s]://host:port/path")));
    }
    let path = if path.is_empty() || path == "/" { rcop_wire::COPROCESSOR_PATH } else { path };
    Ok(WorkerUrl {
        scheme,
        userinfo: userinfo.to_owned(),
        host: host_part.to_owned(),
        port: port_part.to_owned(),
        path: path.to_owned(),
        name: ip.is_none().then(|| host_only.to_ascii_lowercase()),
    })
}

/// `remote-coprocessor-addr`: one URL or a list of URLs (empty entries dropped).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkerAddrs(pub Vec<String>);

impl WorkerAddrs {
    /// Whether no worker is configured.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for WorkerAddrs {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0.as_slice() {
            [one] => s.serialize_str(one),
            many => many.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for WorkerAddrs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum OneOrMany {
            One(String),
            Many(Vec<String>),
        }
        let list = match OneOrMany::deserialize(d)
            .map_err(|_| de::Error::custom("expected a URL string or a list of URL strings"))?
        {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        };
        Ok(WorkerAddrs(
            list.into_iter().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_url_normalisation() {
        let one = |s: &str| parse_worker_url(s).map(|u| u.to_string());
        assert_eq!(one("http://a:19000").unwrap(), "http://a:19000/coprocessor");
        assert_eq!(one("https://a:19000/").unwrap(), "https://a:19000/coprocessor");
        assert_eq!(one("http://a:19000/custom").unwrap(), "http://a:19000/custom");
        assert!(one("ftp://a/").is_err());
        assert!(one("a:19000").is_err());
        assert!(one("not a url").is_err());
        assert!(one("http://").is_err());
        assert!(one("http://:80/").is_err());
        assert!(one("http://a:port/").is_err());
        assert!(one("http://a b/").is_err());
        assert!(one("http://a/?q").is_err());
        assert!(one("http://[::1]x/").is_err());
        assert!(one("http://a:/").is_err());
        assert!(one("http://a::80/").is_err());
        assert!(one("http://a:+80/").is_err());
        assert_eq!(one("HTTP://[::1]:19000").unwrap(), "http://[::1]:19000/coprocessor");
        assert_eq!(one("http://u:p@a:1/x").unwrap(), "http://u:p@a:1/x");
    }

    #[test]
    fn worker_url_parts_and_dns_names() {
        let url = |s: &str| parse_worker_url(s).unwrap();
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let named = url("HTTPS://Workers.Svc.Cluster.Local:19000");
        assert_eq!(named.scheme, "https");
        assert_eq!(named.dns_name(), Some("workers.svc.cluster.local"));
        assert_eq!(named.with_ip(ip("10.0.0.5")), "https://10.0.0.5:19000/coprocessor");
        assert_eq!(named.with_ip(ip("fd00::5")), "https://[fd00::5]:19000/coprocessor");
        // The user, a missing port and a custom path survive the replacement.
        let bare = url("http://u@w/custom");
        assert_eq!(bare.dns_name(), Some("w"));
        assert_eq!(bare.with_ip(ip("10.0.0.6")), "http://u@10.0.0.6/custom");
        assert_eq!(url("http://localhost:1").dns_name(), Some("localhost"));
        // IP literals are workers as they are.
        for literal in
            ["http://10.0.0.1:19000", "http://10.0.0.1", "http://[::1]:1", "http://[fd00::1]"]
        {
            assert_eq!(url(literal).dns_name(), None, "{literal}");
        }
        // Not an IPv4 address, so a name (which getaddrinfo may still read as one).
        assert_eq!(url("http://10.0.0:1").dns_name(), Some("10.0.0"));
    }

    #[test]
    fn resolve_interval_is_zero_or_at_least_a_second() {
        let with = |text: &str| Config::from_toml_str(text);
        assert_eq!(Config::default().resolve_interval(), Some(DEFAULT_RESOLVE_INTERVAL));
        let off = with("remote-coprocessor-resolve-interval = \"0s\"").unwrap();
        assert_eq!(off.resolve_interval(), None);
        let slow = with("remote-coprocessor-resolve-interval = \"1m\"").unwrap();
        assert_eq!(slow.resolve_interval(), Some(Duration::from_secs(60)));
        match with("remote-coprocessor-resolve-interval = \"500ms\"") {
            Err(Error::Config { key, .. }) => {
                assert_eq!(key, "remote-coprocessor-resolve-interval")
            }
            other => panic!("{other:?}"),
        }
    }
}
