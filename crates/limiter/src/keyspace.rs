//! The tenant identifier the limiters are fair between.

use std::fmt;

/// A keyspace (tenant) id, as carried by the request's context (`api_version` 2 key prefix).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct KeyspaceId(pub u32);

impl fmt::Display for KeyspaceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ks{}", self.0)
    }
}

impl From<u32> for KeyspaceId {
    fn from(id: u32) -> Self {
        KeyspaceId(id)
    }
}
