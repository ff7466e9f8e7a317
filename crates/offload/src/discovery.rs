//! Worker discovery: a worker URL whose host is a DNS name (a Kubernetes headless service)
//! stands for every address the name resolves to, re-resolved every
//! `remote-coprocessor-resolve-interval`.
//!
//! [`Targets`] is the pure part: the configured URLs and the last good answer per name, and
//! the worker set they expand to (`https://name:port/path` → `https://10.0.0.5:port/path`
//! for each address, deduplicated, each name's addresses sorted). The rendezvous hash runs
//! on these address URLs, so a shard stays on its pod while the pod is in the answer, and
//! only the shards of a pod that joins or leaves move. An address from an `https://` name
//! keeps the name as its TLS server name ([`Post::server_name`](crate::Post)), so the
//! worker's certificate is still checked against the name the operator wrote.
//!
//! With feature `http-client`, [`Discovery`] runs the rounds on a Tokio task: resolve every
//! name through a [`Resolver`] (by default [`SystemResolver`], the system's `getaddrinfo`),
//! keep the last good addresses of a name whose answer failed or was empty, swap the
//! client's settings (requests in flight keep the snapshot they started with), sleep until
//! the interval passes or a config update wakes it. The task stops when the client drops.

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;
#[cfg(feature = "http-client")]
use std::{fmt, io};

use crate::config::{Config, WorkerUrl};
use crate::error::Error;
#[cfg(feature = "http-client")]
use crate::transport::BoxFuture;

/// Resolves a worker's DNS name to its addresses, for worker discovery.
///
/// The default is [`SystemResolver`] (the system's `getaddrinfo`, feature `http-client`); a
/// host with its own service registry, or a test, implements this instead and gives it to
/// [`Builder::resolver`](crate::Builder::resolver).
#[cfg(feature = "http-client")]
pub trait Resolver: Send + Sync + fmt::Debug {
    /// Every address of `name` (a DNS name, lower case, never an IP literal). An error or
    /// an empty list keeps the name's previous addresses.
    fn resolve<'a>(&'a self, name: &'a str) -> BoxFuture<'a, io::Result<Vec<IpAddr>>>;
}

/// The system resolver: `tokio::net::lookup_host`, which runs `getaddrinfo` on Tokio's
/// blocking pool (so `/etc/hosts`, `resolv.conf` search domains and `ndots` apply as for any
/// program on the host).
#[cfg(feature = "http-client")]
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemResolver;

#[cfg(feature = "http-client")]
impl Resolver for SystemResolver {
    fn resolve<'a>(&'a self, name: &'a str) -> BoxFuture<'a, io::Result<Vec<IpAddr>>> {
        Box::pin(async move {
            let addrs = tokio::net::lookup_host((name, 0)).await?;
            Ok(addrs.map(|a| a.ip()).collect())
        })
    }
}

/// The worker set of one moment: URLs and, where it differs from the URL's host, the TLS
/// server name to verify the worker's certificate against.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct WorkerSet {
    pub(crate) urls: Arc<[Arc<str>]>,
    pub(crate) server_names: Arc<[Option<Arc<str>>]>,
}

/// What the worker set is made of: the configured URLs and the last good addresses of each
/// DNS name among them.
#[derive(Clone, Debug)]
pub(crate) struct Targets {
    urls: Vec<WorkerUrl>,
    /// `None`: discovery is off in the configuration (`"0s"`).
    interval: Option<Duration>,
    /// Whether the client resolves names (a [`Resolver`] is attached).
    enabled: bool,
    /// The last good answer per name (lower case), sorted and deduplicated.
    resolved: HashMap<String, Arc<[IpAddr]>>,
    /// Rounds begun; the number of the last round applied. A round that finishes after a
    /// later one has been applied is stale and dropped.
    begun: u64,
    applied: u64,
}

impl Targets {
    /// The targets of `config`, nothing resolved yet.
    pub(crate) fn new(config: &Config) -> Result<Targets, Error> {
        Ok(Targets {
            urls: config.parsed_worker_urls()?,
            interval: config.resolve_interval(),
            enabled: false,
            resolved: HashMap::new(),
            begun: 0,
            applied: 0,
        })
    }

    /// These targets under a new configuration: the answers of names still configured are
    /// kept, so an update moves no shard that discovery placed.
    pub(crate) fn reconfigured(&self, config: &Config) -> Result<Targets, Error> {
        let mut next = Targets::new(config)?;
        next.enabled = self.enabled;
        next.begun = self.begun;
        next.applied = self.applied;
        if next.discovering() {
            let names = next.names();
            next.resolved = self
                .resolved
                .iter()
                .filter(|(name, _)| names.binary_search(name).is_ok())
                .map(|(name, ips)| (name.clone(), ips.clone()))
                .collect();
        }
        Ok(next)
    }

