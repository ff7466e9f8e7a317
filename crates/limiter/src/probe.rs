//! Process memory: the probe (RSS and the memory limit) and the sampled view the limiters read.

use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::clock::Clock;
use crate::error::{Error, Result};

/// How often [`MemoryMonitor::run_sampler`] refreshes the sampled usage (upstream: 100 ms).
pub const MEMORY_SAMPLE_INTERVAL: Duration = Duration::from_millis(100);

/// Name of the thread [`MemoryMonitor::start_sampler_thread`] starts.
const SAMPLER_THREAD_NAME: &str = "rcop-mem-sampler";

/// Shortest interval of the sampler thread, so a zero interval cannot make it spin.
const MIN_THREAD_INTERVAL: Duration = Duration::from_millis(1);

/// Where memory numbers come from; injectable so tests can play memory pressure.
pub trait MemoryProbe: Send + Sync + fmt::Debug {
    /// Bytes the process uses now (resident set size).
    fn used_bytes(&self) -> Result<u64>;

    /// Bytes the process may use: the cgroup limit, else total RAM.
    fn limit_bytes(&self) -> Result<u64>;
}

/// The Linux probe: RSS from `/proc/self/statm`, the limit from cgroup v2 `memory.max`, else
/// cgroup v1 `memory.limit_in_bytes`, capped by `MemTotal` of `/proc/meminfo`.
#[derive(Debug, Clone)]
pub struct ProcessMemoryProbe {
    proc_root: PathBuf,
    cgroup_root: PathBuf,
    page_size: u64,
}

impl Default for ProcessMemoryProbe {
    fn default() -> Self {
        Self::new()
    }
}

/// `AT_PAGESZ` in the ELF auxiliary vector.
const AT_PAGESZ: u64 = 6;
/// Page size assumed when `/proc/self/auxv` cannot be read.
const DEFAULT_PAGE_SIZE: u64 = 4096;

impl ProcessMemoryProbe {
    /// The probe of this process, reading `/proc` and `/sys/fs/cgroup`.
    pub fn new() -> Self {
        Self::with_roots("/proc", "/sys/fs/cgroup")
    }

    /// A probe reading `<proc_root>/self/...` and cgroup files under `cgroup_root`; for tests
    /// and for unusual mount points.
    pub fn with_roots(proc_root: impl Into<PathBuf>, cgroup_root: impl Into<PathBuf>) -> Self {
        let proc_root = proc_root.into();
        let page_size = std::fs::read(proc_root.join("self/auxv"))
            .ok()
            .and_then(|auxv| page_size_from_auxv(&auxv))
            .unwrap_or(DEFAULT_PAGE_SIZE);
        ProcessMemoryProbe { proc_root, cgroup_root: cgroup_root.into(), page_size }
    }

    /// The page size used to turn `statm` pages into bytes.
    pub fn page_size(&self) -> u64 {
        self.page_size
    }

    /// The cgroup memory limit, if the process has one (v2 first, then v1).
    pub fn cgroup_limit_bytes(&self) -> Result<Option<u64>> {
        let path = self.proc_root.join("self/cgroup");
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            // No cgroup file: no cgroup limit.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(probe_error(&path, e)),
        };
        let mut v2 = None;
        let mut v1 = None;
        for line in text.lines() {
            let mut parts = line.splitn(3, ':');
            let (Some(id), Some(controllers), Some(cgroup)) =
                (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            if id == "0" && controllers.is_empty() {
                v2 = Some(cgroup);
            } else if controllers.split(',').any(|c| c == "memory") {
                v1 = Some(cgroup);
            }
        }
        if let Some(cgroup) = v2 {
            let limit = min_along(&self.cgroup_root, cgroup, "memory.max")?;
            if limit.is_some() {
                return Ok(limit);
            }
        }
        match v1 {
            Some(cgroup) => {
                min_along(&self.cgroup_root.join("memory"), cgroup, "memory.limit_in_bytes")
            }
            None => Ok(None),
        }
    }

