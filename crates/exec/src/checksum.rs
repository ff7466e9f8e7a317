//! The checksum request (`coprocessor.Request.tp` 105, tipb `ChecksumRequest`): what BR and
//! TiDB Lightning ask every region for after an import, to compare with the checksum of the
//! data they wrote.
//!
//! TiKV's definition, which the callers compare against: over every pair the ranges hold at
//! the read timestamp, `crc64_xz(old_prefix ‖ key[new_prefix.len()..] ‖ value)`, XOR-folded;
//! `total_kvs` counts the pairs and `total_bytes` their key and value bytes, as if each key
//! carried `old_prefix` instead of `new_prefix` (both empty without a rewrite rule). A key
//! that does not start with `new_prefix` is an error. Keys are as stored (with the keyspace
//! prefix in API v2), values the row or index values.

use crc_fast::{CrcAlgorithm, Digest};
use rcop_proto::tipb;

use crate::error::{Error, Result};
use crate::limits::{ExecLimits, Guard};
use crate::scan::{KeyRange, KvBatch, ScanSource, ScanStatus};

/// Pairs read per batch (the limits are checked between batches).
const BATCH: usize = 1024;

/// The checksum of what `ranges` hold in `source`, as TiKV computes it.
///
/// # Errors
///
/// An algorithm other than CRC64-XOR ([`Error::Unsupported`]-free: an invalid request), a
/// key outside the rewrite rule's `new_prefix`, a scan error, an [`Error::Aborted`] limit.
pub fn checksum(
    req: &tipb::ChecksumRequest,
    ranges: &[KeyRange],
    source: &mut dyn ScanSource,
    limits: &ExecLimits,
) -> Result<tipb::ChecksumResponse> {
    if req.algorithm.unwrap_or(0) != tipb::ChecksumAlgorithm::Crc64Xor as i32 {
        return Err(Error::invalid(format!(
            "unknown checksum algorithm {}",
            req.algorithm.unwrap_or(0)
        )));
    }
    let (old_prefix, new_prefix) = match &req.rule {
        Some(rule) => {
            (rule.old_prefix.as_deref().unwrap_or(&[]), rule.new_prefix.as_deref().unwrap_or(&[]))
        }
        None => (&[][..], &[][..]),
    };
    let mut prefixed = Digest::new(CrcAlgorithm::Crc64Xz);
    prefixed.update(old_prefix);
    let mut guard = Guard::new(limits);
    let (mut sum, mut kvs, mut bytes) = (0u64, 0u64, 0u64);
    let mut batch = KvBatch::new();
    for range in ranges {
        source.start(range, false)?;
        loop {
            guard.check()?;
            batch.clear();
            let status = source.next_batch(BATCH, &mut batch)?;
            for (key, value) in batch.iter() {
                let Some(suffix) = key.strip_prefix(new_prefix) else {
                    return Err(Error::invalid(format!(
                        "a key outside the rewrite rule's new prefix ({} bytes)",
                        new_prefix.len()
                    )));
                };
                let mut d = prefixed;
                d.update(suffix);
                d.update(value);
                sum ^= d.finalize();
                kvs += 1;
                bytes += (old_prefix.len() + suffix.len() + value.len()) as u64;
            }
            if status == ScanStatus::Done {
                break;
            }
        }
    }
    Ok(tipb::ChecksumResponse {
        checksum: Some(sum),
        total_kvs: Some(kvs),
        total_bytes: Some(bytes),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::MemStore;

    /// CRC-64/XZ bit by bit, from the catalogue's parameters (poly 0x42F0E1EBA9EA3693
    /// reflected, init and xorout all ones): independent of the table the crate uses.
    fn crc64_xz(data: &[u8]) -> u64 {
        let mut crc = u64::MAX;
        for &b in data {
            crc ^= u64::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 { (crc >> 1) ^ 0xC96C_5795_D787_0F42 } else { crc >> 1 };
            }
        }
        !crc
    }

    #[test]
    fn the_reference_crc_has_the_catalogue_check_value() {
        assert_eq!(crc64_xz(b"123456789"), 0x995D_C9BB_DF19_39FA);
        let mut d = Digest::new(CrcAlgorithm::Crc64Xz);
        d.update(b"1234");
        d.update(b"56789");
        assert_eq!(d.finalize(), 0x995D_C9BB_DF19_39FA);
    }

    fn store() -> MemStore {
        MemStore::from_pairs((0..3000u32).map(|i| {
            let key = format!("t_k{i:06}").into_bytes();
            (key, vec![u8::try_from(i % 251).unwrap_or(0); (i % 40) as usize])
        }))
    }

    #[test]
    fn equals_an_independent_crc_over_the_pairs_in_range() {
        let s = store();
        let ranges = [
            KeyRange::new(b"t_k000100".to_vec(), b"t_k001500".to_vec()),
            KeyRange::new(b"t_k002900".to_vec(), b"t_l".to_vec()),
        ];
        let got = checksum(
            &tipb::ChecksumRequest::default(),
            &ranges,
            &mut s.scanner(),
            &ExecLimits::default(),
        )
        .unwrap();
        let (mut sum, mut kvs, mut bytes) = (0, 0, 0);
        for i in (100..1500u32).chain(2900..3000) {
            let key = format!("t_k{i:06}").into_bytes();
            let value = vec![u8::try_from(i % 251).unwrap_or(0); (i % 40) as usize];
            sum ^= crc64_xz(&[key.as_slice(), &value].concat());
            kvs += 1;
            bytes += (key.len() + value.len()) as u64;
        }
        assert_eq!(
            (got.checksum, got.total_kvs, got.total_bytes),
            (Some(sum), Some(kvs), Some(bytes))
        );
    }

    #[test]
    fn a_rewrite_rule_checksums_the_old_prefix() {
        let s = store();
        let range = [KeyRange::new(b"t_k000000".to_vec(), b"t_k000010".to_vec())];
        let rule = tipb::ChecksumRewriteRule {
            old_prefix: Some(b"OLD-".to_vec().into()),
            new_prefix: Some(b"t_".to_vec().into()),
        };
        let req = tipb::ChecksumRequest { rule: Some(rule), ..Default::default() };
        let got = checksum(&req, &range, &mut s.scanner(), &ExecLimits::default()).unwrap();
        let (mut sum, mut bytes) = (0, 0);
        for i in 0..10u32 {
            let value = vec![u8::try_from(i % 251).unwrap_or(0); (i % 40) as usize];
            let rewritten = [format!("OLD-k{i:06}").as_bytes(), &value].concat();
            sum ^= crc64_xz(&rewritten);
            bytes += rewritten.len() as u64;
        }
        assert_eq!(
            (got.checksum, got.total_kvs, got.total_bytes),
            (Some(sum), Some(10), Some(bytes))
        );

        let wrong =
            tipb::ChecksumRewriteRule { old_prefix: None, new_prefix: Some(b"u".to_vec().into()) };
        let req = tipb::ChecksumRequest { rule: Some(wrong), ..Default::default() };
        assert!(checksum(&req, &range, &mut s.scanner(), &ExecLimits::default()).is_err());
        let bad_algo = tipb::ChecksumRequest { algorithm: Some(7), ..Default::default() };
        assert!(checksum(&bad_algo, &range, &mut s.scanner(), &ExecLimits::default()).is_err());
    }

    #[test]
    fn a_cancelled_request_stops() {
        let s = store();
        let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let limits = ExecLimits::default().with_cancel_flag(flag);
        let range = [KeyRange::new(b"t".to_vec(), b"u".to_vec())];
        let e = checksum(&tipb::ChecksumRequest::default(), &range, &mut s.scanner(), &limits);
        assert!(matches!(e, Err(Error::Aborted(crate::Abort::Cancelled))), "{e:?}");
    }
}
