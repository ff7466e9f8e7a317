//! The worker's half of the first way (delegate): `[delegate]` configuration and how a
//! region's storage node is found ([`StoreResolver`]).
//!
//! TiDB sends its `coprocessor.Request` to the worker's `cop-addr`; the worker looks up the
//! store of `context.peer.store_id`, asks it for a delegate (feature `grpc`), rebuilds the
//! snapshot and executes. Two resolvers: [`StaticResolver`] from `[delegate] stores`, and a
//! PD client (`pdpb.PD/GetStore`, feature `pd`) when `pd-endpoints` is set. Both are
//! cached; the caller invalidates an entry when the store cannot be reached or answers
//! `store_not_match`.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;

use rcop_limiter::{ReadableDuration, ReadableSize};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Default `[delegate] max-response-size`: 1 GiB (as `max-request-size` for the HTTP body).
pub const DEFAULT_DELEGATE_MAX_RESPONSE_SIZE: u64 = 1 << 30;

/// `[delegate]`: how the worker finds and calls storage nodes on the delegate path.
///
/// ```toml
/// cop-addr = "0.0.0.0:9500"
///
/// [delegate]
/// # store id -> the store's gRPC address (`tikvpb.Tikv`)
/// stores = { "1" = "127.0.0.1:20170", "2" = "10.0.0.2:20160" }
/// # or: look stores up in PD (feature `pd`); takes precedence over `stores`
/// pd-endpoints = ["127.0.0.1:2379"]
/// max-response-size = "1GiB"
/// connect-timeout = "3s"
/// backoff-base = "20ms"
/// backoff-max = "1s"
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
#[non_exhaustive]
pub struct DelegateConfig {
    /// Store id (decimal, as a TOML key) → address (`host:port` or `http://host:port`).
    pub stores: BTreeMap<String, String>,
    /// PD endpoints; when set, stores are looked up in PD instead of `stores`.
    pub pd_endpoints: Vec<String>,
    /// Largest `DelegateResponse` accepted from a storage node.
    pub max_response_size: ReadableSize,
    /// Connecting to a storage node or PD gives up after this.
    pub connect_timeout: ReadableDuration,
    /// First backoff step of a retried delegate (equal jitter, doubling).
    pub backoff_base: ReadableDuration,
    /// Largest backoff step.
    pub backoff_max: ReadableDuration,
}

impl Default for DelegateConfig {
    fn default() -> Self {
        DelegateConfig {
            stores: BTreeMap::new(),
            pd_endpoints: Vec::new(),
            max_response_size: ReadableSize(DEFAULT_DELEGATE_MAX_RESPONSE_SIZE),
            connect_timeout: ReadableDuration::secs(3),
            backoff_base: ReadableDuration::millis(20),
            backoff_max: ReadableDuration::secs(1),
        }
    }
}

impl DelegateConfig {
    /// Checks every value; the error names the offending key.
    ///
    /// # Errors
    ///
    /// [`Error::Config`].
    pub fn validate(&self) -> Result<()> {
        self.static_stores()?;
        if self.max_response_size.0 == 0 {
            return Err(Error::config("delegate.max-response-size", "must be greater than 0"));
        }
        if self.backoff_base.0.is_zero() || self.backoff_max.0 < self.backoff_base.0 {
            return Err(Error::config(
                "delegate.backoff-base",
                "must be greater than 0 and at most backoff-max",
            ));
        }
        if self.pd_endpoints.iter().any(|e| e.trim().is_empty()) {
            return Err(Error::config("delegate.pd-endpoints", "an endpoint is empty"));
        }
        Ok(())
    }

    /// `stores` with parsed ids and `http://` addresses.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for a key that is not a store id or an empty address.
    pub fn static_stores(&self) -> Result<BTreeMap<u64, String>> {
        self.stores
            .iter()
            .map(|(id, addr)| {
                let id: u64 = id.trim().parse().map_err(|_| {
                    Error::config("delegate.stores", format!("{id:?} is not a store id"))
                })?;
                if addr.trim().is_empty() {
                    return Err(Error::config(
                        "delegate.stores",
                        format!("store {id}: no address"),
                    ));
                }
                Ok((id, endpoint_uri(addr)))
            })
            .collect()
    }
}

/// `host:port` → `http://host:port`; an address with a scheme is kept.
pub fn endpoint_uri(addr: &str) -> String {
    let addr = addr.trim();
    if addr.contains("://") { addr.to_owned() } else { format!("http://{addr}") }
}

