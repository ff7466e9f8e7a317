//! S3-FIFO bookkeeping of the disk cache: which segment is where, and what to evict.
//!
//! Pure state (no I/O): the cache applies the [`Evict`] lists it returns.
//!
//! - **small** (memory, `mem-cap` bytes): every fetched segment enters here. When its
//!   frequency first reaches 1 (a second access) it is also written to main — earlier than
//!   textbook S3-FIFO, which promotes when the item leaves small, so that a restart finds
//!   what was reused. Leaving small, a segment already on disk just drops its memory copy;
//!   one never reused goes to the ghost queue.
//! - **main** (disk, `disk-cap` bytes, metadata files included): reinsertion with a
//!   decremented frequency, eviction at frequency 0.
//! - **ghost** (keys only, `disk-cap / segment-size` slots): a segment fetched again while
//!   its key is in the ghost goes straight to main.
//!
//! Capacities are strict: a write to disk first reserves its bytes, evicting until
//! `main_bytes + meta_bytes + reserved ≤ disk-cap`; a reservation that cannot fit is
//! refused (the segment stays in memory only). The small queue never holds more than
//! `mem-cap` bytes except a single segment larger than it, which passes through.
//! Frequencies are capped at 3 and bumped at most once per `freq-update-interval`.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::format::SegKey;
use crate::types::FileId;

const MAX_FREQ: u8 = 3;

/// Where a segment's disk copy is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Disk {
    None,
    /// Bytes reserved, file being written.
    Writing,
    Present,
}

#[derive(Debug)]
struct Entry {
    mem: Option<Bytes>,
    disk: Disk,
    freq: u8,
    bumped: Option<Instant>,
}

/// What a lookup found.
#[derive(Debug)]
pub(crate) enum Found {
    Memory(Bytes),
    Disk,
}

/// Result of recording an access: found where, and whether to write it to main now.
#[derive(Debug)]
pub(crate) struct Access {
    pub(crate) found: Found,
    /// Write these bytes as the segment's file (bytes already reserved).
    pub(crate) promote: Option<Bytes>,
    /// Files to delete to make room for the promotion.
    pub(crate) evicted: Vec<SegKey>,
}

#[derive(Debug)]
pub(crate) struct Fifo {
    map: HashMap<SegKey, Entry>,
    small: VecDeque<SegKey>,
    main: VecDeque<SegKey>,
    ghost: VecDeque<SegKey>,
    ghost_set: HashSet<SegKey>,
    metas: HashMap<FileId, u64>,
    small_bytes: u64,
    main_bytes: u64,
    meta_bytes: u64,
    small_cap: u64,
    main_cap: u64,
    ghost_cap: usize,
    interval: Duration,
}

/// Sizes of the queues.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Sizes {
    pub(crate) small_bytes: u64,
    pub(crate) main_bytes: u64,
    pub(crate) meta_bytes: u64,
    pub(crate) small_cap: u64,
    pub(crate) main_cap: u64,
    pub(crate) mem_segments: usize,
    pub(crate) disk_segments: usize,
}

impl Fifo {
    pub(crate) fn new(
        small_cap: u64,
        main_cap: u64,
        segment_size: u64,
        interval: Duration,
    ) -> Self {
        let ghost_cap = usize::try_from(main_cap / segment_size.max(1)).unwrap_or(usize::MAX);
        Fifo {
            map: HashMap::new(),
            small: VecDeque::new(),
            main: VecDeque::new(),
            ghost: VecDeque::new(),
            ghost_set: HashSet::new(),
            metas: HashMap::new(),
            small_bytes: 0,
            main_bytes: 0,
            meta_bytes: 0,
            small_cap,
            main_cap,
            ghost_cap: ghost_cap.max(16),
            interval,
        }
    }

    pub(crate) fn sizes(&self) -> Sizes {
        Sizes {
            small_bytes: self.small_bytes,
            main_bytes: self.main_bytes,
            meta_bytes: self.meta_bytes,
            small_cap: self.small_cap,
            main_cap: self.main_cap,
            mem_segments: self.map.values().filter(|e| e.mem.is_some()).count(),
            disk_segments: self.map.values().filter(|e| e.disk != Disk::None).count(),
        }
    }

    fn bump(e: &mut Entry, now: Instant, interval: Duration) -> bool {
        if e.freq >= MAX_FREQ {
            return false;
        }
        if let Some(t) = e.bumped
            && now.saturating_duration_since(t) < interval
        {
            return false;
        }
        e.freq += 1;
        e.bumped = Some(now);
        true
    }