    /// `MemTotal` from `/proc/meminfo`, in bytes.
    pub fn total_ram_bytes(&self) -> Result<u64> {
        let path = self.proc_root.join("meminfo");
        let text = std::fs::read_to_string(&path).map_err(|e| probe_error(&path, e))?;
        parse_meminfo_total(&text).ok_or_else(|| probe_error(&path, "no valid MemTotal line"))
    }
}

impl MemoryProbe for ProcessMemoryProbe {
    fn used_bytes(&self) -> Result<u64> {
        let path = self.proc_root.join("self/statm");
        let text = std::fs::read_to_string(&path).map_err(|e| probe_error(&path, e))?;
        let pages =
            parse_statm_resident(&text).ok_or_else(|| probe_error(&path, "malformed statm"))?;
        Ok(pages.saturating_mul(self.page_size))
    }

    fn limit_bytes(&self) -> Result<u64> {
        let total = self.total_ram_bytes()?;
        Ok(match self.cgroup_limit_bytes()? {
            Some(cgroup) => cgroup.min(total),
            None => total,
        })
    }
}

/// The default probe: [`ProcessMemoryProbe`] where `/proc` is readable, with a configured
/// limit (`memory-limit`) taking the place of the system's when set. Without `/proc` (macOS,
/// BSDs) the configured limit is the limit and RSS reads as 0 (unknown), logged once; without
/// either, building fails with an error that names `memory-limit`.
#[derive(Debug)]
pub struct SystemMemoryProbe {
    proc: ProcessMemoryProbe,
    configured_limit: u64,
    warned: std::sync::atomic::AtomicBool,
}

impl SystemMemoryProbe {
    /// The probe of this process; `configured_limit` 0 reads the limit from the system.
    pub fn new(configured_limit: u64) -> Self {
        Self::over(ProcessMemoryProbe::new(), configured_limit)
    }

    /// Over `proc` (for tests: a `ProcessMemoryProbe` with other roots).
    pub fn over(proc: ProcessMemoryProbe, configured_limit: u64) -> Self {
        SystemMemoryProbe {
            proc,
            configured_limit,
            warned: std::sync::atomic::AtomicBool::new(false),
        }
    }
}

impl MemoryProbe for SystemMemoryProbe {
    fn used_bytes(&self) -> Result<u64> {
        match self.proc.used_bytes() {
            Ok(used) => Ok(used),
            Err(e) if self.configured_limit > 0 => {
                if !self.warned.swap(true, Ordering::Relaxed) {
                    tracing::warn!(error = %e, "process RSS cannot be read here: the cop-limiter sees no memory pressure");
                }
                Ok(0)
            }
            Err(e) => Err(e),
        }
    }

    fn limit_bytes(&self) -> Result<u64> {
        if self.configured_limit > 0 {
            return Ok(self.configured_limit);
        }
        self.proc.limit_bytes().map_err(|e| match e {
            Error::MemoryProbe { path, reason } => Error::MemoryProbe {
                path,
                reason: format!(
                    "{reason} (no cgroup or /proc memory limit here: set `memory-limit`)"
                ),
            },
            other => other,
        })
    }
}

fn probe_error(path: &Path, reason: impl fmt::Display) -> Error {
    Error::MemoryProbe { path: path.to_owned(), reason: reason.to_string() }
}

/// The smallest limit in `file` found in the cgroup directory of `cgroup` under `root` and in
/// its ancestors up to `root` (a parent's limit binds its children too).
fn min_along(root: &Path, cgroup: &str, file: &str) -> Result<Option<u64>> {
    let mut dir = root.to_owned();
    // Only plain names: `/proc` is trusted, but a `..` must still not leave `root`.
    let names: Vec<_> = Path::new(cgroup)
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect();
    let mut dirs = vec![dir.clone()];
    for name in names {
        dir.push(name);
        dirs.push(dir.clone());
    }
    let mut limit: Option<u64> = None;
    for dir in dirs {
        let path = dir.join(file);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(_) => continue,
        };
        let value =
            parse_cgroup_limit(&text).ok_or_else(|| probe_error(&path, "malformed limit"))?;
        if let Some(value) = value {
            limit = Some(limit.map_or(value, |l| l.min(value)));
        }
    }
    Ok(limit)
}

