//! File operations of the disk cache. Every function here blocks: callers run them on
//! tokio's blocking pool (or the collector's own thread), never on the async runtime.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use bytes::Bytes;

use super::format::trailer;

/// Bytes the cache's files take on disk, and an optional simulated filesystem size (a test
/// hook for "disk full" without mounting anything: a write that would take the files past
/// it fails with `StorageFull`, as a full filesystem would).
#[derive(Debug, Default)]
pub(crate) struct Usage {
    pub(crate) bytes: AtomicU64,
    pub(crate) limit: Option<u64>,
}

impl Usage {
    fn charge(&self, n: u64) -> io::Result<()> {
        let Some(limit) = self.limit else {
            self.bytes.fetch_add(n, Ordering::Relaxed);
            return Ok(());
        };
        self.bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                b.checked_add(n).filter(|&t| t <= limit)
            })
            .map(|_| ())
            .map_err(|_| io::Error::new(io::ErrorKind::StorageFull, "no space left on device"))
    }

    pub(crate) fn release(&self, n: u64) {
        let _ = self
            .bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| Some(b.saturating_sub(n)));
    }
}

/// Writes `payload` + trailer as `dir/name`: to `name.{seq}.tmp`, fsync, rename.
pub(crate) fn write_atomic(
    dir: &Path,
    name: &str,
    payload: &[u8],
    seq: u64,
    usage: &Usage,
) -> io::Result<()> {
    let t = trailer(payload);
    let total = payload.len() as u64 + t.len() as u64;
    usage.charge(total)?;
    let tmp = dir.join(format!("{name}.{seq}.tmp"));
    let res = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(payload)?;
        f.write_all(&t)?;
        f.sync_all()?;
        fs::rename(&tmp, dir.join(name))
    })();
    if res.is_err() {
        let _ = fs::remove_file(&tmp);
        usage.release(total);
    }
    res
}

/// Reads a whole file.
pub(crate) fn read(path: &Path) -> io::Result<Bytes> {
    fs::read(path).map(Bytes::from)
}

/// Removes a file of `len` bytes (missing is fine).
pub(crate) fn remove(path: &Path, len: u64, usage: &Usage) {
    match fs::remove_file(path) {
        Ok(()) => usage.release(len),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(_) => {}
    }
}

/// A directory entry.
#[derive(Debug)]
pub(crate) struct Found {
    pub(crate) path: PathBuf,
    pub(crate) name: String,
    pub(crate) len: u64,
    pub(crate) modified: SystemTime,
}

/// The regular files of `dir` (empty when it cannot be read).
pub(crate) fn list(dir: &Path) -> Vec<Found> {
    let Ok(rd) = fs::read_dir(dir) else { return Vec::new() };
    rd.filter_map(|e| {
        let e = e.ok()?;
        let md = e.metadata().ok()?;
        if !md.is_file() {
            return None;
        }
        Some(Found {
            path: e.path(),
            name: e.file_name().into_string().ok()?,
            len: md.len(),
            modified: md.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        })
    })
    .collect()
}

/// Size of the filesystem holding `dir`, in bytes.
pub(crate) fn filesystem_size(dir: &Path) -> io::Result<u64> {
    let s = rustix::fs::statvfs(dir).map_err(io::Error::from)?;
    Ok(s.f_blocks.saturating_mul(s.f_frsize))
}

/// Creates `dir` and checks that a file can be written in it.
pub(crate) fn ensure_writable(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    let probe = dir.join(".probe.tmp");
    fs::write(&probe, b"ok")?;
    fs::remove_file(probe)
}