    /// Records an access to `key`; `None` when it is not cached.
    pub(crate) fn access(&mut self, key: SegKey, now: Instant) -> Option<Access> {
        let interval = self.interval;
        let e = self.map.get_mut(&key)?;
        Self::bump(e, now, interval);
        let found = match &e.mem {
            Some(b) => Found::Memory(b.clone()),
            None if e.disk == Disk::Present => Found::Disk,
            // Being written and no longer in memory cannot happen (the memory copy is kept
            // until the write ends); treat it as a miss.
            None => return None,
        };
        let mut out = Access { found, promote: None, evicted: Vec::new() };
        if e.freq >= 1
            && e.disk == Disk::None
            && let Some(b) = e.mem.clone()
            && self.reserve(key.disk_len(), &mut out.evicted)
        {
            if let Some(e) = self.map.get_mut(&key) {
                e.disk = Disk::Writing;
            }
            self.main.push_back(key);
            out.promote = Some(b);
        }
        Some(out)
    }

    /// Admits freshly fetched bytes of `key`. Returns (write these bytes to main now,
    /// files to delete).
    pub(crate) fn admit(&mut self, key: SegKey, bytes: &Bytes) -> (bool, Vec<SegKey>) {
        if self.map.contains_key(&key) {
            return (false, Vec::new());
        }
        if self.ghost_set.remove(&key) {
            let mut evicted = Vec::new();
            if self.reserve(key.disk_len(), &mut evicted) {
                self.map
                    .insert(key, Entry { mem: None, disk: Disk::Writing, freq: 0, bumped: None });
                self.main.push_back(key);
                return (true, evicted);
            }
            return (false, evicted);
        }
        let len = key.len();
        if len > self.small_cap {
            // Larger than the whole small queue: served, not kept.
            self.push_ghost(key);
            return (false, Vec::new());
        }
        while self.small_bytes + len > self.small_cap {
            if !self.evict_small() {
                break;
            }
        }
        self.map.insert(
            key,
            Entry { mem: Some(bytes.clone()), disk: Disk::None, freq: 0, bumped: None },
        );
        self.small.push_back(key);
        self.small_bytes += len;
        (false, Vec::new())
    }

    /// Drops the oldest segment of small. False when small is empty.
    fn evict_small(&mut self) -> bool {
        while let Some(k) = self.small.pop_front() {
            let Some(e) = self.map.get_mut(&k) else { continue };
            if e.mem.take().is_none() {
                continue;
            }
            self.small_bytes = self.small_bytes.saturating_sub(k.len());
            if e.disk == Disk::None {
                self.map.remove(&k);
                self.push_ghost(k);
            }
            return true;
        }
        false
    }

    fn push_ghost(&mut self, k: SegKey) {
        if self.ghost_set.insert(k) {
            self.ghost.push_back(k);
        }
        while self.ghost.len() > self.ghost_cap {
            if let Some(old) = self.ghost.pop_front() {
                self.ghost_set.remove(&old);
            }
        }
    }

    fn used(&self) -> u64 {
        self.main_bytes + self.meta_bytes
    }

    /// Reserves `n` disk bytes, evicting main's segments as needed (their keys go to
    /// `evicted`, whose files the caller deletes, also when the reservation fails). False
    /// when `n` cannot fit.
    fn reserve(&mut self, n: u64, evicted: &mut Vec<SegKey>) -> bool {
        // Each pass either evicts or decrements a frequency; bound the passes anyway.
        let mut budget = self.main.len().saturating_mul(usize::from(MAX_FREQ) + 2) + 1;
        while self.used() + n > self.main_cap && budget > 0 {
            budget -= 1;
            let Some(k) = self.main.pop_front() else { break };
            let Some(e) = self.map.get_mut(&k) else { continue };
            match e.disk {
                Disk::None => continue,
                Disk::Writing => {
                    self.main.push_back(k);
                    continue;
                }
                Disk::Present => {}
            }
            if e.freq > 0 {
                e.freq -= 1;
                self.main.push_back(k);
                continue;
            }
            e.disk = Disk::None;
            self.main_bytes = self.main_bytes.saturating_sub(k.disk_len());
            if e.mem.is_none() {
                self.map.remove(&k);
                self.push_ghost(k);
            }
            evicted.push(k);
        }
        if self.used() + n > self.main_cap {
            return false;
        }
        self.main_bytes += n;
        true
    }

    /// A disk write finished (`ok`) or failed.
    pub(crate) fn written(&mut self, key: SegKey, ok: bool) {
        let Some(e) = self.map.get_mut(&key) else { return };
        if e.disk != Disk::Writing {
            return;
        }
        if ok {
            e.disk = Disk::Present;
        } else {
            e.disk = Disk::None;
            self.main_bytes = self.main_bytes.saturating_sub(key.disk_len());
            if e.mem.is_none() {
                self.map.remove(&key);
            }
        }
    }

    /// Forgets `key` everywhere (its file was bad); returns whether it had disk bytes.
    pub(crate) fn remove(&mut self, key: SegKey) -> bool {
        let Some(e) = self.map.remove(&key) else { return false };
        if e.mem.is_some() {
            self.small_bytes = self.small_bytes.saturating_sub(key.len());
        }
        let had = e.disk != Disk::None;
        if had {
            self.main_bytes = self.main_bytes.saturating_sub(key.disk_len());
        }
        had
    }

