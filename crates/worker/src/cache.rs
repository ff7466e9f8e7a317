//! The disk cache (IA) as the worker configures and watches it: `data-dir`, `[ia]`,
//! `[local-gc]` (upstream's keys), and its metrics under upstream's `kv_engine_ia_*` names.
//!
//! The cache itself is `rcop_sst::IaCache`: block-aligned segments of SST data and the
//! files' metadata as checksummed local files, S3-FIFO, restored at start-up. The worker
//! opens it when `data-dir` is set and both `mem-cap` and `disk-cap` are above zero (as
//! upstream), and every SST read of a request then goes block cache → disk cache → object
//! storage.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use prometheus::core::{Collector, Desc};
use prometheus::proto::MetricFamily;
use prometheus::{
    Histogram, HistogramOpts, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry,
};
use rcop_limiter::{MemoryThreshold, ReadableDuration, ReadableSize};
use rcop_sst::ia::{
    DEFAULT_DFS_CONCURRENCY, DEFAULT_DFS_KEYSPACE_CONCURRENCY, DEFAULT_SEGMENT_SIZE,
};
use rcop_sst::{DiskCap, IaCache, IaConfig, IaObserver, IaRequestStats, LocalGcConfig};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Default `[ia] mem-cap`: 256 MiB of segments in memory (upstream gives no default).
pub const DEFAULT_IA_MEM_CAP: u64 = 256 << 20;
/// Default `[ia] disk-cap`: half of the filesystem holding `data-dir`.
pub const DEFAULT_IA_DISK_CAP_PERCENT: f64 = 50.0;

/// `[ia]`: the disk cache of SST segments under `data-dir` (upstream's keys).
///
/// ```toml
/// data-dir = "/var/lib/rcop"
///
/// [ia]
/// mem-cap = "256MiB"          # segments held in memory (S3-FIFO's small queue)
/// disk-cap = "50%"            # bytes of cache files on disk, or a share of the filesystem
/// segment-size = "1MiB"       # segments are cut on block boundaries, at most this long
/// freq-update-interval = "1s" # a segment's frequency rises at most once per interval
/// dfs-concurrency = 512       # object-store reads in flight, all keyspaces
/// dfs-keyspace-concurrency = 192
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
#[non_exhaustive]
pub struct IaSection {
    /// Bytes of segments held in memory; 0 turns the cache off.
    pub mem_cap: ReadableSize,
    /// Bytes of cache files on disk (`"20GiB"`), or a percentage of the filesystem holding
    /// `data-dir` (`"50%"`); 0 turns the cache off.
    pub disk_cap: MemoryThreshold,
    /// Largest segment (one block larger than this is a segment of its own).
    pub segment_size: ReadableSize,
    /// A segment's access frequency is bumped at most once per this interval.
    pub freq_update_interval: ReadableDuration,
    /// Object-store reads in flight at once, for all keyspaces.
    pub dfs_concurrency: usize,
    /// Object-store reads in flight at once for one keyspace.
    pub dfs_keyspace_concurrency: usize,
}

impl Default for IaSection {
    fn default() -> Self {
        IaSection {
            mem_cap: ReadableSize(DEFAULT_IA_MEM_CAP),
            disk_cap: MemoryThreshold::Percent(DEFAULT_IA_DISK_CAP_PERCENT),
            segment_size: ReadableSize(DEFAULT_SEGMENT_SIZE),
            freq_update_interval: ReadableDuration::secs(1),
            dfs_concurrency: DEFAULT_DFS_CONCURRENCY,
            dfs_keyspace_concurrency: DEFAULT_DFS_KEYSPACE_CONCURRENCY,
        }
    }
}

/// `[local-gc]`: the collector of leftover disk-cache files (upstream's keys and defaults).
///
/// ```toml
/// [local-gc]
/// interval = "1h"             # how often the collector runs
/// meta-lifetime = "1d"        # a metadata file unused this long goes, with its segments
/// segment-interval = "1d"     # how often segments without metadata are swept
/// segment-tmp-lifetime = "1m" # a *.tmp older than this is a crash leftover
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
#[non_exhaustive]
pub struct LocalGcSection {
    /// How often the collector runs.
    pub interval: ReadableDuration,
    /// A metadata file unused this long is removed with its segments.
    pub meta_lifetime: ReadableDuration,
    /// How often segments without a metadata file are swept.
    pub segment_interval: ReadableDuration,
    /// A `*.tmp` file older than this is a leftover of an interrupted write.
    pub segment_tmp_lifetime: ReadableDuration,
}

