//! Worker selection: rendezvous (highest-random-weight) hashing of a shard onto the workers,
//! so a shard's requests keep landing on the worker whose caches hold its blocks, and
//! adding or removing a worker moves only the shards that worker gains or loses.

use rcop_proto::coprocessor::Request;

/// The affinity key of a request: its keyspace and shard (region) id.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RoutingKey {
    /// `context.keyspace_id` (0 when absent).
    pub keyspace_id: u32,
    /// `context.region_id`, the storage node's shard id.
    pub shard_id: u64,
}

impl RoutingKey {
    /// The key of a request.
    pub fn of(request: &Request) -> RoutingKey {
        let ctx = request.context.as_ref();
        RoutingKey {
            keyspace_id: ctx.and_then(|c| c.keyspace_id).unwrap_or(0),
            shard_id: ctx.map_or(0, |c| c.region_id),
        }
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(FNV_PRIME);
    }
    h
}

/// MurmurHash3's 64-bit finaliser: every input bit flips each output bit with probability
/// about 1/2, which FNV-1a alone does not give for inputs differing in their last bytes.
fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The weight of `worker` for `key`:
/// `fmix64(fnv1a64(worker ‖ 0xFF ‖ keyspace_id as u32 LE ‖ shard_id as u64 LE))`.
///
/// Stable across processes, platforms and releases (it is part of the deployment: changing
/// it moves every shard), and independent of the order workers are configured in. `0xFF`
/// never occurs in UTF-8, so a URL cannot run into the key bytes.
pub fn rendezvous_weight(worker: &str, key: RoutingKey) -> u64 {
    let mut h = fnv1a(FNV_OFFSET, worker.as_bytes());
    h = fnv1a(h, &[0xff]);
    h = fnv1a(h, &key.keyspace_id.to_le_bytes());
    h = fnv1a(h, &key.shard_id.to_le_bytes());
    fmix64(h)
}

/// Indices of `workers` in the order a request with `key` tries them: by descending
/// [`rendezvous_weight`], ties (equal URLs) by index.
///
/// ```
/// use rcop_offload::{RoutingKey, rendezvous_order};
///
/// let workers = ["http://w1:19000/coprocessor", "http://w2:19000/coprocessor"];
/// let key = RoutingKey { keyspace_id: 1, shard_id: 42 };
/// let order = rendezvous_order(&workers, key);
/// assert_eq!(order.len(), 2);
/// assert_eq!(order, rendezvous_order(&workers, key)); // stable
/// ```
pub fn rendezvous_order<S: AsRef<str>>(workers: &[S], key: RoutingKey) -> Vec<usize> {
    let mut scored: Vec<(u64, usize)> =
        workers.iter().enumerate().map(|(i, w)| (rendezvous_weight(w.as_ref(), key), i)).collect();
    scored.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, i)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: [&str; 3] = [
        "http://127.0.0.1:19001/coprocessor",
        "http://127.0.0.1:19002/coprocessor",
        "http://127.0.0.1:19003/coprocessor",
    ];

    #[test]
    fn weight_is_pinned() {
        // Changing the function reshuffles every deployment; this pins it.
        let k = RoutingKey { keyspace_id: 1, shard_id: 2 };
        let expect = {
            let mut h = FNV_OFFSET;
            for b in W[0].bytes().chain([0xff, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0]) {
                h = (h ^ u64::from(b)).wrapping_mul(FNV_PRIME);
            }
            fmix64(h)
        };
        assert_eq!(rendezvous_weight(W[0], k), expect);
        assert_eq!(fmix64(0), 0);
        // Values computed independently (Python) from the documented formula.
        let pinned = [0x82f4_e5e9_46ec_36d1, 0x7bdc_1828_42b4_56ea, 0xc509_7a0d_c238_f122];
        for (url, weight) in W.iter().zip(pinned) {
            assert_eq!(rendezvous_weight(url, k), weight, "{url}");
        }
        assert_eq!(rendezvous_order(&W, k), [2, 0, 1]);
    }

    #[test]
    fn order_is_a_stable_permutation_independent_of_config_order() {
        for shard_id in 0..200 {
            let key = RoutingKey { keyspace_id: 7, shard_id };
            let order = rendezvous_order(&W, key);
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, [0, 1, 2]);
            assert_eq!(order, rendezvous_order(&W, key));
            let reversed = [W[2], W[1], W[0]];
            let rev_order: Vec<&str> =
                rendezvous_order(&reversed, key).into_iter().map(|i| reversed[i]).collect();
            let fwd_order: Vec<&str> = order.into_iter().map(|i| W[i]).collect();
            assert_eq!(rev_order, fwd_order);
        }
    }

    #[test]
    fn keys_spread_evenly_over_three_workers() {
        let mut first = [0u32; 3];
        let mut second = [0u32; 3];
        let n = 30_000u32;
        for i in 0..n {
            let key = RoutingKey { keyspace_id: i % 5, shard_id: u64::from(i / 5) };
            let order = rendezvous_order(&W, key);
            first[order[0]] += 1;
            second[order[1]] += 1;
        }
        // Expected 10 000 each; a binomial's standard deviation is ~82, allow ±5%.
        for c in first.iter().chain(&second) {
            assert!((9_500..=10_500).contains(c), "uneven spread: {first:?} {second:?}");
        }
    }

    #[test]
    fn removing_a_worker_moves_only_its_keys() {
        let two = [W[0], W[2]];
        let mut moved = 0;
        for shard_id in 0..3_000 {
            let key = RoutingKey { keyspace_id: 1, shard_id };
            let before = W[rendezvous_order(&W, key)[0]];
            let after = two[rendezvous_order(&two, key)[0]];
            if before != W[1] {
                assert_eq!(before, after, "shard {shard_id} moved without cause");
            } else {
                moved += 1;
            }
        }
        assert!((800..=1_200).contains(&moved), "{moved}");
    }

    #[test]
    fn routing_key_of_request() {
        use rcop_proto::kvrpcpb::Context;
        let req = Request {
            context: Some(Context { region_id: 9, keyspace_id: Some(3), ..Context::default() }),
            ..Request::default()
        };
        assert_eq!(RoutingKey::of(&req), RoutingKey { keyspace_id: 3, shard_id: 9 });
        assert_eq!(RoutingKey::of(&Request::default()), RoutingKey::default());
    }
}