/// The resident-pages field (the second) of `/proc/<pid>/statm`.
fn parse_statm_resident(text: &str) -> Option<u64> {
    text.split_ascii_whitespace().nth(1)?.parse().ok()
}

/// `MemTotal:  16318712 kB` → bytes.
fn parse_meminfo_total(text: &str) -> Option<u64> {
    let line = text.lines().find_map(|l| l.strip_prefix("MemTotal:"))?;
    let mut fields = line.split_ascii_whitespace();
    let value: u64 = fields.next()?.parse().ok()?;
    match fields.next() {
        Some("kB") => value.checked_mul(1024),
        None => Some(value),
        Some(_) => None,
    }
}

/// A cgroup limit file: `max` (v2, no limit) or a byte count. `None` inside means no limit.
fn parse_cgroup_limit(text: &str) -> Option<Option<u64>> {
    match text.trim() {
        "max" => Some(None),
        n => n.parse().ok().map(Some),
    }
}

/// `AT_PAGESZ` from a native-endian auxiliary vector of word pairs.
fn page_size_from_auxv(auxv: &[u8]) -> Option<u64> {
    const WORD: usize = size_of::<usize>();
    let word = |bytes: &[u8]| -> Option<u64> {
        let array: [u8; WORD] = bytes.try_into().ok()?;
        u64::try_from(usize::from_ne_bytes(array)).ok()
    };
    auxv.chunks_exact(2 * WORD).find_map(|pair| {
        let (key, value) = pair.split_at(WORD);
        (word(key)? == AT_PAGESZ).then(|| word(value)).flatten().filter(|&p| p > 0)
    })
}

/// A probe that reports whatever the test sets.
#[derive(Debug)]
pub struct ManualMemoryProbe {
    used: AtomicU64,
    limit: AtomicU64,
}

impl ManualMemoryProbe {
    /// A probe reporting `used` bytes in use out of `limit`.
    pub fn new(used: u64, limit: u64) -> Self {
        ManualMemoryProbe { used: AtomicU64::new(used), limit: AtomicU64::new(limit) }
    }

    /// Sets the bytes in use.
    pub fn set_used(&self, used: u64) {
        self.used.store(used, Ordering::Relaxed);
    }

    /// Sets the memory limit.
    pub fn set_limit(&self, limit: u64) {
        self.limit.store(limit, Ordering::Relaxed);
    }
}

impl MemoryProbe for ManualMemoryProbe {
    fn used_bytes(&self) -> Result<u64> {
        Ok(self.used.load(Ordering::Relaxed))
    }

    fn limit_bytes(&self) -> Result<u64> {
        Ok(self.limit.load(Ordering::Relaxed))
    }
}

/// The process's memory as the limiters see it: the limit (read once) and the latest usage
/// sample, refreshed by a sampler ([`MemoryMonitor::spawn_sampler`] on a tokio runtime,
/// [`MemoryMonitor::start_sampler_thread`] without one) so the admission path reads an atomic
/// instead of a file.
#[derive(Debug)]
pub struct MemoryMonitor {
    probe: Arc<dyn MemoryProbe>,
    used: AtomicU64,
    limit: u64,
}

impl MemoryMonitor {
    /// Reads the limit and a first usage sample from `probe`.
    pub fn new(probe: Arc<dyn MemoryProbe>) -> Result<Self> {
        let limit = probe.limit_bytes()?;
        let used = probe.used_bytes()?;
        Ok(MemoryMonitor { probe, used: AtomicU64::new(used), limit })
    }

    /// The memory limit in bytes.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// The latest usage sample in bytes.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    /// Samples the probe now and returns the usage; if the probe fails, the previous sample
    /// stays (a transient `/proc` error must not read as "no memory used").
    pub fn refresh(&self) -> u64 {
        match self.probe.used_bytes() {
            Ok(used) => {
                self.used.store(used, Ordering::Relaxed);
                used
            }
            Err(_) => self.used(),
        }
    }

    /// Refreshes the sample every `interval` on `clock`, forever; spawn it and abort the task
    /// (or drop the future) to stop.
    pub async fn run_sampler(&self, clock: &dyn Clock, interval: Duration) {
        loop {
            clock.sleep(interval).await;
            self.refresh();
        }
    }

