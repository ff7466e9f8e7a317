//! LZ4 block decode including the checksum (target: ≥ 1.5 GB/s of decoded bytes).
#![expect(clippy::unwrap_used, reason = "benchmark fixtures are known-valid")]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rcop_sst::{Compression, FileId, Section, TableMeta};

mod common;

fn decode(c: &mut Criterion) {
    let mut g = c.benchmark_group("block_decode");
    for compression in [
        Compression::Lz4,
        #[cfg(feature = "zstd")]
        Compression::Zstd,
        Compression::None,
    ] {
        let file = common::table(2_000, compression);
        let meta = TableMeta::from_table(FileId(1), &file).unwrap();
        let h = meta.block_handle(Section::Data, 1);
        let stored = file.slice(h.offset as usize..(h.offset + h.len) as usize);
        let decoded = meta.decode_block(h, &stored).unwrap().size();
        g.throughput(Throughput::Bytes(decoded as u64));
        // Checksum + decompression + validation of every entry offset, length and order.
        g.bench_function(format!("{compression:?}_64KiB_checked"), |b| {
            b.iter(|| black_box(meta.decode_block(h, black_box(&stored)).unwrap().len()))
        });
    }
    g.finish();
}

criterion_group!(benches, decode);
criterion_main!(benches);