    /// Attaches or detaches a resolver.
    #[cfg(feature = "http-client")]
    pub(crate) fn set_enabled(&mut self, enabled: bool) {
        self.enabled = enabled;
        if !enabled {
            self.resolved.clear();
        }
    }

    fn discovering(&self) -> bool {
        self.enabled && self.interval.is_some()
    }

    /// The pause between rounds; `None` when there is nothing to resolve.
    #[cfg(feature = "http-client")]
    pub(crate) fn interval(&self) -> Option<Duration> {
        if self.discovering() && self.urls.iter().any(|u| u.dns_name().is_some()) {
            self.interval
        } else {
            None
        }
    }

    /// The DNS names to resolve, sorted, each once; none when discovery is off.
    pub(crate) fn names(&self) -> Vec<String> {
        if !self.discovering() {
            return Vec::new();
        }
        let mut names: Vec<String> =
            self.urls.iter().filter_map(|u| u.dns_name()).map(str::to_owned).collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// Starts a round: its number and the names to resolve (`None` when there are none).
    #[cfg(feature = "http-client")]
    pub(crate) fn begin_round(&mut self) -> Option<(u64, Vec<String>)> {
        let names = self.names();
        if names.is_empty() {
            return None;
        }
        self.begun += 1;
        Some((self.begun, names))
    }

    /// Whether round `round`'s answers may be applied (no later round was), marking it
    /// applied.
    #[cfg(feature = "http-client")]
    pub(crate) fn finish_round(&mut self, round: u64) -> bool {
        if round <= self.applied {
            return false;
        }
        self.applied = round;
        true
    }

    /// Records a good answer for `name`: whether the name is still configured (an update
    /// may have removed it while it was being resolved).
    #[cfg(feature = "http-client")]
    pub(crate) fn record(&mut self, name: &str, mut ips: Vec<IpAddr>) -> bool {
        if !self.discovering() || !self.urls.iter().any(|u| u.dns_name() == Some(name)) {
            return false;
        }
        ips.sort_unstable();
        ips.dedup();
        self.resolved.insert(name.to_owned(), ips.into());
        true
    }

    /// The worker set: each configured URL in order, a resolved name's URL replaced by one
    /// URL per address (sorted); a URL that occurs twice is kept once, at its first place.
    /// A name not resolved yet (or with discovery off) stays as it is: the HTTP client
    /// resolves it when it connects.
    pub(crate) fn workers(&self) -> WorkerSet {
        let mut seen = HashSet::new();
        let mut urls: Vec<Arc<str>> = Vec::new();
        let mut server_names = Vec::new();
        let mut push = |url: String, server_name: Option<Arc<str>>| {
            if seen.insert(url.clone()) {
                urls.push(url.into());
                server_names.push(server_name);
            }
        };
        for url in &self.urls {
            let resolved = match url.dns_name() {
                Some(name) if self.discovering() => self.resolved.get(name).map(|ips| (name, ips)),
                _ => None,
            };
            match resolved {
                Some((name, ips)) => {
                    // Over TLS the certificate names the service, not the pod's address.
                    let server_name: Option<Arc<str>> =
                        (url.scheme == "https").then(|| Arc::from(name));
                    for &ip in ips.iter() {
                        push(url.with_ip(ip), server_name.clone());
                    }
                }
                None => push(url.to_string(), None),
            }
        }
        WorkerSet { urls: urls.into(), server_names: server_names.into() }
    }
}

/// Why a name's answer was not used; the `reason` label of
/// `rcop_offload_worker_resolve_errors_total`.
#[cfg(feature = "http-client")]
#[derive(Debug)]
pub(crate) enum Failure {
    /// The resolver failed.
    Error(io::Error),
    /// No answer within [`RESOLVE_TIMEOUT`].
    Timeout,
    /// The name has no addresses (a headless service without ready pods).
    Empty,
}

#[cfg(feature = "http-client")]
impl Failure {
    pub(crate) fn reason(&self) -> &'static str {
        match self {
            Failure::Error(_) => "error",
            Failure::Timeout => "timeout",
            Failure::Empty => "empty",
        }
    }

    pub(crate) fn into_error(self, name: &str) -> Error {
        let source = match self {
            Failure::Error(e) => e,
            Failure::Timeout => io::Error::new(io::ErrorKind::TimedOut, "no answer in time"),
            Failure::Empty => io::Error::new(io::ErrorKind::NotFound, "no addresses"),
        };
        Error::Resolve { name: name.to_owned(), source }
    }
}

/// How long one name may take to resolve: glibc's resolver gives up on a server after 5 s
/// per attempt, and a round should not wait on one name much longer than that.
#[cfg(feature = "http-client")]
pub(crate) const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

