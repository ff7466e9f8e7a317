//! Readers scan while writers insert: a snapshot read at a fixed ts is stable.
#![expect(clippy::unwrap_used, reason = "test helpers unwrap known-good setup")]

use std::sync::Arc;

use rcop_snap::{PairBuf, ScanStatus, Shard, ShardConfig};

fn key(i: u32) -> Vec<u8> {
    format!("k{i:06}").into_bytes()
}

fn scan_all(shard: &Shard, ts: u64) -> Vec<(Vec<u8>, Vec<u8>)> {
    let snap = shard.snapshot();
    let mut s = snap.scanner(ts);
    s.start(b"", b"", false).unwrap();
    let mut out = PairBuf::new();
    while s.next_batch(128, &mut out).unwrap() == ScanStatus::More {}
    out.iter().map(|(k, v)| (k.to_vec(), v.to_vec())).collect()
}

#[test]
fn scans_at_a_fixed_ts_are_stable_under_writes() {
    let shard = Arc::new(Shard::new(ShardConfig::new(1, &b""[..], &b""[..], 0).unwrap()).unwrap());
    for i in 0..2000 {
        shard.put(&key(i), 1, 10, b"base").unwrap();
    }
    let expected = scan_all(&shard, 50);
    assert_eq!(expected.len(), 2000);
    let writer = {
        let shard = shard.clone();
        std::thread::spawn(move || {
            // Newer versions and new keys, all committed after ts 50.
            for round in 0..5u64 {
                for i in 0..2000 {
                    shard.put(&key(i * 2), 60, 100 + round, b"newer").unwrap();
                }
            }
        })
    };
    for _ in 0..20 {
        assert_eq!(scan_all(&shard, 50), expected);
    }
    writer.join().unwrap();
    let latest = scan_all(&shard, 1000);
    assert_eq!(latest.len(), 3000);
    assert_eq!(latest[0], (key(0), b"newer".to_vec()));
    assert_eq!(latest[1], (key(1), b"base".to_vec()));
}