    /// Spawns [`MemoryMonitor::run_sampler`] every [`MEMORY_SAMPLE_INTERVAL`] on the current
    /// tokio runtime; the sampler stops when the handle is dropped.
    pub fn spawn_sampler(self: &Arc<Self>, clock: Arc<dyn Clock>) -> SamplerHandle {
        let monitor = Arc::clone(self);
        let task = tokio::spawn(async move {
            monitor.run_sampler(clock.as_ref(), MEMORY_SAMPLE_INTERVAL).await;
        });
        SamplerHandle { task }
    }
}

impl MemoryMonitor {
    /// Starts a thread named `rcop-mem-sampler` that refreshes the sample every `interval`
    /// (at least 1 ms) of real time; no tokio runtime is needed. Dropping the returned handle
    /// wakes the thread at once and joins it.
    ///
    /// # Errors
    ///
    /// [`Error::SamplerThread`] if the OS refuses a new thread.
    pub fn start_sampler_thread(self: &Arc<Self>, interval: Duration) -> Result<SamplerThread> {
        let interval = interval.max(MIN_THREAD_INTERVAL);
        let (stop, stopped) = mpsc::channel::<()>();
        let monitor = Arc::clone(self);
        let thread = std::thread::Builder::new()
            .name(SAMPLER_THREAD_NAME.to_owned())
            .spawn(move || {
                // Dropping the sender disconnects the channel and ends the wait at once.
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(interval) {
                    monitor.refresh();
                }
            })
            .map_err(Error::SamplerThread)?;
        Ok(SamplerThread { stop: Some(stop), thread: Some(thread) })
    }
}

/// The thread of [`MemoryMonitor::start_sampler_thread`]; dropping it stops the thread and
/// waits for it to finish (at most one probe read, never a whole interval).
#[derive(Debug)]
#[must_use = "the sampler thread stops as soon as this is dropped"]
pub struct SamplerThread {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl SamplerThread {
    /// The sampler's thread.
    pub fn thread(&self) -> Option<&std::thread::Thread> {
        self.thread.as_ref().map(JoinHandle::thread)
    }
}

impl Drop for SamplerThread {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            // A probe that panicked already ended the thread; nothing more to stop.
            let _ = thread.join();
        }
    }
}

/// Stops the background sampler when dropped.
#[derive(Debug)]
pub struct SamplerHandle {
    task: tokio::task::JoinHandle<()>,
}

