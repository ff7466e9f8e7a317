//! Restoring the cache from its directory, and the `[local-gc]` collector.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::{Instant, SystemTime};

use super::format::{SegKey, parse_meta_name};
use super::{Inner, LocalGcConfig, disk, lock};

/// What one collector round removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GcReport {
    /// `*.tmp` leftovers.
    pub tmp_files: usize,
    /// Segments whose metadata file is gone, and files that are not the cache's.
    pub orphans: usize,
    /// Metadata files unused for `meta-lifetime` (their segments go with them).
    pub expired_metas: usize,
}

fn is_tmp(name: &str) -> bool {
    name.ends_with(".tmp")
}

/// Fills the queues from the directory at startup: every metadata file and every segment
/// whose metadata file exists, sized as its name says, goes to main; the rest is removed.
pub(super) fn restore(inner: &Arc<Inner>) {
    let now = Instant::now();
    let mut evicted = Vec::new();
    for f in disk::list(&inner.meta_dir) {
        let keep = parse_meta_name(&f.name).filter(|_| !is_tmp(&f.name)).is_some_and(|id| {
            let ok = lock(&inner.fifo).reserve_meta(id, f.len, &mut evicted);
            if ok {
                inner.touch_meta(id, now);
            }
            ok
        });
        if keep {
            inner.usage.bytes.fetch_add(f.len, Ordering::Relaxed);
        } else {
            let _ = std::fs::remove_file(&f.path);
        }
    }
    for f in disk::list(&inner.seg_dir) {
        let key = SegKey::parse(&f.name)
            .filter(|k| k.disk_len() == f.len && lock(&inner.fifo).has_meta(k.file));
        match key {
            Some(k) => {
                inner.usage.bytes.fetch_add(f.len, Ordering::Relaxed);
                let ev = lock(&inner.fifo).restore(k);
                evicted.extend(ev);
            }
            None => {
                let _ = std::fs::remove_file(&f.path);
            }
        }
    }
    inner.delete_segments(&evicted);
}

/// One collector round. `all_orphans` also sweeps segments without metadata (on the
/// `segment-interval`; always when called by hand).
pub(super) fn sweep(inner: &Inner, all_orphans: bool) -> GcReport {
    let cfg = inner.cfg.local_gc;
    let mut report = GcReport::default();
    let wall = SystemTime::now();
    for dir in [&inner.seg_dir, &inner.meta_dir] {
        for f in disk::list(dir) {
            if is_tmp(&f.name)
                && wall.duration_since(f.modified).unwrap_or_default() >= cfg.segment_tmp_lifetime
            {
                let _ = std::fs::remove_file(&f.path);
                report.tmp_files += 1;
            }
        }
    }
    let now = Instant::now();
    let expired: Vec<_> = lock(&inner.meta_used)
        .iter()
        .filter(|(_, t)| now.saturating_duration_since(**t) >= cfg.meta_lifetime)
        .map(|(id, _)| *id)
        .collect();
    for id in expired {
        lock(&inner.meta_used).remove(&id);
        inner.layouts.remove(&id);
        let segs = {
            let mut fifo = lock(&inner.fifo);
            fifo.drop_meta(id);
            let segs = fifo.disk_segments_of(id);
            for k in &segs {
                fifo.remove(*k);
            }
            segs
        };
        inner.delete_segments(&segs);
        let path = inner.meta_dir.join(super::format::meta_name(id));
        let n = std::fs::metadata(&path).map_or(0, |m| m.len());
        disk::remove(&path, n, &inner.usage);
        report.expired_metas += 1;
    }
    if all_orphans {
        for f in disk::list(&inner.seg_dir) {
            if is_tmp(&f.name) {
                continue;
            }
            let orphan = match SegKey::parse(&f.name) {
                Some(k) => !lock(&inner.fifo).has_meta(k.file),
                None => true,
            };
            if orphan {
                if let Some(k) = SegKey::parse(&f.name) {
                    lock(&inner.fifo).remove(k);
                }
                disk::remove(&f.path, f.len, &inner.usage);
                report.orphans += 1;
            }
        }
    }
    report
}

/// The collector thread; stopped and joined when dropped.
#[derive(Debug)]
pub(super) struct Collector {
    stop: Arc<(Mutex<bool>, Condvar)>,
    handle: Option<JoinHandle<()>>,
}

impl Collector {
    pub(super) fn start(inner: Weak<Inner>, cfg: LocalGcConfig) -> Option<Collector> {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let s = stop.clone();
        let handle = std::thread::Builder::new()
            .name("rcop-ia-gc".into())
            .spawn(move || {
                let mut last_orphans = Instant::now();
                loop {
                    {
                        let (m, cv) = &*s;
                        let g = lock(m);
                        let (g, _) = cv
                            .wait_timeout_while(g, cfg.interval, |stopped| !*stopped)
                            .unwrap_or_else(std::sync::PoisonError::into_inner);
                        if *g {
                            return;
                        }
                    }
                    let Some(inner) = inner.upgrade() else { return };
                    let all = last_orphans.elapsed() >= cfg.segment_interval;
                    if all {
                        last_orphans = Instant::now();
                    }
                    let r = sweep(&inner, all);
                    if r != GcReport::default() {
                        tracing::info!(?r, "disk cache collector round");
                    }
                }
            })
            .ok()?;
        Some(Collector { stop, handle: Some(handle) })
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        let (m, cv) = &*self.stop;
        *lock(m) = true;
        cv.notify_all();
        if let Some(h) = self.handle.take()
            && h.thread().id() != std::thread::current().id()
        {
            let _ = h.join();
        }
    }
}
