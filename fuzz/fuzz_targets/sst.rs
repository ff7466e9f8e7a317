//! SST and L0 files from untrusted bytes: open, scan, point gets and old versions. Every
//! read returns data or an error, never a panic. (Key order is not asserted: a file whose
//! footer says "no checksum" can carry any block content, which only a checksum could catch.)
#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use rcop_sst::{FileId, InMemory, L0Table, Table};

fn scan(table: &Table<InMemory>) {
    let mut it = table.iter();
    if it.seek_to_first().is_err() {
        return;
    }
    let mut n = 0;
    while it.valid() && n < 10_000 {
        let key = it.key().to_vec();
        let _ = it.value();
        let _ = it.value_at(u64::MAX / 2);
        let _ = table.get(&key, u64::MAX);
        n += 1;
        if it.next().is_err() {
            break;
        }
    }
    let _ = table.get(b"", 0);
}

fuzz_target!(|data: &[u8]| {
    let bytes = Bytes::copy_from_slice(data);
    if let Ok(table) = Table::open_in_memory(FileId(7), bytes.clone()) {
        scan(&table);
    }
    if let Ok(l0) = L0Table::open(FileId(8), bytes) {
        for cf in 0..3 {
            if let Some(t) = l0.cf(cf) {
                scan(t);
            }
        }
    }
});
