//! Shared bench fixtures.

use bytes::Bytes;
use rcop_sst::{BuilderOptions, Compression, FileId, NewValue, TableBuilder};

/// A table of `n` keys with 100-byte values in 64 KiB blocks.
pub fn table(n: u32, compression: Compression) -> Bytes {
    let mut b =
        TableBuilder::new(FileId(1), BuilderOptions::default().with_compression(compression));
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut value = [0u8; 100];
    for i in 0..n {
        for c in value.iter_mut() {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            // Half random, half repeated: compresses roughly like row data.
            *c = if (x >> 63) == 0 { b'a' } else { (x >> 56) as u8 };
        }
        b.add(
            &key(i),
            &NewValue { meta: 0, version: 400_000 + u64::from(i), user_meta: &[1], value: &value },
        )
        .unwrap();
    }
    b.finish().unwrap()
}

/// A TiDB-like record key `t{table id}_r{handle}` for row `i`.
pub fn key(i: u32) -> Vec<u8> {
    let mut k = b"t\x80\x00\x00\x00\x00\x00\x00\x2a_r".to_vec();
    k.extend_from_slice(format!("{i:010}").as_bytes());
    k
}
