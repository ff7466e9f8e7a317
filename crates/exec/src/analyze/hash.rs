//! MurmurHash3 x64 128-bit (Austin Appleby's public-domain algorithm, seed 0) — the hash
//! TiKV's FM and CM sketches use (its `mur3` / `murmur3` crates) and TiDB's
//! (`twmb/murmur3`), so hashes from our regions and TiKV's merge in one sketch — and a
//! small seeded PRNG for the samplers.

const C1: u64 = 0x87c3_7b91_1142_53d5;
const C2: u64 = 0x4cf5_ad43_2745_937f;

#[inline]
fn fmix(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

#[inline]
fn mix_k1(k1: u64) -> u64 {
    k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2)
}

#[inline]
fn mix_k2(k2: u64) -> u64 {
    k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1)
}

/// A little-endian `u64` of up to 8 bytes (missing high bytes zero).
#[inline]
fn le(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = bytes.len().min(8);
    b[..n].copy_from_slice(&bytes[..n]);
    u64::from_le_bytes(b)
}

/// Streaming MurmurHash3 x64 128 with seed 0: `write` any number of times, then `finish`;
/// the same hash as one call over the concatenation.
#[derive(Debug, Clone, Default)]
pub(crate) struct Murmur3 {
    h1: u64,
    h2: u64,
    tail: [u8; 16],
    tail_len: usize,
    len: u64,
}

impl Murmur3 {
    #[inline]
    fn block(&mut self, k1: u64, k2: u64) {
        self.h1 ^= mix_k1(k1);
        self.h1 = self.h1.rotate_left(27).wrapping_add(self.h2);
        self.h1 = self.h1.wrapping_mul(5).wrapping_add(0x52dc_e729);
        self.h2 ^= mix_k2(k2);
        self.h2 = self.h2.rotate_left(31).wrapping_add(self.h1);
        self.h2 = self.h2.wrapping_mul(5).wrapping_add(0x3849_5ab5);
    }

    pub(crate) fn write(&mut self, mut data: &[u8]) {
        self.len = self.len.wrapping_add(data.len() as u64);
        if self.tail_len > 0 {
            let take = (16 - self.tail_len).min(data.len());
            self.tail[self.tail_len..self.tail_len + take].copy_from_slice(&data[..take]);
            self.tail_len += take;
            data = &data[take..];
            if self.tail_len < 16 {
                return;
            }
            let t = self.tail;
            self.block(le(&t[..8]), le(&t[8..]));
            self.tail_len = 0;
        }
        let mut chunks = data.chunks_exact(16);
        for c in &mut chunks {
            self.block(le(&c[..8]), le(&c[8..]));
        }
        let rest = chunks.remainder();
        self.tail[..rest.len()].copy_from_slice(rest);
        self.tail_len = rest.len();
    }

    pub(crate) fn finish(&self) -> (u64, u64) {
        let (mut h1, mut h2) = (self.h1, self.h2);
        let tail = &self.tail[..self.tail_len];
        if tail.len() > 8 {
            h2 ^= mix_k2(le(&tail[8..]));
        }
        if !tail.is_empty() {
            h1 ^= mix_k1(le(&tail[..tail.len().min(8)]));
        }
        h1 ^= self.len;
        h2 ^= self.len;
        h1 = h1.wrapping_add(h2);
        h2 = h2.wrapping_add(h1);
        h1 = fmix(h1);
        h2 = fmix(h2);
        h1 = h1.wrapping_add(h2);
        h2 = h2.wrapping_add(h1);
        (h1, h2)
    }
}

/// MurmurHash3 x64 128 of `data`, seed 0: the two 64-bit halves.
pub(crate) fn murmur3_x64_128(data: &[u8]) -> (u64, u64) {
    let mut h = Murmur3::default();
    h.write(data);
    h.finish()
}

/// xoshiro256** (Blackman and Vigna), seeded through splitmix64: small, fast and good enough
/// for sampling; injectable so a seed reproduces a response.
#[derive(Debug, Clone)]
pub(crate) struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        Rng { s: [next(), next(), next(), next()] }
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in `[0, i64::MAX)` (TiKV's `gen_range(0, i64::MAX)`, the reservoir weight).
    pub(crate) fn weight(&mut self) -> i64 {
        loop {
            let w = (self.next_u64() >> 1) as i64;
            if w != i64::MAX {
                return w;
            }
        }
    }

    /// Uniform in `[0, 1)`.
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `[0, n)`; `n` > 0 (Lemire's multiply-shift with rejection).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = u128::from(self.next_u64()) * u128::from(n);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }
}

/// A seed from the operating system (the clock if it has none): TiKV seeds its samplers
/// from entropy.
pub(crate) fn os_seed() -> u64 {
    let mut b = [0u8; 8];
    if getrandom::fill(&mut b).is_ok() {
        return u64::from_le_bytes(b);
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0x5eed, |d| d.as_nanos() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur3_matches_tikv_test_vectors() {
        // TiKV `cmsketch.rs` `test_hash`.
        assert_eq!(murmur3_x64_128("€".as_bytes()), (0x59E3_303A_2FDD_9555, 0x4F9D_8BB3_E4BC_3164));
        assert_eq!(
            murmur3_x64_128("€€€€€€€€€€".as_bytes()),
            (0xCECF_EB77_375E_EF6F, 0xE983_0BC2_6869_E2C6)
        );
        // The reference implementation's value for the empty input with seed 0.
        assert_eq!(murmur3_x64_128(b""), (0, 0));
    }

    #[test]
    fn streaming_equals_one_shot_at_every_split() {
        let data: Vec<u8> = (0..100u8).map(|i| i.wrapping_mul(37)).collect();
        for n in 0..data.len() {
            let one = murmur3_x64_128(&data[..n]);
            for split in 0..=n {
                let mut h = Murmur3::default();
                h.write(&data[..split]);
                h.write(&data[split..n]);
                assert_eq!(h.finish(), one, "n {n} split {split}");
            }
        }
    }

    #[test]
    fn rng_is_reproducible_and_in_range() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        for _ in 0..1000 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        let mut r = Rng::new(1);
        for _ in 0..10_000 {
            let u = r.unit();
            assert!((0.0..1.0).contains(&u));
            assert!(r.weight() >= 0);
            assert!(r.below(3) < 3);
        }
        assert_ne!(Rng::new(1).next_u64(), Rng::new(2).next_u64());
    }
}
