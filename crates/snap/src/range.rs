//! Shard ranges, outer vs inner keys, and request range checks.
//!
//! Outer keys are what clients and mem-data rows carry (API v2: `'x'` + 3-byte keyspace id +
//! user key). Inside the shard, memtables and SST files store *inner* keys: the outer key with
//! the shard's `inner_key_off`-byte keyspace prefix trimmed (formats reference §2.10; upstream
//! §4). A shard with `inner_key_off = 0` stores outer keys unchanged.

use bytes::Bytes;

use crate::error::{Error, Result};

/// A half-open range of inner keys; an empty `end` means unbounded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InnerRange {
    /// Inclusive start.
    pub start: Vec<u8>,
    /// Exclusive end; empty = unbounded.
    pub end: Vec<u8>,
}

impl InnerRange {
    /// True when `key` lies in the range.
    #[inline]
    pub fn contains(&self, key: &[u8]) -> bool {
        key >= self.start.as_slice() && self.before_end(key)
    }

    /// True when `key` is before the end bound.
    #[inline]
    pub fn before_end(&self, key: &[u8]) -> bool {
        self.end.is_empty() || key < self.end.as_slice()
    }

    /// True when the range overlaps the closed interval `[smallest, biggest]`.
    pub fn overlaps(&self, smallest: &[u8], biggest: &[u8]) -> bool {
        biggest >= self.start.as_slice() && self.before_end(smallest)
    }

    /// True when the range can hold no key.
    pub fn is_empty(&self) -> bool {
        !self.end.is_empty() && self.start >= self.end
    }
}

/// A shard's key range `[outer_start, outer_end)` and its keyspace prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardRange {
    outer_start: Bytes,
    outer_end: Bytes,
    prefix_len: usize,
    /// Inner form of the shard range.
    inner: InnerRange,
}

impl ShardRange {
    /// A shard range. `inner_key_off` is 0 (keys stored as is) or the length of a keyspace
    /// prefix shared by every key of the shard (4 for API v2): `outer_start` must begin with
    /// it and `outer_end` must either begin with it or be the next prefix (the keyspace end).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidRange`] when the range is empty or reversed, or the prefix rule fails.
    pub fn new(
        outer_start: impl Into<Bytes>,
        outer_end: impl Into<Bytes>,
        inner_key_off: u32,
    ) -> Result<Self> {
        let outer_start = outer_start.into();
        let outer_end = outer_end.into();
        let invalid = |reason| Error::InvalidRange {
            start: outer_start.to_vec(),
            end: outer_end.to_vec(),
            reason,
        };
        if !outer_end.is_empty() && outer_start >= outer_end {
            return Err(invalid("shard start is not before its end"));
        }
        let prefix_len = usize::try_from(inner_key_off).map_err(|_| invalid("inner_key_off"))?;
        let prefix = outer_start
            .get(..prefix_len)
            .ok_or_else(|| invalid("start shorter than the prefix"))?;
        let inner_end = if prefix_len == 0 {
            outer_end.to_vec()
        } else if outer_end.starts_with(prefix) {
            outer_end[prefix_len..].to_vec()
        } else if outer_end.as_ref() == rcop_datum::key::prefix_next(prefix).as_slice() {
            Vec::new()
        } else {
            return Err(invalid("shard end is not in the keyspace of its start"));
        };
        if prefix_len > 0 && outer_end.starts_with(prefix) && inner_end.is_empty() {
            return Err(invalid("shard end equals its keyspace prefix"));
        }
        let inner = InnerRange { start: outer_start[prefix_len..].to_vec(), end: inner_end };
        Ok(ShardRange { outer_start, outer_end, prefix_len, inner })
    }

    /// The outer start key.
    pub fn outer_start(&self) -> &Bytes {
        &self.outer_start
    }

    /// The outer end key (empty = unbounded).
    pub fn outer_end(&self) -> &Bytes {
        &self.outer_end
    }

    /// `inner_key_off`: length of the prefix trimmed from outer keys.
    pub fn inner_key_off(&self) -> u32 {
        // `prefix_len` came from a u32.
        self.prefix_len as u32
    }

    /// The keyspace prefix (empty when `inner_key_off` is 0).
    pub fn prefix(&self) -> &[u8] {
        &self.outer_start[..self.prefix_len]
    }

    /// The shard range in inner keys.
    pub fn inner(&self) -> &InnerRange {
        &self.inner
    }