impl Default for LocalGcSection {
    fn default() -> Self {
        let d = LocalGcConfig::default();
        LocalGcSection {
            interval: ReadableDuration(d.interval),
            meta_lifetime: ReadableDuration(d.meta_lifetime),
            segment_interval: ReadableDuration(d.segment_interval),
            segment_tmp_lifetime: ReadableDuration(d.segment_tmp_lifetime),
        }
    }
}

impl IaSection {
    /// Checks every value; the error names the offending key.
    ///
    /// # Errors
    ///
    /// [`Error::Config`].
    pub fn validate(&self) -> Result<()> {
        if let MemoryThreshold::Percent(p) = self.disk_cap
            && !(p > 0.0 && p <= 100.0)
        {
            return Err(Error::config("ia.disk-cap", format!("{p}% is not in (0%, 100%]")));
        }
        if self.segment_size.0 == 0 {
            return Err(Error::config("ia.segment-size", "must be greater than 0"));
        }
        if self.dfs_concurrency == 0 {
            return Err(Error::config("ia.dfs-concurrency", "must be greater than 0"));
        }
        if self.dfs_keyspace_concurrency == 0 {
            return Err(Error::config("ia.dfs-keyspace-concurrency", "must be greater than 0"));
        }
        Ok(())
    }

    /// False when `mem-cap` or `disk-cap` is zero: the cache is off, as upstream.
    pub fn enabled(&self) -> bool {
        let disk = match self.disk_cap {
            MemoryThreshold::Absolute(s) => s.0 > 0,
            MemoryThreshold::Percent(p) => p > 0.0,
        };
        self.mem_cap.0 > 0 && disk
    }
}

impl LocalGcSection {
    /// Checks every value; the error names the offending key.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for a zero interval.
    pub fn validate(&self) -> Result<()> {
        for (key, v) in [
            ("local-gc.interval", self.interval),
            ("local-gc.meta-lifetime", self.meta_lifetime),
            ("local-gc.segment-interval", self.segment_interval),
            ("local-gc.segment-tmp-lifetime", self.segment_tmp_lifetime),
        ] {
            if v.is_zero() {
                return Err(Error::config(key, "must be greater than 0"));
            }
        }
        Ok(())
    }
}

/// The `rcop-sst` configuration of the cache under `data_dir`.
pub(crate) fn ia_config(data_dir: &Path, ia: &IaSection, gc: &LocalGcSection) -> IaConfig {
    let mut c = IaConfig::new(data_dir);
    c.mem_cap = ia.mem_cap.0;
    c.disk_cap = match ia.disk_cap {
        MemoryThreshold::Absolute(s) => DiskCap::Bytes(s.0),
        MemoryThreshold::Percent(p) => DiskCap::Percent(p),
    };
    c.segment_size = ia.segment_size.0;
    c.freq_update_interval = ia.freq_update_interval.0;
    c.dfs_concurrency = ia.dfs_concurrency;
    c.dfs_keyspace_concurrency = ia.dfs_keyspace_concurrency;
    let mut l = LocalGcConfig::default();
    l.interval = gc.interval.0;
    l.meta_lifetime = gc.meta_lifetime.0;
    l.segment_interval = gc.segment_interval.0;
    l.segment_tmp_lifetime = gc.segment_tmp_lifetime.0;
    c.local_gc = l;
    c
}

/// The disk cache's metrics (registered only when the cache is on):
///
/// - `kv_engine_ia_read_segment_duration_seconds`: a segment read, from the cache or from
///   object storage;
/// - `kv_engine_ia_read_segment_cache_miss`: segment reads that went to object storage;
/// - `kv_engine_ia_manager_segments_memory_size`, `…_disk_size`: bytes held (read from the
///   cache at every scrape);
/// - `kv_engine_ia_small_queue_capacity`, `kv_engine_ia_main_queue_capacity`: S3-FIFO's
///   capacities;
/// - `rcop_worker_ia_segments{tier}`: segments held in `memory` and on `disk`;
/// - `tikv_worker_remote_cop_prefetch_duration_seconds`: a request's block fetch;
/// - `tikv_worker_remote_cop_prefetch_cache_hit_percent`: share of a request's segment reads
///   served by the cache;
/// - `rcop_worker_ia_fallback_total{reason}`: reads served from object storage or writes
///   skipped because of a cache fault (`corrupt`, `read_error`, `write_error`, `disk_full`,
///   `unwritable`).
#[derive(Debug, Clone)]
pub(crate) struct IaMetrics {
    read_segment: Histogram,
    misses: IntCounter,
    fallbacks: IntCounterVec,
    prefetch: Histogram,
    hit_percent: Histogram,
}

