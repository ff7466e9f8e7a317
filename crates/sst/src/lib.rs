//! SST files of the cloud storage engine: formats, object storage and caches.
//!
//! This crate writes and reads the engine's SST v1 files and L0 files, fetches them from
//! object storage with ranged reads, and keeps decompressed blocks and per-file metadata
//! in memory.
//!
//! # Cargo features
//!
//! All on by default. An embedder that only writes and reads files (a storage node) can
//! turn them off and keep every format, `Table`, `L0Table`, `InMemory` and the caches.
//!
//! - `object-store`: `SstStore` (local-directory and memory backends), `StoreConfig`,
//!   `Backend`, `object_key`, and `SstReader` with its prefetch; brings in `object_store`
//!   and `tokio`.
//! - `s3`: the S3 backend (`object_store`'s `aws`: reqwest, hyper, rustls); implies
//!   `object-store`. Without it, `Backend::S3` is an `Error::Config`.
//! - `zstd`: Zstd blocks (libzstd). Without it, writing or reading a Zstd block is an
//!   `Error::Unsupported` naming the feature, and `BuilderOptions::for_level` picks LZ4
//!   where upstream uses Zstd.
//!
//! ```
//! use rcop_sst::{BuilderOptions, FileId, NewValue, Table, TableBuilder};
//!
//! let mut b = TableBuilder::new(FileId(1), BuilderOptions::for_level(1));
//! b.add(b"k1", &NewValue { meta: 0, version: 20, user_meta: &[], value: b"new" })?;
//! b.add(b"k1", &NewValue { meta: 0, version: 10, user_meta: &[], value: b"old" })?;
//! b.add(b"k2", &NewValue { meta: 0, version: 15, user_meta: &[], value: b"v2" })?;
//! let table = Table::open_in_memory(FileId(1), b.finish()?)?;
//!
//! // Point get at a read ts finds the newest version not newer than it.
//! assert_eq!(table.get(b"k1", 12)?.map(|v| v.value), Some("old".into()));
//!
//! // Scan the latest versions.
//! let mut it = table.iter();
//! it.seek(b"k0")?;
//! let mut keys = Vec::new();
//! while it.valid() {
//!     keys.push(it.key().to_vec());
//!     it.next()?;
//! }
//! assert_eq!(keys, [b"k1".to_vec(), b"k2".to_vec()]);
//! # Ok::<(), rcop_sst::Error>(())
//! ```
//!
#![cfg_attr(
    feature = "object-store",
    doc = r#"
Reading from object storage goes through an [`SstReader`]: metadata is opened once per
file (metadata cache), the blocks that key ranges need are planned, reported (so memory can
be reserved), fetched with coalesced ranged reads and pinned, and the scan then runs
synchronously over the pinned blocks:

```
# use std::sync::Arc;
# use rcop_sst::*;
# async fn demo() -> rcop_sst::Result<()> {
let cfg = StoreConfig::default().with_backend(Backend::Memory); // or S3, Local
let store = Arc::new(SstStore::from_config(&cfg)?);
# let mut b = TableBuilder::new(FileId(7), BuilderOptions::for_level(1));
# for i in 0..1000u32 {
#     b.add(format!("k{i:04}").as_bytes(), &NewValue { meta: 0, version: 5, user_meta: &[], value: b"v" })?;
# }
# store.put(FileId(7), b.finish()?).await?;
let reader = SstReader::new(store, BlockCache::new(64 << 20), MetaCache::new(8 << 20), ReaderOptions::default());
let meta = reader.open(FileId(7), None).await?;
let plan = reader.plan_prefetch(&meta, &[(b"k0100", b"k0200")], false);
let _reserve = plan.bytes_needed(); // reserve memory before fetching
let table = Table::new(meta, reader.prefetch(plan).await?);
let mut it = table.iter();
it.seek(b"k0100")?;
assert_eq!(it.key(), b"k0100");
# Ok(())
# }
# tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
```

"#
)]
//! The format and the choices behind it are described in `docs/design/0003-sst-format.md`.

#![warn(missing_docs)]

mod block;
mod builder;
mod cache;
mod codec;
mod compress;
mod error;
mod filter;
mod footer;
#[cfg(feature = "object-store")]
pub mod ia;
mod index;
mod l0;
mod props;
#[cfg(feature = "object-store")]
mod remote;
#[cfg(feature = "object-store")]
mod store;
mod table;
pub mod txn;
mod types;

pub use block::{BLOCK_FORMAT_V1, Block, BlockRun};
pub use builder::{
    BuilderOptions, DEFAULT_BLOCK_SIZE, DEFAULT_MAX_TABLE_SIZE, DEFAULT_ZSTD_LEVEL, TableBuilder,
};
pub use cache::{BlockCache, CacheStats, MetaCache};
pub use compress::MAX_BLOCK_SIZE;
pub use error::{CorruptKind, CorruptReason, Error, Result, SharedSource};
pub use filter::{FILTER_BINARY_FUSE8, FILTER_NONE, key_hash};
pub use footer::{FOOTER_SIZE, Footer, MAGIC, MAGIC_SPLIT_L0, TABLE_FORMAT_VERSION};
#[cfg(feature = "object-store")]
pub use ia::{
    DiskCap, GcReport, IaCache, IaConfig, IaObserver, IaRequest, IaRequestStats, IaStats,
    LocalGcConfig,
};
pub use index::{BlockHandle, INDEX_FORMAT_V1};
pub use l0::{CF_EXTRA, CF_LOCK, CF_WRITE, L0_FOOTER_SIZE, L0_MAGIC, L0Builder, L0Table, NUM_CFS};
pub use props::Properties;
#[cfg(feature = "object-store")]
pub use remote::{
    BlockBudget, DEFAULT_MAX_CONCURRENT_READS, DEFAULT_MAX_READ_SIZE, DEFAULT_OPEN_READ_SIZE,
    LOCAL_MAX_READ_SIZE, PlannedRead, PrefetchPlan, Prefetched, ReaderOptions, RemoteCache,
    SstReader,
};
#[cfg(feature = "object-store")]
pub use store::{
    Backend, DEFAULT_LOCAL_ROOT, LATENCY_BOUNDS, LATENCY_BUCKETS, Latency, SstStore, StoreConfig,
    StoreStats, Tail, object_key,
};
pub use table::{BlockSource, InMemory, Section, Table, TableIter, TableMeta};
pub use types::{
    BIT_BLOB_REF, BIT_DELETE, BIT_HAS_OLD_VERSION, BlockKey, ChecksumType, Compression, FileId,
    NewValue, Value, ValueRef,
};
