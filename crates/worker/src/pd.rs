//! [`PdResolver`] (feature `pd`): store addresses from PD's `pdpb.PD/GetStore`, as
//! upstream's worker looks up `context.peer.store_id`, but cached until invalidated (upstream
//! caches forever).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rcop_proto::metapb::StoreState;
use rcop_proto::pdpb::pd_client::PdClient;
use rcop_proto::pdpb::{ErrorType, GetStoreRequest, RequestHeader};
use tonic::transport::{Channel, Endpoint};

use crate::delegate::{ResolveError, ResolveFuture, StoreResolver, endpoint_uri};
use crate::error::{Error, Result};

/// Looks stores up in PD; one lazily connected channel per endpoint, tried in order.
///
/// The request header's `cluster_id` starts at 0 and is learned from PD's first response
/// header (PD answers a mismatching id with an error header that carries its own), so no
/// configuration names it.
#[derive(Debug)]
pub struct PdResolver {
    endpoints: Vec<(String, Channel)>,
    cluster_id: AtomicU64,
    cache: Mutex<HashMap<u64, String>>,
}

impl PdResolver {
    /// A resolver over PD `endpoints` (`host:port` or `http://host:port`).
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for no endpoint or a malformed one.
    pub fn new(endpoints: &[String], connect_timeout: Duration) -> Result<Self> {
        if endpoints.is_empty() {
            return Err(Error::config("delegate.pd-endpoints", "no endpoint"));
        }
        let endpoints = endpoints
            .iter()
            .map(|e| {
                let uri = endpoint_uri(e);
                let channel = Endpoint::from_shared(uri.clone())
                    .map_err(|err| {
                        Error::config("delegate.pd-endpoints", format!("{uri:?}: {err}"))
                    })?
                    .connect_timeout(connect_timeout)
                    .tcp_nodelay(true)
                    .connect_lazy();
                Ok((uri, channel))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(PdResolver {
            endpoints,
            cluster_id: AtomicU64::new(0),
            cache: Mutex::new(HashMap::new()),
        })
    }

    fn cached(&self, store_id: u64) -> Option<String> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner).get(&store_id).cloned()
    }

    async fn lookup(&self, store_id: u64) -> Result<String, ResolveError> {
        if let Some(addr) = self.cached(store_id) {
            return Ok(addr);
        }
        let mut last = String::from("no PD endpoint answered");
        for (uri, channel) in &self.endpoints {
            // Twice at most: the second time with the cluster id PD's answer named.
            for _ in 0..2 {
                let header = RequestHeader {
                    cluster_id: self.cluster_id.load(Ordering::Relaxed),
                    sender_id: 0,
                };
                let req = GetStoreRequest { header: Some(header), store_id };
                let resp = match PdClient::new(channel.clone()).get_store(req).await {
                    Ok(r) => r.into_inner(),
                    Err(status) => {
                        last = format!("{uri}: {status}");
                        break;
                    }
                };
                let header = resp.header.unwrap_or_default();
                if let Some(err) = header.error.filter(|e| e.r#type != ErrorType::Ok as i32) {
                    if err.r#type == ErrorType::StoreTombstone as i32 {
                        return Err(ResolveError::NotServing { store_id, reason: err.message });
                    }
                    let known = self.cluster_id.swap(header.cluster_id, Ordering::Relaxed);
                    last = format!("{uri}: {}", err.message);
                    if known != header.cluster_id && header.cluster_id != 0 {
                        continue;
                    }
                    break;
                }
                if header.cluster_id != 0 {
                    self.cluster_id.store(header.cluster_id, Ordering::Relaxed);
                }
                let Some(store) = resp.store else {
                    return Err(ResolveError::UnknownStore(store_id));
                };
                if store.state == StoreState::Tombstone as i32 {
                    return Err(ResolveError::NotServing { store_id, reason: "tombstone".into() });
                }
                if store.address.is_empty() {
                    return Err(ResolveError::NotServing { store_id, reason: "no address".into() });
                }
                let addr = endpoint_uri(&store.address);
                self.cache
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(store_id, addr.clone());
                return Ok(addr);
            }
        }
        Err(ResolveError::Unavailable(last))
    }
}

impl StoreResolver for PdResolver {
    fn resolve(&self, store_id: u64) -> ResolveFuture<'_> {
        Box::pin(self.lookup(store_id))
    }

    fn invalidate(&self, store_id: u64) {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner).remove(&store_id);
    }
}