/// A boxed future of a resolver.
pub type ResolveFuture<'a> =
    Pin<Box<dyn Future<Output = Result<String, ResolveError>> + Send + 'a>>;

/// Why a store could not be resolved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// The resolver does not know the store (static map without it, PD without it).
    #[error("store {0} is unknown")]
    UnknownStore(u64),
    /// The store is a tombstone or has no address.
    #[error("store {store_id} is not serving: {reason}")]
    NotServing {
        /// The store.
        store_id: u64,
        /// Why.
        reason: String,
    },
    /// The directory (PD) could not be reached or answered an error; worth a retry.
    #[error("store lookup failed: {0}")]
    Unavailable(String),
}

impl ResolveError {
    /// Whether asking again later may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, ResolveError::Unavailable(_))
    }
}

/// Finds the gRPC address of a store (`context.peer.store_id`).
///
/// Implementations cache; [`invalidate`](Self::invalidate) drops a cached entry after the
/// address failed (connection refused, `store_not_match`), so the next call looks again.
pub trait StoreResolver: Send + Sync + fmt::Debug {
    /// The store's address as an `http://host:port` URI.
    fn resolve(&self, store_id: u64) -> ResolveFuture<'_>;

    /// Forgets what is cached for `store_id`.
    fn invalidate(&self, store_id: u64);
}

/// Stores from `[delegate] stores`: nothing to look up, nothing to invalidate.
#[derive(Debug, Clone, Default)]
pub struct StaticResolver {
    stores: BTreeMap<u64, String>,
}

impl StaticResolver {
    /// A resolver over `store id → address` (addresses as in `[delegate] stores`).
    pub fn new(stores: impl IntoIterator<Item = (u64, String)>) -> Self {
        StaticResolver {
            stores: stores.into_iter().map(|(id, a)| (id, endpoint_uri(&a))).collect(),
        }
    }

    /// The resolver of a `[delegate]` section.
    ///
    /// # Errors
    ///
    /// As [`DelegateConfig::static_stores`].
    pub fn from_config(config: &DelegateConfig) -> Result<Self> {
        Ok(StaticResolver { stores: config.static_stores()? })
    }
}

impl StoreResolver for StaticResolver {
    fn resolve(&self, store_id: u64) -> ResolveFuture<'_> {
        let found = self.stores.get(&store_id).cloned();
        Box::pin(async move { found.ok_or(ResolveError::UnknownStore(store_id)) })
    }

    fn invalidate(&self, _store_id: u64) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WorkerConfig;

    #[test]
    fn section_parses_and_validates() {
        let cfg = WorkerConfig::from_toml(
            r#"
            cop-addr = "127.0.0.1:9500"
            [delegate]
            stores = { "1" = "127.0.0.1:20170", "7" = "http://node-7:20160" }
            backoff-base = "5ms"
            backoff-max = "200ms"
            "#,
        )
        .unwrap();
        assert_eq!(cfg.cop_addr().unwrap(), Some("127.0.0.1:9500".parse().unwrap()));
        let stores = cfg.delegate.static_stores().unwrap();
        assert_eq!(stores[&1], "http://127.0.0.1:20170");
        assert_eq!(stores[&7], "http://node-7:20160");
        // Off by default.
        assert_eq!(WorkerConfig::default().cop_addr().unwrap(), None);
        for bad in [
            "cop-addr = \"nowhere\"",
            "[delegate]\nstores = { \"x\" = \"a:1\" }",
            "[delegate]\nstores = { \"1\" = \"\" }",
            "[delegate]\nbackoff-base = \"2s\"\nbackoff-max = \"1s\"",
            "[delegate]\nmax-response-size = 0",
            "[delegate]\nunknown = 1",
        ] {
            assert!(WorkerConfig::from_toml(bad).is_err(), "{bad}");
        }
    }

    #[tokio::test]
    async fn static_resolution() {
        let r = StaticResolver::new([(3, "127.0.0.1:1".to_owned())]);
        assert_eq!(r.resolve(3).await.unwrap(), "http://127.0.0.1:1");
        let missing = r.resolve(4).await.unwrap_err();
        assert!(matches!(missing, ResolveError::UnknownStore(4)) && !missing.is_retryable());
        r.invalidate(3);
        assert!(r.resolve(3).await.is_ok());
    }
}