impl IaMetrics {
    pub(crate) fn register(registry: &Registry) -> Result<Self> {
        let read_segment = Histogram::with_opts(
            HistogramOpts::new(
                "kv_engine_ia_read_segment_duration_seconds",
                "Time to read a segment of an SST through the disk cache",
            )
            .buckets(prometheus::exponential_buckets(0.00005, 2.0, 20)?),
        )?;
        registry.register(Box::new(read_segment.clone()))?;
        let misses = IntCounter::new(
            "kv_engine_ia_read_segment_cache_miss",
            "Segment reads that went to object storage",
        )?;
        registry.register(Box::new(misses.clone()))?;
        let fallbacks = IntCounterVec::new(
            Opts::new(
                "rcop_worker_ia_fallback_total",
                "Disk-cache faults served from object storage or skipped writes",
            ),
            &["reason"],
        )?;
        for r in ["corrupt", "read_error", "write_error", "disk_full", "unwritable"] {
            fallbacks.with_label_values(&[r]);
        }
        registry.register(Box::new(fallbacks.clone()))?;
        let prefetch = Histogram::with_opts(
            HistogramOpts::new(
                "tikv_worker_remote_cop_prefetch_duration_seconds",
                "Time to fetch the blocks of a request's snapshot",
            )
            .buckets(prometheus::exponential_buckets(0.0005, 2.0, 20)?),
        )?;
        registry.register(Box::new(prefetch.clone()))?;
        let hit_percent = Histogram::with_opts(
            HistogramOpts::new(
                "tikv_worker_remote_cop_prefetch_cache_hit_percent",
                "Share of a request's segment reads served by the disk cache",
            )
            .buckets(prometheus::linear_buckets(10.0, 10.0, 10)?),
        )?;
        registry.register(Box::new(hit_percent.clone()))?;
        Ok(IaMetrics { read_segment, misses, fallbacks, prefetch, hit_percent })
    }

    /// Counts one request's fetch: its time and, when it read any segment, the hit share.
    pub(crate) fn observe_prefetch(&self, elapsed: Duration, stats: &IaRequestStats) {
        self.prefetch.observe(elapsed.as_secs_f64());
        let hits = stats.cache_hits();
        let total = hits + stats.remote_segments();
        if total > 0 {
            self.hit_percent.observe(hits as f64 * 100.0 / total as f64);
        }
    }
}

impl IaObserver for IaMetrics {
    fn segment_read(&self, elapsed: Duration, miss: bool) {
        self.read_segment.observe(elapsed.as_secs_f64());
        if miss {
            self.misses.inc();
        }
    }

    fn fallback(&self, reason: &'static str) {
        self.fallbacks.with_label_values(&[reason]).inc();
    }
}

/// The cache's sizes as gauges, read from [`IaCache::stats`] at every gather.
struct IaGauges {
    cache: IaCache,
    sizes: IntGaugeVec,
    memory: IntGauge,
    disk: IntGauge,
    small: IntGauge,
    main: IntGauge,
}

impl IaGauges {
    fn new(cache: IaCache) -> Result<Self> {
        let gauge = |name: &str, help: &str| IntGauge::new(name, help);
        let sizes = IntGaugeVec::new(
            Opts::new("rcop_worker_ia_segments", "Segments the disk cache holds, by tier"),
            &["tier"],
        )?;
        Ok(IaGauges {
            cache,
            sizes,
            memory: gauge(
                "kv_engine_ia_manager_segments_memory_size",
                "Bytes of segments the disk cache holds in memory",
            )?,
            disk: gauge(
                "kv_engine_ia_manager_segments_disk_size",
                "Bytes of cache files the disk cache holds on disk",
            )?,
            small: gauge(
                "kv_engine_ia_small_queue_capacity",
                "Capacity of the disk cache's small (memory) queue",
            )?,
            main: gauge(
                "kv_engine_ia_main_queue_capacity",
                "Capacity of the disk cache's main (disk) queue",
            )?,
        })
    }

    fn parts(&self) -> [&dyn Collector; 5] {
        [&self.memory, &self.disk, &self.small, &self.main, &self.sizes]
    }
}

