//! The storage node's offload knobs: upstream's `[kvengine]` names, kebab-case, plus the
//! client, retry and fallback knobs this crate adds.

use std::fmt;
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
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
/// Default `remote-coprocessor-pool-idle-timeout`: 90 s (hyper-util's own default).
pub const DEFAULT_POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(90);
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
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default, rename_all = "kebab-case")]
pub struct Config {
    /// Worker URL(s) for heavy DAG requests: one string or a list. An empty string or list
    /// disables offloading. A URL without a path gets `/coprocessor`.
    pub remote_coprocessor_addr: WorkerAddrs,
    /// Estimated block bytes at or above which a request is offloaded (default 32 MiB;
    /// `"32MiB"`, `"32000000"` or an integer).
    pub remote_coprocessor_min_blocks_size: ByteSize,
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
    pub remote_coprocessor_max_response_size: ByteSize,
    /// Largest answer assembled from a worker's pages for a non-paging request (default
    /// 1 GiB); a larger one runs locally instead.
    pub remote_coprocessor_max_whole_response_size: ByteSize,
    /// This node's status address, sent as `x-dfs-remote-cache-addr` so workers may read
    /// files from it first (default empty: header not sent).
    pub dfs_remote_cache_addr: String,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            remote_coprocessor_addr: WorkerAddrs::default(),
            remote_coprocessor_min_blocks_size: ByteSize(DEFAULT_MIN_BLOCKS_SIZE),
            remote_coprocessor_num_ranges: DEFAULT_NUM_RANGES,
            remote_coprocessor_min_process_duration: ReadableDuration(DEFAULT_MIN_PROCESS_DURATION),
            fallback_to_local: false,
            remote_coprocessor_request_timeout: ReadableDuration(DEFAULT_REQUEST_TIMEOUT),
            remote_coprocessor_backoff_base: ReadableDuration(DEFAULT_BACKOFF_BASE),
            remote_coprocessor_backoff_max: ReadableDuration(DEFAULT_BACKOFF_MAX),
            remote_coprocessor_connect_timeout: ReadableDuration(DEFAULT_CONNECT_TIMEOUT),
            remote_coprocessor_pool_idle_timeout: ReadableDuration(DEFAULT_POOL_IDLE_TIMEOUT),
            remote_coprocessor_pool_max_idle_per_host: DEFAULT_POOL_MAX_IDLE_PER_HOST,
            remote_coprocessor_max_response_size: ByteSize(DEFAULT_MAX_RESPONSE_SIZE),
            remote_coprocessor_max_whole_response_size: ByteSize(DEFAULT_MAX_WHOLE_RESPONSE_SIZE),
            dfs_remote_cache_addr: String::new(),
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

/// Parses `digits[.digits]` exactly: `(mantissa, digits after the point)`, at most 20
/// digits in all so that scaling by a unit cannot overflow a `u128`.
fn parse_decimal(num: &str) -> Option<(u128, u32)> {
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    let digits = int.len() + frac.len();
    if digits == 0 || digits > 20 || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut mantissa = 0u128;
    for b in int.bytes().chain(frac.bytes()) {
        mantissa = mantissa * 10 + u128::from(b - b'0');
    }
    Some((mantissa, u32::try_from(frac.len()).ok()?))
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

/// A byte size: an integer, or a string such as `"32MiB"`, `"32000000"`, `"1.5GB"`.
///
/// Units (case-insensitive) are binary as in TiKV's `ReadableSize`: `B`, `K`/`KB`/`KiB`,
/// `M`/`MB`/`MiB`, `G`/`GB`/`GiB`, `T`/`TB`/`TiB`, `P`/`PB`/`PiB`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ByteSize(pub u64);

impl ByteSize {
    /// The size in bytes.
    pub const fn as_u64(self) -> u64 {
        self.0
    }

    /// Parses `"32MiB"`, `"32000000"`, `"1.5 GB"`.
    ///
    /// # Errors
    ///
    /// A message naming the text for an empty number, an unknown unit or an overflow.
    pub fn parse(text: &str) -> Result<ByteSize, String> {
        let t = text.trim();
        let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let shift = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 0,
            "k" | "kb" | "kib" => 10,
            "m" | "mb" | "mib" => 20,
            "g" | "gb" | "gib" => 30,
            "t" | "tb" | "tib" => 40,
            "p" | "pb" | "pib" => 50,
            other => return Err(format!("invalid size {text:?}: unknown unit {other:?}")),
        };
        let (mantissa, scale) = parse_decimal(num)
            .ok_or_else(|| format!("invalid size {text:?}: bad number {num:?}"))?;
        // < 10^20 × 2^50 < 2^117: no overflow; truncates fractions of a byte.
        let bytes = (mantissa << shift) / 10u128.pow(scale);
        let bytes =
            u64::try_from(bytes).map_err(|_| format!("invalid size {text:?}: too large"))?;
        Ok(ByteSize(bytes))
    }
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [(&str, u32); 5] =
            [("PiB", 50), ("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)];
        for (name, shift) in UNITS {
            let unit = 1u64 << shift;
            if self.0 != 0 && self.0.is_multiple_of(unit) {
                return write!(f, "{}{name}", self.0 / unit);
            }
        }
        write!(f, "{}B", self.0)
    }
}

impl Serialize for ByteSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = ByteSize;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a byte size such as 33554432 or \"32MiB\"")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ByteSize, E> {
                Ok(ByteSize(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ByteSize, E> {
                u64::try_from(v)
                    .map(ByteSize)
                    .map_err(|_| E::custom(format!("invalid size {v}: must not be negative")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ByteSize, E> {
                ByteSize::parse(v).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// A duration written as `"30ms"`, `"1s"`, `"1m30s"`, `"1.5s"`, `"2h"`, `"1d"`.
///
/// Units: `us`/`µs`, `ms`, `s`, `m`, `h`, `d`; segments add up. A bare number is rejected
/// (its unit would be a guess).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReadableDuration(pub Duration);

impl ReadableDuration {
    /// The duration.
    pub const fn as_duration(self) -> Duration {
        self.0
    }

    /// Whether the duration is zero.
    pub const fn is_zero(self) -> bool {
        self.0.is_zero()
    }

    /// Parses `"30ms"`, `"1m30s"`, `"1.5s"`.
    ///
    /// # Errors
    ///
    /// A message naming the text for a missing number or unit, an unknown unit or an
    /// overflow.
    pub fn parse(text: &str) -> Result<ReadableDuration, String> {
        let t = text.trim();
        if t.is_empty() {
            return Err("invalid duration \"\": empty".to_owned());
        }
        let mut rest = t;
        let mut total = Duration::ZERO;
        while !rest.is_empty() {
            let num_end =
                rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
            let (num, after) = rest.split_at(num_end);
            if num.is_empty() {
                return Err(format!("invalid duration {text:?}: expected a number at {rest:?}"));
            }
            let unit_end = after.find(|c: char| c.is_ascii_digit()).unwrap_or(after.len());
            let (unit, next) = after.split_at(unit_end);
            let nanos_per_unit: u128 = match unit.trim() {
                "us" | "µs" => 1_000,
                "ms" => 1_000_000,
                "s" => 1_000_000_000,
                "m" => 60_000_000_000,
                "h" => 3_600_000_000_000,
                "d" => 86_400_000_000_000,
                "" => {
                    return Err(format!(
                        "invalid duration {text:?}: missing unit (ms, s, m, h, d)"
                    ));
                }
                other => {
                    return Err(format!("invalid duration {text:?}: unknown unit {other:?}"));
                }
            };
            let (mantissa, scale) = parse_decimal(num)
                .ok_or_else(|| format!("invalid duration {text:?}: bad number {num:?}"))?;
            // < 10^20 × 8.64·10^13 < 2^113: no overflow; truncates below a nanosecond.
            let nanos = mantissa * nanos_per_unit / 10u128.pow(scale);
            let secs = u64::try_from(nanos / 1_000_000_000)
                .map_err(|_| format!("invalid duration {text:?}: too large"))?;
            let segment = Duration::new(secs, (nanos % 1_000_000_000) as u32);
            total = total
                .checked_add(segment)
                .ok_or_else(|| format!("invalid duration {text:?}: too large"))?;
            rest = next;
        }
        Ok(ReadableDuration(total))
    }
}

impl fmt::Display for ReadableDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        if d.subsec_nanos() == 0 {
            write!(f, "{}s", d.as_secs())
        } else if d.subsec_nanos().is_multiple_of(1_000_000) {
            write!(f, "{}ms", d.as_millis())
        } else {
            write!(f, "{}us", d.as_micros())
        }
    }
}

impl Serialize for ReadableDuration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ReadableDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = ReadableDuration;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a duration such as \"30ms\" or \"1s\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ReadableDuration, E> {
                ReadableDuration::parse(v).map_err(E::custom)
            }
        }
        d.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(ByteSize::parse("32MiB"), Ok(ByteSize(32 << 20)));
        assert_eq!(ByteSize::parse("32MB"), Ok(ByteSize(32 << 20)));
        assert_eq!(ByteSize::parse("32000000"), Ok(ByteSize(32_000_000)));
        assert_eq!(ByteSize::parse("1.5 GiB"), Ok(ByteSize(3 << 29)));
        assert_eq!(ByteSize::parse("7b"), Ok(ByteSize(7)));
        assert!(ByteSize::parse("").is_err());
        assert!(ByteSize::parse("MiB").is_err());
        assert!(ByteSize::parse("32XB").unwrap_err().contains("unknown unit"));
        assert!(ByteSize::parse("99999999999PiB").unwrap_err().contains("too large"));
        assert!(ByteSize::parse("1e30").is_err());
        assert_eq!(ByteSize(32 << 20).to_string(), "32MiB");
        assert_eq!(ByteSize(32_000_000).to_string(), "31250KiB");
        assert_eq!(ByteSize(7).to_string(), "7B");
    }

    #[test]
    fn durations() {
        let ms = |n| Ok(ReadableDuration(Duration::from_millis(n)));
        assert_eq!(ReadableDuration::parse("30ms"), ms(30));
        assert_eq!(ReadableDuration::parse("1s"), ms(1000));
        assert_eq!(ReadableDuration::parse("1.5s"), ms(1500));
        assert_eq!(ReadableDuration::parse("1m30s"), ms(90_000));
        assert_eq!(ReadableDuration::parse("1h"), ms(3_600_000));
        assert_eq!(
            ReadableDuration::parse("250us"),
            Ok(ReadableDuration(Duration::from_micros(250)))
        );
        assert!(ReadableDuration::parse("30").unwrap_err().contains("missing unit"));
        assert!(ReadableDuration::parse("30 parsecs").unwrap_err().contains("unknown unit"));
        assert!(ReadableDuration::parse("").is_err());
        assert!(ReadableDuration::parse("ms").is_err());
        assert_eq!(ReadableDuration(Duration::from_millis(30)).to_string(), "30ms");
        assert_eq!(ReadableDuration(Duration::from_secs(20)).to_string(), "20s");
    }

    proptest::proptest! {
        #[test]
        fn size_display_parses_back(bytes in proptest::prelude::any::<u64>()) {
            let size = ByteSize(bytes);
            proptest::prop_assert_eq!(ByteSize::parse(&size.to_string()), Ok(size));
        }

        #[test]
        fn duration_display_parses_back(secs in 0u64..1 << 40, nanos in 0u32..1_000_000_000) {
            // Display keeps microseconds; drop what it cannot show.
            let d = ReadableDuration(Duration::new(secs, nanos / 1_000 * 1_000));
            proptest::prop_assert_eq!(ReadableDuration::parse(&d.to_string()), Ok(d));
        }

        #[test]
        fn parsers_never_panic(text in "\\PC{0,24}") {
            let _ = ByteSize::parse(&text);
            let _ = ReadableDuration::parse(&text);
        }
    }

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