#[cfg(feature = "http-client")]
pub(crate) use self::task::Discovery;

#[cfg(feature = "http-client")]
mod task {
    use std::sync::{Arc, Mutex, Weak};

    use tokio::runtime::Handle;
    use tokio::sync::Notify;
    use tokio::task::AbortHandle;

    use super::{Failure, RESOLVE_TIMEOUT, Resolver};
    use crate::client::Shared;
    use crate::error::Error;

    /// The discovery of one client: its resolver and the task that re-resolves, started
    /// when the configuration first names a DNS name and aborted when this drops.
    #[derive(Debug)]
    pub(crate) struct Discovery {
        resolver: Arc<dyn Resolver>,
        runtime: Option<Handle>,
        wake: Arc<Notify>,
        task: Mutex<Option<AbortHandle>>,
    }

    impl Discovery {
        pub(crate) fn new(resolver: Arc<dyn Resolver>, runtime: Option<Handle>) -> Discovery {
            Discovery { resolver, runtime, wake: Arc::new(Notify::new()), task: Mutex::new(None) }
        }

        fn task(&self) -> std::sync::MutexGuard<'_, Option<AbortHandle>> {
            self.task.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
        }

        /// Starts the task unless it runs.
        ///
        /// # Errors
        ///
        /// [`Error::NoRuntime`] when there is no runtime to run it on.
        pub(crate) fn ensure_started(&self, shared: &Arc<Shared>) -> Result<(), Error> {
            let mut task = self.task();
            if task.is_some() {
                return Ok(());
            }
            let Some(runtime) = &self.runtime else { return Err(Error::NoRuntime) };
            let run = run(Arc::downgrade(shared), self.resolver.clone(), self.wake.clone());
            *task = Some(runtime.spawn(run).abort_handle());
            Ok(())
        }

        /// Makes the task start a round now (after a config update).
        pub(crate) fn wake(&self) {
            self.wake.notify_one();
        }

        /// One round now, on the caller's task.
        pub(crate) async fn resolve_now(&self, shared: &Shared) -> Result<(), Error> {
            round(shared, &*self.resolver).await
        }
    }

    impl Drop for Discovery {
        fn drop(&mut self) {
            if let Some(task) = self.task().take() {
                task.abort();
            }
        }
    }

    /// Rounds until the client is gone: resolve, then wait for the interval or a wake-up.
    async fn run(shared: Weak<Shared>, resolver: Arc<dyn Resolver>, wake: Arc<Notify>) {
        loop {
            let interval = {
                let Some(shared) = shared.upgrade() else { return };
                // Failures are counted and logged by the round; the last good set stays.
                let _ = round(&shared, &*resolver).await;
                shared.resolve_interval()
            };
            match interval {
                Some(interval) => {
                    let _ = tokio::time::timeout(interval, wake.notified()).await;
                }
                None => wake.notified().await,
            }
        }
    }

    /// Resolves every configured name and applies the answers.
    async fn round(shared: &Shared, resolver: &dyn Resolver) -> Result<(), Error> {
        let Some((round, names)) = shared.begin_round() else { return Ok(()) };
        let mut answers = Vec::with_capacity(names.len());
        for name in names {
            let answer = match tokio::time::timeout(RESOLVE_TIMEOUT, resolver.resolve(&name)).await
            {
                Ok(Ok(ips)) if ips.is_empty() => Err(Failure::Empty),
                Ok(Ok(ips)) => Ok(ips),
                Ok(Err(e)) => Err(Failure::Error(e)),
                Err(_) => Err(Failure::Timeout),
            };
            answers.push((name, answer));
        }
        shared.apply_round(round, answers)
    }
}

#[cfg(all(test, feature = "http-client"))]
#[expect(clippy::unwrap_used, reason = "test helpers unwrap known-good configurations")]
mod tests {
    use super::*;

    fn targets(urls: &[&str], extra: &str) -> Targets {
        let list: Vec<String> = urls.iter().map(|u| format!("{u:?}")).collect();
        let config = Config::from_toml_str(&format!(
            "remote-coprocessor-addr = [{}]\n{extra}",
            list.join(", ")
        ))
        .unwrap();
        let mut t = Targets::new(&config).unwrap();
        t.set_enabled(true);
        t
    }

    fn ips(list: &[&str]) -> Vec<IpAddr> {
        list.iter().map(|s| s.parse().unwrap()).collect()
    }

    fn urls(set: &WorkerSet) -> Vec<&str> {
        set.urls.iter().map(|u| &**u).collect()
    }