impl Collector for IaGauges {
    fn desc(&self) -> Vec<&Desc> {
        self.parts().into_iter().flat_map(|c| c.desc()).collect()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let s = self.cache.stats();
        let i = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        self.memory.set(i(s.memory_bytes));
        self.disk.set(i(s.disk_bytes));
        self.small.set(i(s.small_capacity));
        self.main.set(i(s.main_capacity));
        self.sizes.with_label_values(&["memory"]).set(i(s.memory_segments as u64));
        self.sizes.with_label_values(&["disk"]).set(i(s.disk_segments as u64));
        self.parts().into_iter().flat_map(|c| c.collect()).collect()
    }
}

/// Opens the cache under `data_dir` (blocking: restores what the directory holds) and
/// registers its metrics in `registry`.
pub(crate) fn open(
    data_dir: &Path,
    ia: &IaSection,
    gc: &LocalGcSection,
    registry: &Registry,
) -> Result<(IaCache, IaMetrics)> {
    let metrics = IaMetrics::register(registry)?;
    let observer: Arc<dyn IaObserver> = Arc::new(metrics.clone());
    let cache = IaCache::open(ia_config(data_dir, ia, gc), Some(observer));
    registry.register(Box::new(IaGauges::new(cache.clone())?))?;
    Ok((cache, metrics))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_map_to_the_caches_config() {
        let ia = IaSection {
            mem_cap: ReadableSize(1 << 20),
            disk_cap: MemoryThreshold::Absolute(ReadableSize(1 << 30)),
            segment_size: ReadableSize(64 << 10),
            freq_update_interval: ReadableDuration::millis(10),
            dfs_concurrency: 8,
            dfs_keyspace_concurrency: 2,
        };
        let gc = LocalGcSection { interval: ReadableDuration::secs(5), ..Default::default() };
        let c = ia_config(Path::new("/d"), &ia, &gc);
        assert_eq!(c.data_dir, Path::new("/d"));
        assert_eq!((c.mem_cap, c.disk_cap), (1 << 20, DiskCap::Bytes(1 << 30)));
        assert_eq!(c.segment_size, 64 << 10);
        assert_eq!(c.freq_update_interval, Duration::from_millis(10));
        assert_eq!((c.dfs_concurrency, c.dfs_keyspace_concurrency), (8, 2));
        assert_eq!(c.local_gc.interval, Duration::from_secs(5));
        assert_eq!(c.local_gc.meta_lifetime, Duration::from_secs(86_400));
        let pct = IaSection { disk_cap: MemoryThreshold::Percent(12.5), ..ia.clone() };
        assert_eq!(ia_config(Path::new("/d"), &pct, &gc).disk_cap, DiskCap::Percent(12.5));
        assert!(ia.enabled());
        assert!(!IaSection { mem_cap: ReadableSize(0), ..ia.clone() }.enabled());
        let no_disk = IaSection { disk_cap: MemoryThreshold::Absolute(ReadableSize(0)), ..ia };
        assert!(!no_disk.enabled());
    }

    #[test]
    fn metrics_read_the_cache_at_every_scrape() {
        let dir =
            std::env::temp_dir().join(format!("rcop-worker-ia-metrics-{}", std::process::id()));
        let registry = Registry::new();
        let ia = IaSection {
            disk_cap: MemoryThreshold::Absolute(ReadableSize(10 << 20)),
            ..IaSection::default()
        };
        let (cache, metrics) = open(&dir, &ia, &LocalGcSection::default(), &registry).unwrap();
        metrics.segment_read(Duration::from_millis(1), true);
        metrics.fallback("corrupt");
        let text = {
            let mut out = Vec::new();
            prometheus::Encoder::encode(
                &prometheus::TextEncoder::new(),
                &registry.gather(),
                &mut out,
            )
            .unwrap();
            String::from_utf8(out).unwrap()
        };
        for line in [
            "kv_engine_ia_main_queue_capacity 10485760",
            "kv_engine_ia_small_queue_capacity 268435456",
            "kv_engine_ia_manager_segments_disk_size 0",
            "kv_engine_ia_manager_segments_memory_size 0",
            "kv_engine_ia_read_segment_cache_miss 1",
            "kv_engine_ia_read_segment_duration_seconds_count 1",
            "rcop_worker_ia_fallback_total{reason=\"corrupt\"} 1",
            "rcop_worker_ia_fallback_total{reason=\"disk_full\"} 0",
            "tikv_worker_remote_cop_prefetch_duration_seconds_count 0",
        ] {
            assert!(text.contains(line), "{line} missing from\n{text}");
        }
        drop(cache);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
