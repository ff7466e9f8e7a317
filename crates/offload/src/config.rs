//! The storage node's offload knobs: upstream's `[kvengine]` names, kebab-case, plus the
//! client, retry and fallback knobs this crate adds.

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
    /// disables offloading. A URL without a path gets `/coprocessor`.
    pub remote_coprocessor_addr: WorkerAddrs,
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
    /// with a host, `remote-coprocessor-num-ranges` of 0, a zero request timeout or backoff
    /// base, a backoff base above the max, a zero connect timeout or response size.
    pub fn validate(&self) -> Result<(), Error> {
        self.worker_urls()?;
        let invalid =
            |key: &'static str, reason: &str| Err(Error::Config { key, reason: reason.to_owned() });
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
        self.remote_coprocessor_addr.0.iter().map(|url| parse_worker_url(url)).collect()
    }
}

/// Checks a worker URL (`http[s]://authority[/path]`) and gives an empty path
/// `/coprocessor`. No query or fragment; the authority has no spaces or controls.
fn parse_worker_url(url: &str) -> Result<String, Error> {
    let bad = |reason: String| Error::Config { key: "remote-coprocessor-addr", reason };
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(bad(format!("{url:?} must start with http:// or https://")));
    };
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Err(bad(format!("{url:?} must start with http:// or https://")));
    }
    let (authority, path) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host_only, port) = match host.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((h, after)) => (h, after.strip_prefix(':')),
            None => return Err(bad(format!("{url:?} has an unclosed IPv6 address"))),
        },
        None => match host.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (host, None),
        },
    };
    if host_only.is_empty() {
        return Err(bad(format!("{url:?} has no host")));
    }
    if let Some(port) = port
        && port.parse::<u16>().is_err()
    {
        return Err(bad(format!("{url:?} has a bad port {port:?}")));
    }
    let visible = |s: &str| s.bytes().all(|b| b.is_ascii_graphic());
    if !visible(authority) || !visible(path) || url.contains(['?', '#']) {
        return Err(bad(format!("{url:?} is not a URL of the form http[s]://host:port/path")));
    }
    let scheme = scheme.to_ascii_lowercase();
    let path = if path.is_empty() || path == "/" { rcop_wire::COPROCESSOR_PATH } else { path };
    Ok(format!("{scheme}://{authority}{path}"))
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
        let one = |s: &str| parse_worker_url(s);
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
        assert_eq!(one("HTTP://[::1]:19000").unwrap(), "http://[::1]:19000/coprocessor");
    }
}