    /// True when the outer key lies in the shard.
    pub fn contains_outer(&self, key: &[u8]) -> bool {
        key >= self.outer_start.as_ref()
            && (self.outer_end.is_empty() || key < self.outer_end.as_ref())
    }

    /// The inner key of an outer key of this shard; `None` when it does not carry the prefix.
    pub fn to_inner<'k>(&self, outer: &'k [u8]) -> Option<&'k [u8]> {
        outer.strip_prefix(self.prefix())
    }

    /// Writes the outer key of `inner` into `buf` (cleared first).
    #[inline]
    pub fn outer_key_into(&self, inner: &[u8], buf: &mut Vec<u8>) {
        buf.clear();
        buf.extend_from_slice(self.prefix());
        buf.extend_from_slice(inner);
    }

    /// Checks a request range `[start, end)` of outer keys (empty `end` = unbounded) and
    /// returns it in inner keys.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidRange`] when `start > end`; [`Error::RangeOutOfShard`] when the range
    /// reaches outside the shard.
    pub fn to_inner_range(&self, start: &[u8], end: &[u8]) -> Result<InnerRange> {
        if !end.is_empty() && start > end {
            return Err(Error::InvalidRange {
                start: start.to_vec(),
                end: end.to_vec(),
                reason: "start is after end",
            });
        }
        let outside = || Error::RangeOutOfShard {
            start: start.to_vec(),
            end: end.to_vec(),
            shard_start: self.outer_start.to_vec(),
            shard_end: self.outer_end.to_vec(),
        };
        if start < self.outer_start.as_ref() {
            return Err(outside());
        }
        if !self.outer_end.is_empty() && (end.is_empty() || end > self.outer_end.as_ref()) {
            return Err(outside());
        }
        // start >= outer_start, which carries the prefix, and start < end <= outer_end.
        let inner_start = self.to_inner(start).ok_or_else(outside)?.to_vec();
        let inner_end = if end == self.outer_end.as_ref() {
            self.inner.end.clone()
        } else {
            self.to_inner(end).ok_or_else(outside)?.to_vec()
        };
        Ok(InnerRange { start: inner_start, end: inner_end })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyspace_shard() {
        let s = ShardRange::new(&b"x\0\0\x01"[..], &b"x\0\0\x02"[..], 4).unwrap();
        assert_eq!(s.prefix(), b"x\0\0\x01");
        assert_eq!(s.inner(), &InnerRange { start: vec![], end: vec![] });
        let r = s.to_inner_range(b"x\0\0\x01t1", b"x\0\0\x01t2").unwrap();
        assert_eq!(r, InnerRange { start: b"t1".to_vec(), end: b"t2".to_vec() });
        let r = s.to_inner_range(b"x\0\0\x01", b"x\0\0\x02").unwrap();
        assert_eq!(r, InnerRange { start: vec![], end: vec![] });
        assert!(matches!(
            s.to_inner_range(b"x\0\0\x00z", b"x\0\0\x01a"),
            Err(Error::RangeOutOfShard { .. })
        ));
        assert!(matches!(s.to_inner_range(b"x\0\0\x01a", b""), Err(Error::RangeOutOfShard { .. })));
        assert!(matches!(
            s.to_inner_range(b"x\0\0\x01b", b"x\0\0\x01a"),
            Err(Error::InvalidRange { .. })
        ));
        let mut buf = Vec::new();
        s.outer_key_into(b"t1", &mut buf);
        assert_eq!(buf, b"x\0\0\x01t1");
    }

    #[test]
    fn split_shard_inside_keyspace() {
        let s = ShardRange::new(&b"x\0\0\x01m"[..], &b"x\0\0\x01t"[..], 4).unwrap();
        assert_eq!(s.inner(), &InnerRange { start: b"m".to_vec(), end: b"t".to_vec() });
        assert!(s.to_inner_range(b"x\0\0\x01m", b"x\0\0\x01t").is_ok());
        assert!(s.to_inner_range(b"x\0\0\x01a", b"x\0\0\x01n").is_err());
        assert!(s.to_inner_range(b"x\0\0\x01n", b"x\0\0\x01u").is_err());
    }

    #[test]
    fn invalid_shards() {
        assert!(ShardRange::new(&b"b"[..], &b"a"[..], 0).is_err());
        assert!(ShardRange::new(&b"x\0"[..], &b""[..], 4).is_err());
        assert!(ShardRange::new(&b"x\0\0\x01"[..], &b"x\0\0\x03"[..], 4).is_err());
        assert!(ShardRange::new(&b""[..], &b""[..], 0).is_ok());
    }
}