    /// A segment file found on disk at startup: into main with frequency 0. Returns the
    /// files to delete when the directory holds more than `disk-cap`.
    pub(crate) fn restore(&mut self, key: SegKey) -> Vec<SegKey> {
        if self.map.contains_key(&key) {
            return Vec::new();
        }
        let mut evicted = Vec::new();
        if self.reserve(key.disk_len(), &mut evicted) {
            self.map.insert(key, Entry { mem: None, disk: Disk::Present, freq: 0, bumped: None });
            self.main.push_back(key);
        } else {
            evicted.push(key);
        }
        evicted
    }

    /// Reserves room for the metadata file of `id` (`n` bytes on disk). False when it does
    /// not fit; `evicted` receives the segment files to delete.
    pub(crate) fn reserve_meta(&mut self, id: FileId, n: u64, evicted: &mut Vec<SegKey>) -> bool {
        if self.metas.contains_key(&id) {
            return false;
        }
        if !self.reserve(n, evicted) {
            return false;
        }
        // `reserve` charged main; move the bytes to the metadata account.
        self.main_bytes -= n;
        self.meta_bytes += n;
        self.metas.insert(id, n);
        true
    }

    /// The metadata file of `id` is gone (failed write, corrupt, collected).
    pub(crate) fn drop_meta(&mut self, id: FileId) {
        if let Some(n) = self.metas.remove(&id) {
            self.meta_bytes = self.meta_bytes.saturating_sub(n);
        }
    }

    pub(crate) fn has_meta(&self, id: FileId) -> bool {
        self.metas.contains_key(&id)
    }

    /// Segments of `id` on disk (for the collector).
    pub(crate) fn disk_segments_of(&self, id: FileId) -> Vec<SegKey> {
        self.map
            .iter()
            .filter(|(k, e)| k.file == id && e.disk != Disk::None)
            .map(|(k, _)| *k)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(i: u64) -> SegKey {
        SegKey { file: FileId(1), start: i * 100, end: i * 100 + 84 }
    }

    fn bytes() -> Bytes {
        Bytes::from(vec![0u8; 84])
    }

    #[test]
    fn one_hit_wonders_never_reach_disk_and_reuse_does() {
        let now = Instant::now();
        // small holds 2 segments, main 3 files (84 + 16 trailer bytes each).
        let mut f = Fifo::new(168, 300, 84, Duration::ZERO);
        for i in 0..5 {
            assert_eq!(f.admit(k(i), &bytes()), (false, vec![]));
        }
        assert_eq!(f.sizes().small_bytes, 168);
        assert_eq!(f.sizes().main_bytes, 0);
        // k(3) reused: promoted.
        let a = f.access(k(3), now).unwrap();
        assert!(matches!(a.found, Found::Memory(_)));
        assert!(a.promote.is_some());
        f.written(k(3), true);
        assert_eq!(f.sizes().main_bytes, 100);
        // k(0) left small unused, so it is a ghost; fetched again it goes to main.
        assert!(f.access(k(0), now).is_none());
        assert_eq!(f.admit(k(0), &bytes()), (true, vec![]));
        f.written(k(0), true);
        assert_eq!(f.sizes().main_bytes, 200);
    }

    #[test]
    fn main_never_exceeds_its_capacity() {
        let now = Instant::now();
        let mut f = Fifo::new(1 << 20, 300, 84, Duration::ZERO);
        let mut on_disk = HashSet::new();
        for i in 0..50 {
            f.admit(k(i), &bytes());
            let a = f.access(k(i), now).unwrap();
            for e in a.evicted {
                assert!(on_disk.remove(&e));
            }
            if a.promote.is_some() {
                on_disk.insert(k(i));
                f.written(k(i), true);
            }
            assert!(f.sizes().main_bytes <= 300);
            assert_eq!(on_disk.len() as u64 * 100, f.sizes().main_bytes);
        }
        assert_eq!(on_disk.len(), 3);
    }

    #[test]
    fn frequency_bumps_are_rate_limited() {
        let now = Instant::now();
        let mut f = Fifo::new(1 << 20, 1 << 20, 84, Duration::from_secs(60));
        f.admit(k(1), &bytes());
        assert!(f.access(k(1), now).unwrap().promote.is_some()); // first bump
        f.admit(k(2), &bytes());
        let _ = f.access(k(2), now);
        // A second access within the interval does not bump again.
        let e = &f.map[&k(2)];
        assert_eq!(e.freq, 1);
        let _ = f.access(k(2), now + Duration::from_secs(1));
        assert_eq!(f.map[&k(2)].freq, 1);
        let _ = f.access(k(2), now + Duration::from_secs(61));
        assert_eq!(f.map[&k(2)].freq, 2);
    }
}
