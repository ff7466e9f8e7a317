//! TiKV lock records (lock CF values) from untrusted bytes: decode, and whatever decodes
//! re-encodes and decodes to the same lock.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rcop_snap::Lock;

fuzz_target!(|data: &[u8]| {
    if let Ok(lock) = Lock::decode(data) {
        if let Ok(again) = lock.encode() {
            let back = Lock::decode(&again).expect("re-encoded lock decodes");
            assert_eq!(back, lock);
        }
        let _ = lock.to_lock_info(b"k");
    }
});