    #[test]
    fn names_expand_to_sorted_unique_addresses_in_config_order() {
        let mut t = targets(
            &["http://10.0.0.9:19000", "http://Workers.NS:19000/cop", "http://10.0.0.2:19000/cop"],
            "",
        );
        assert_eq!(t.names(), ["workers.ns"]);
        // Before the first answer the name is a worker as it is.
        assert_eq!(
            urls(&t.workers()),
            [
                "http://10.0.0.9:19000/coprocessor",
                "http://Workers.NS:19000/cop",
                "http://10.0.0.2:19000/cop"
            ]
        );
        // Unsorted, with a duplicate, and one address also configured as a literal.
        assert!(t.record("workers.ns", ips(&["10.0.0.3", "10.0.0.2", "10.0.0.3", "fd00::1"])));
        let set = t.workers();
        assert_eq!(
            urls(&set),
            [
                "http://10.0.0.9:19000/coprocessor",
                "http://10.0.0.2:19000/cop",
                "http://10.0.0.3:19000/cop",
                "http://[fd00::1]:19000/cop",
            ]
        );
        assert_eq!(&*set.server_names, [None, None, None, None], "plain HTTP needs no name");
        // A name nobody configured is not recorded.
        assert!(!t.record("other.ns", ips(&["10.0.0.7"])));
        assert_eq!(t.workers(), set);
    }

    #[test]
    fn https_addresses_keep_the_name_for_tls() {
        let mut t = targets(&["https://w.svc:443", "https://10.0.0.1:443"], "");
        assert!(t.record("w.svc", ips(&["10.0.0.6", "10.0.0.5"])));
        let set = t.workers();
        assert_eq!(
            urls(&set),
            [
                "https://10.0.0.5:443/coprocessor",
                "https://10.0.0.6:443/coprocessor",
                "https://10.0.0.1:443/coprocessor"
            ]
        );
        let names: Vec<Option<&str>> = set.server_names.iter().map(|n| n.as_deref()).collect();
        assert_eq!(names, [Some("w.svc"), Some("w.svc"), None]);
    }

    #[test]
    fn a_name_shared_by_urls_is_resolved_once() {
        let t = targets(&["http://w.svc:1", "https://W.svc:2", "http://x.svc:1"], "");
        assert_eq!(t.names(), ["w.svc", "x.svc"]);
    }

    #[test]
    fn discovery_off_or_detached_keeps_names_as_they_are() {
        let mut off = targets(&["http://w.svc:1"], "remote-coprocessor-resolve-interval = \"0s\"");
        assert!(off.names().is_empty());
        assert_eq!(off.interval(), None);
        assert!(off.begin_round().is_none());
        assert!(!off.record("w.svc", ips(&["10.0.0.1"])));
        assert_eq!(urls(&off.workers()), ["http://w.svc:1/coprocessor"]);

        let mut on = targets(&["http://w.svc:1"], "");
        assert_eq!(on.interval(), Some(crate::config::DEFAULT_RESOLVE_INTERVAL));
        assert!(on.record("w.svc", ips(&["10.0.0.1"])));
        on.set_enabled(false);
        assert_eq!(urls(&on.workers()), ["http://w.svc:1/coprocessor"]);
        assert_eq!(on.interval(), None);

        // IP literals only: nothing to resolve, no task needed.
        let literal = targets(&["http://10.0.0.1:1"], "");
        assert_eq!(literal.interval(), None);
    }

    #[test]
    fn reconfiguring_keeps_the_answers_of_names_still_configured() {
        let mut t = targets(&["http://a.svc:1", "http://b.svc:1"], "");
        assert!(t.record("a.svc", ips(&["10.0.0.1", "10.0.0.2"])));
        assert!(t.record("b.svc", ips(&["10.0.1.1"])));
        let config = Config::from_toml_str(
            "remote-coprocessor-addr = [\"http://a.svc:1\", \"http://c.svc:2\"]\n\
             remote-coprocessor-backoff-base = \"2s\"",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let next = t.reconfigured(&config).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            urls(&next.workers()),
            [
                "http://10.0.0.1:1/coprocessor",
                "http://10.0.0.2:1/coprocessor",
                "http://c.svc:2/coprocessor"
            ]
        );
        assert_eq!(next.names(), ["a.svc", "c.svc"]);
        assert!(!next.resolved.contains_key("b.svc"), "a removed name's answer is dropped");
    }

    #[test]
    fn a_stale_round_is_not_applied() {
        let mut t = targets(&["http://a.svc:1"], "");
        let (first, names) = t.begin_round().unwrap_or_else(|| panic!("a round"));
        assert_eq!(names, ["a.svc"]);
        let (second, _) = t.begin_round().unwrap_or_else(|| panic!("a round"));
        assert!(t.finish_round(second));
        assert!(!t.finish_round(first), "the older round finished last");
    }
}
