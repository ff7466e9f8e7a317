//! Mem-data (v1/v2) and bare rows: decode, iterate, and re-encode to the same bytes.
#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use rcop_wire::{MemData, Rows, encode_rows_into};

fuzz_target!(|data: &[u8]| {
    let body = Bytes::copy_from_slice(data);
    if let Ok(mem) = MemData::decode(body.clone()) {
        for row in mem.rows().iter_bytes() {
            let _ = row.is_delete();
        }
        let _ = mem.decode_txn_file_refs();
    }
    if let Ok(rows) = Rows::decode(body) {
        let mut out = Vec::new();
        let n = encode_rows_into(rows.iter(), &mut out);
        assert_eq!(n as usize, rows.len());
        assert_eq!(&out[..], data, "rows re-encode byte for byte");
    }
});