impl Drop for SamplerHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;

    #[test]
    fn parsers() {
        assert_eq!(parse_statm_resident("1000 250 100 1 0 300 0\n"), Some(250));
        assert_eq!(parse_statm_resident("1000"), None);
        assert_eq!(parse_statm_resident("1000 x"), None);
        assert_eq!(
            parse_meminfo_total("MemTotal:       16318712 kB\nMemFree: 1 kB\n"),
            Some(16_318_712 * 1024)
        );
        assert_eq!(parse_meminfo_total("MemFree: 1 kB\n"), None);
        assert_eq!(parse_cgroup_limit("max\n"), Some(None));
        assert_eq!(parse_cgroup_limit("1073741824\n"), Some(Some(1 << 30)));
        assert_eq!(parse_cgroup_limit("lots"), None);
        let mut auxv = Vec::new();
        for (k, v) in [(33usize, 7usize), (AT_PAGESZ as usize, 16384), (0, 0)] {
            auxv.extend_from_slice(&k.to_ne_bytes());
            auxv.extend_from_slice(&v.to_ne_bytes());
        }
        assert_eq!(page_size_from_auxv(&auxv), Some(16384));
        assert_eq!(page_size_from_auxv(&auxv[..8]), None);
    }

    /// A throwaway directory tree under the system temp dir.
    struct Tree(PathBuf);

    impl Tree {
        fn new(name: &str) -> Self {
            let dir = std::env::temp_dir().join(format!(
                "rcop-limiter-{name}-{}-{:x}",
                std::process::id(),
                fastrand::u64(..)
            ));
            std::fs::create_dir_all(&dir).unwrap();
            Tree(dir)
        }

        fn write(&self, rel: &str, text: &str) {
            let path = self.0.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }

    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn fake_proc(tree: &Tree, cgroup: &str) {
        tree.write("proc/self/statm", "5000 300 10 1 0 100 0\n");
        tree.write("proc/meminfo", "MemTotal:        8388608 kB\n");
        tree.write("proc/self/cgroup", cgroup);
    }

    #[test]
    fn cgroup_v2_limit_is_the_smallest_along_the_path() {
        let tree = Tree::new("v2");
        fake_proc(&tree, "0::/a/b\n");
        tree.write("cg/a/memory.max", "2147483648\n");
        tree.write("cg/a/b/memory.max", "max\n");
        let probe = ProcessMemoryProbe::with_roots(tree.0.join("proc"), tree.0.join("cg"));
        assert_eq!(probe.cgroup_limit_bytes().unwrap(), Some(2 << 30));
        assert_eq!(probe.limit_bytes().unwrap(), 2 << 30);
        assert_eq!(probe.used_bytes().unwrap(), 300 * DEFAULT_PAGE_SIZE);
    }

    #[test]
    fn cgroup_v1_and_no_cgroup_fall_back() {
        let tree = Tree::new("v1");
        fake_proc(&tree, "12:cpu,cpuacct:/x\n9:memory:/x\n0::/\n");
        tree.write("cg/memory/x/memory.limit_in_bytes", "1073741824\n");
        let probe = ProcessMemoryProbe::with_roots(tree.0.join("proc"), tree.0.join("cg"));
        assert_eq!(probe.limit_bytes().unwrap(), 1 << 30);
        // v1 "unlimited" is a huge number: total RAM wins.
        tree.write("cg/memory/x/memory.limit_in_bytes", "9223372036854771712\n");
        assert_eq!(probe.limit_bytes().unwrap(), 8 << 30);
        // No cgroup at all.
        tree.write("proc/self/cgroup", "");
        assert_eq!(probe.cgroup_limit_bytes().unwrap(), None);
        assert_eq!(probe.limit_bytes().unwrap(), 8 << 30);
        // A garbage limit file is an error naming the file.
        tree.write("proc/self/cgroup", "9:memory:/x\n");
        tree.write("cg/memory/x/memory.limit_in_bytes", "lots\n");
        let err = probe.limit_bytes().unwrap_err().to_string();
        assert!(err.contains("memory.limit_in_bytes"), "{err}");
    }

    /// Where `/proc` and cgroups are absent, the configured limit stands in and RSS reads as
    /// unknown (0); without a configured limit the error names `memory-limit`. Where they are
    /// present, a configured limit takes the system's place.
    #[test]
    fn without_proc_the_configured_limit_stands_in() {
        let empty = Tree::new("no-proc");
        let bare = || ProcessMemoryProbe::with_roots(empty.0.join("proc"), empty.0.join("cg"));
        let e = SystemMemoryProbe::over(bare(), 0).limit_bytes().unwrap_err();
        assert!(e.to_string().contains("memory-limit"), "{e}");
        assert!(SystemMemoryProbe::over(bare(), 0).used_bytes().is_err());
        let p = SystemMemoryProbe::over(bare(), 4 << 30);
        assert_eq!((p.limit_bytes().unwrap(), p.used_bytes().unwrap()), (4 << 30, 0));
        let monitor = MemoryMonitor::new(Arc::new(p)).unwrap();
        assert_eq!((monitor.limit(), monitor.used()), (4 << 30, 0));
        if std::path::Path::new("/proc/self/statm").exists() {
            let real = SystemMemoryProbe::new(123 << 20);
            assert_eq!(real.limit_bytes().unwrap(), 123 << 20);
            assert!(real.used_bytes().unwrap() > 0);
        }
    }

    #[test]
    fn real_probe_reads_sane_values() {
        let probe = ProcessMemoryProbe::new();
        let page = probe.page_size();
        assert!(page >= 4096 && page.is_power_of_two(), "{page}");
        let used = probe.used_bytes().unwrap();
        let limit = probe.limit_bytes().unwrap();
        assert!(used > 0 && limit > 0 && used < limit, "used {used} limit {limit}");
        assert!(limit <= probe.total_ram_bytes().unwrap());
        // statm agrees with VmRSS of /proc/self/status (within a factor, memory moves).
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let vm_rss_kb: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|l| l.split_ascii_whitespace().next())
            .unwrap()
            .parse()
            .unwrap();
        let vm_rss = vm_rss_kb * 1024;
        assert!(used / 2 < vm_rss && vm_rss < used * 2, "statm {used} VmRSS {vm_rss}");
    }

    /// A probe that counts its reads and remembers the thread of the last one.
    #[derive(Debug, Default)]
    struct CountingProbe {
        used: AtomicU64,
        reads: AtomicU64,
        thread: std::sync::Mutex<Option<String>>,
    }

    impl MemoryProbe for CountingProbe {
        fn used_bytes(&self) -> Result<u64> {
            self.reads.fetch_add(1, Ordering::SeqCst);
            *self.thread.lock().unwrap() = std::thread::current().name().map(str::to_owned);
            Ok(self.used.load(Ordering::SeqCst))
        }

        fn limit_bytes(&self) -> Result<u64> {
            Ok(1000)
        }
    }

    /// Polls `condition` every millisecond for up to 5 s; true if it became true.
    fn eventually(condition: impl Fn() -> bool) -> bool {
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            if condition() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        condition()
    }

    #[test]
    fn sampler_thread_follows_the_probe_without_a_runtime_and_stops_on_drop() {
        let probe = Arc::new(CountingProbe::default());
        probe.used.store(10, Ordering::SeqCst);
        let monitor = Arc::new(MemoryMonitor::new(probe.clone()).unwrap());
        let interval = Duration::from_millis(5);
        let sampler = monitor.start_sampler_thread(interval).unwrap();
        assert_eq!(sampler.thread().and_then(|t| t.name()), Some(SAMPLER_THREAD_NAME));

        for used in [50, 70, 20] {
            let start = std::time::Instant::now();
            probe.used.store(used, Ordering::SeqCst);
            assert!(eventually(|| monitor.used() == used), "sample never became {used}");
            // Generous for a loaded CI machine; typically one interval.
            assert!(start.elapsed() < Duration::from_secs(2), "{:?}", start.elapsed());
        }
        assert_eq!(probe.thread.lock().unwrap().as_deref(), Some(SAMPLER_THREAD_NAME));

        drop(sampler);
        let reads = probe.reads.load(Ordering::SeqCst);
        probe.used.store(99, Ordering::SeqCst);
        std::thread::sleep(interval * 10);
        assert_eq!(probe.reads.load(Ordering::SeqCst), reads, "no read after the drop");
        assert_eq!(monitor.used(), 20);
    }

    #[test]
    fn dropping_the_sampler_thread_does_not_wait_out_the_interval() {
        let monitor = Arc::new(MemoryMonitor::new(Arc::new(ManualMemoryProbe::new(1, 2))).unwrap());
        let sampler = monitor.start_sampler_thread(Duration::from_secs(60)).unwrap();
        std::thread::sleep(Duration::from_millis(10));
        let start = std::time::Instant::now();
        drop(sampler);
        assert!(start.elapsed() < Duration::from_secs(1), "join took {:?}", start.elapsed());
        assert_eq!(Arc::strong_count(&monitor), 1, "the thread released the monitor");
        // A zero interval is raised to 1 ms rather than spinning; it still stops on drop.
        let sampler = monitor.start_sampler_thread(Duration::ZERO).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        drop(sampler);
    }

    #[tokio::test]
    async fn monitor_samples_on_the_clock_and_keeps_the_last_value() {
        let probe = Arc::new(ManualMemoryProbe::new(10, 100));
        let monitor = Arc::new(MemoryMonitor::new(probe.clone()).unwrap());
        assert_eq!((monitor.used(), monitor.limit()), (10, 100));
        let clock = Arc::new(ManualClock::new());
        let _sampler = monitor.spawn_sampler(clock.clone());
        probe.set_used(50);
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert_eq!(monitor.used(), 10, "not sampled before the interval");
        clock.advance(MEMORY_SAMPLE_INTERVAL);
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert_eq!(monitor.used(), 50);
        assert_eq!(clock.sleeps()[0], MEMORY_SAMPLE_INTERVAL);
    }
}
