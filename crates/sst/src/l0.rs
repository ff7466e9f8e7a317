//! L0 files: one SST per column family (write, lock, extra) concatenated, then the column
//! families' start offsets and a 16-byte footer.
//!
//! ```text
//! SST(write) | SST(lock) | SST(extra) | 3 × u32 cf start offset | u64 snap_version | u32 num_cfs (=3) | u32 magic
//! ```
//!
//! Each SST is a complete table (uncompressed); a column family without data has a
//! zero-length SST (its start equals the next one's).

use std::sync::Arc;

use bytes::Bytes;

use crate::builder::{BuilderOptions, TableBuilder};
use crate::codec::{Cursor, put_u32, put_u64};
use crate::error::{CorruptKind, Error, Result};
use crate::footer::MAGIC;
use crate::table::{InMemory, Table, TableMeta};
use crate::types::{Compression, FileId, NewValue};

/// Number of column families in an L0 file.
pub const NUM_CFS: usize = 3;
/// Size of the L0 footer (`u64 snap_version | u32 num_cfs | u32 magic`).
pub const L0_FOOTER_SIZE: usize = 16;
/// Magic of the L0 footer (the reference leaves it open; we reuse the SST magic).
pub const L0_MAGIC: u32 = MAGIC;

/// Column family index of the write CF.
pub const CF_WRITE: usize = 0;
/// Column family index of the lock CF.
pub const CF_LOCK: usize = 1;
/// Column family index of the extra CF.
pub const CF_EXTRA: usize = 2;

/// Builds an L0 file.
#[derive(Debug)]
pub struct L0Builder {
    file_id: FileId,
    snap_version: u64,
    cfs: [TableBuilder; NUM_CFS],
}

impl L0Builder {
    /// A builder for file `file_id` flushed at `snap_version`. `opts.compression` is
    /// ignored: L0 tables are stored uncompressed.
    pub fn new(file_id: FileId, snap_version: u64, opts: BuilderOptions) -> Self {
        let opts = BuilderOptions { compression: Compression::None, ..opts };
        L0Builder {
            file_id,
            snap_version,
            cfs: std::array::from_fn(|_| TableBuilder::new(file_id, opts)),
        }
    }

    /// Adds a version of `key` to column family `cf` (`< NUM_CFS`), with the ordering rules
    /// of [`TableBuilder::add`].
    pub fn add(&mut self, cf: usize, key: &[u8], v: &NewValue<'_>) -> Result<()> {
        self.cfs
            .get_mut(cf)
            .ok_or_else(|| Error::InvalidInput {
                reason: format!("column family {cf} out of range"),
            })?
            .add(key, v)
    }

    /// The file id being written.
    pub fn file_id(&self) -> FileId {
        self.file_id
    }

    /// Finishes the file and returns its bytes.
    pub fn finish(self) -> Result<Bytes> {
        let mut out = Vec::new();
        let mut starts = [0u32; NUM_CFS];
        for (i, b) in self.cfs.into_iter().enumerate() {
            starts[i] = u32::try_from(out.len())
                .map_err(|_| Error::InvalidInput { reason: "L0 file larger than 4 GiB".into() })?;
            if !b.is_empty() {
                out.extend_from_slice(&b.finish()?);
            }
        }
        for s in starts {
            put_u32(&mut out, s);
        }
        put_u64(&mut out, self.snap_version);
        put_u32(&mut out, NUM_CFS as u32);
        put_u32(&mut out, L0_MAGIC);
        Ok(Bytes::from(out))
    }
}

/// A decoded L0 file held in memory.
#[derive(Debug, Clone)]
pub struct L0Table {
    file_id: FileId,
    snap_version: u64,
    cfs: [Option<Table<InMemory>>; NUM_CFS],
}

impl L0Table {
    /// Decodes an L0 file.
    pub fn open(file_id: FileId, data: Bytes) -> Result<Self> {
        let len = data.len() as u64;
        let tail = NUM_CFS * 4 + L0_FOOTER_SIZE;
        let tail_start = data.len().checked_sub(tail).ok_or_else(|| {
            Error::corrupt(file_id, 0, CorruptKind::Truncated, "L0 file shorter than its footer")
        })?;
        let mut c = Cursor::new(&data[tail_start..], file_id, tail_start as u64);
        let mut starts = [0u32; NUM_CFS];
        for s in &mut starts {
            *s = c.u32("L0 cf offset")?;
        }
        let snap_version = c.u64("L0 snap version")?;
        let num_cfs = c.u32("L0 cf count")?;
        let magic = c.u32("L0 magic")?;
        let footer_at = len - L0_FOOTER_SIZE as u64;
        if magic != L0_MAGIC {
            return Err(Error::corrupt(
                file_id,
                footer_at,
                CorruptKind::BadMagic,
                "L0 footer magic",
            ));
        }
        if num_cfs as usize != NUM_CFS {
            return Err(Error::corrupt(
                file_id,
                footer_at,
                CorruptKind::Unsupported,
                "L0 column family count",
            ));
        }
        let mut cfs: [Option<Table<InMemory>>; NUM_CFS] = Default::default();
        for i in 0..NUM_CFS {
            let s = starts[i] as usize;
            let e = starts.get(i + 1).map_or(tail_start, |&e| e as usize);
            if s > e || e > tail_start {
                return Err(Error::corrupt(
                    file_id,
                    tail_start as u64,
                    CorruptKind::OutOfBounds,
                    "L0 cf offsets",
                ));
            }
            if s == e {
                continue;
            }
            let sst = data.slice(s..e);
            let meta = TableMeta::from_tail(file_id, starts[i], sst.clone(), 0, sst.len() as u64)?;
            cfs[i] = Some(Table::new(Arc::new(meta), InMemory::new(sst)));
        }
        Ok(L0Table { file_id, snap_version, cfs })
    }

    /// The file id.
    pub fn file_id(&self) -> FileId {
        self.file_id
    }

    /// The snapshot version the file was flushed at.
    pub fn snap_version(&self) -> u64 {
        self.snap_version
    }

    /// The table of column family `cf`, `None` when it has no data.
    pub fn cf(&self, cf: usize) -> Option<&Table<InMemory>> {
        self.cfs.get(cf).and_then(Option::as_ref)
    }
}
