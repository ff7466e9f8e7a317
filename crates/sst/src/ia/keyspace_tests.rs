//! The per-keyspace read semaphores stay a bounded table.

use super::*;

#[test]
fn keyspace_semaphores_stay_bounded_and_busy_ones_stay() {
    let dir = std::env::temp_dir().join(format!("rcop-ia-ks-{}", std::process::id()));
    let cache = IaCache::open(IaConfig::new(&dir), None);
    let busy = cache.inner.keyspace_semaphore(7);
    let _permit = busy.try_acquire().ok();
    for ks in 100..100 + 4 * KEYSPACE_SWEEP_AT as u32 {
        drop(cache.inner.keyspace_semaphore(ks));
        assert!(lock(&cache.inner.keyspaces).len() <= KEYSPACE_SWEEP_AT + 1);
    }
    assert!(Arc::ptr_eq(&busy, &cache.inner.keyspace_semaphore(7)), "in use, kept");
    drop(cache);
    let _ = std::fs::remove_dir_all(&dir);
}
