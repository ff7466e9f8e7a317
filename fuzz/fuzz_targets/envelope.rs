//! The worker's whole decode path for an offload body: envelope, request, mem-data rows,
//! TxnFileRefs and ChangeSet. Whatever decodes must re-encode to an equivalent body.
#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use rcop_wire::{Envelope, encode_raw_envelope_into};

fuzz_target!(|data: &[u8]| {
    let Ok(env) = Envelope::decode(Bytes::copy_from_slice(data)) else {
        return;
    };
    let parts = env.request_bytes().len()
        + env.mem_data_bytes().len()
        + env.change_set_bytes().len()
        + env.trailing_len();
    assert_eq!(parts + 16, data.len());
    let _ = env.decode_request();
    let _ = env.decode_change_set();
    if let Ok(mem) = env.decode_mem_data() {
        let rows = mem.rows();
        let (mut keys, mut values) = (0, 0);
        for row in rows.iter() {
            keys += row.key.len();
            values += row.value.len();
        }
        assert_eq!((keys, values), (rows.key_bytes(), rows.value_bytes()));
        let _ = mem.decode_txn_file_refs();
    }
    // Re-encoding the three parts gives back the body without its trailing bytes.
    let mut out = Vec::new();
    encode_raw_envelope_into(
        env.request_bytes(),
        env.mem_data_bytes(),
        env.change_set_bytes(),
        &mut out,
    )
    .expect("parts that decoded fit in u32 lengths");
    assert_eq!(&out[..], &data[..data.len() - env.trailing_len()]);
});
