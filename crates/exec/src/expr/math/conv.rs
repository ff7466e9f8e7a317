//! `CONV`, `CRC32` and `RAND` (MySQL's generator, `my_rnd`).

use crate::column::{BytesT, ColData, Elem, IntT, VecCol};
use crate::ctx::EvalContext;
use crate::error::Result;
use crate::expr::kernel::{map1_infallible, validity};
use crate::expr::registry::{Args, Call, Registry};
use crate::types::EvalType;

pub(super) fn register(r: &mut Registry) {
    use EvalType::{Bytes as B, Int as I, Real as R};
    r.add(2138, Args::fixed(&[B, I, I]), B, conv);
    r.add(2139, Args::same(B, 1), I, crc32);
    r.add(2135, Args::fixed(&[]), R, rand);
    r.add(2136, Args::same(I, 1), R, rand_with_seed);
}

fn crc32(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map1_infallible::<BytesT, IntT>(c.n, c.typed(0)?, |v| Some(i64::from(crc32fast::hash(v))))
}

/// MySQL's `rand_struct` (`my_rnd`): two 30-bit seeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MySqlRng {
    seed1: u64,
    seed2: u64,
}

const RNG_MAX: u64 = 0x3FFF_FFFF;

impl MySqlRng {
    /// The generator `RAND(seed)` starts from (`Item_func_rand::seed_random`).
    pub fn with_seed(seed: i64) -> MySqlRng {
        let s = seed as u32;
        let seed1 = s.wrapping_mul(0x10001).wrapping_add(55_555_555);
        let seed2 = s.wrapping_mul(0x1000_0001);
        MySqlRng { seed1: u64::from(seed1) % RNG_MAX, seed2: u64::from(seed2) % RNG_MAX }
    }

    /// The next value, in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        self.seed1 = (self.seed1 * 3 + self.seed2) % RNG_MAX;
        self.seed2 = (self.seed1 + self.seed2 + 33) % RNG_MAX;
        self.seed1 as f64 / RNG_MAX as f64
    }
}

/// `RAND()`: a generator seeded from the OS per batch (MySQL seeds it per statement from the
/// clock and thread; the values are not reproducible either way).
fn rand(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let mut b = [0u8; 8];
    // Without an OS source, fall back to the clock: RAND() has no reproducibility promise.
    if getrandom::fill(&mut b).is_err() {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        b = t.to_le_bytes();
    }
    let mut rng = MySqlRng::with_seed(i64::from_le_bytes(b));
    let data = (0..c.n).map(|_| rng.next_f64()).collect();
    Ok(VecCol { data: ColData::Real(data), valid: crate::column::Bitmap::all_valid(c.n) })
}

/// `RandWithSeedFirstGen`: the first value of a generator seeded by each row's seed (a NULL
/// seed is 0, as MySQL's `val_int`). TiDB sends it when the seed is not a constant, where
/// MySQL re-seeds per row.
fn rand_with_seed(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let seeds = c.typed::<IntT>(0)?;
    let data =
        (0..c.n).map(|i| MySqlRng::with_seed(seeds.get(i).unwrap_or(0)).next_f64()).collect();
    Ok(VecCol { data: ColData::Real(data), valid: crate::column::Bitmap::all_valid(c.n) })
}

/// `CONV(N, from_base, to_base)`, as MySQL: bases outside 2..=36 (by absolute value) are
/// NULL; a negative `from_base` reads `N` as signed, a negative `to_base` writes a signed
/// result; `N` is read up to its first character that is not a digit of the base (leading
/// spaces skipped, an optional `-`), saturating on overflow; nothing readable is `0`.
fn conv(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let (s, f, t) = (c.typed::<BytesT>(0)?, c.typed::<IntT>(1)?, c.typed::<IntT>(2)?);
    let mut out = VecCol::new(EvalType::Bytes, c.n);
    let valid = validity(&s, c.n);
    for i in 0..c.n {
        let r = match (s.get(i), f.get(i), t.get(i)) {
            (Some(s), Some(f), Some(t)) if valid.get(i) => conv_one(s, f, t),
            _ => None,
        };
        BytesT::push(&mut out, r.as_deref());
    }
    Ok(out)
}

fn base_ok(b: i64) -> Option<u32> {
    let a = u32::try_from(b.unsigned_abs()).ok()?;
    (2..=36).contains(&a).then_some(a)
}

/// One `CONV`.
pub fn conv_one(s: &[u8], from: i64, to: i64) -> Option<Vec<u8>> {
    let (fb, tb) = (base_ok(from)?, base_ok(to)?);
    if s.is_empty() {
        return None;
    }
    let mut rest = s;
    while let [b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c, tail @ ..] = rest {
        rest = tail;
    }
    let neg = match rest {
        [b'-', tail @ ..] => {
            rest = tail;
            true
        }
        [b'+', tail @ ..] => {
            rest = tail;
            false
        }
        _ => false,
    };
    // Read the digits, saturating at u64::MAX.
    let mut v: u64 = 0;
    let mut overflow = false;
    for &b in rest {
        let Some(d) = char::from(b).to_digit(fb) else { break };
        match v.checked_mul(u64::from(fb)).and_then(|x| x.checked_add(u64::from(d))) {
            Some(x) => v = x,
            None => overflow = true,
        }
    }
    if overflow {
        v = u64::MAX;
    }
    // MySQL: a signed from_base reads with my_strntoll (clamped to the i64 range), an unsigned
    // one with my_strntoull (a '-' negates modulo 2^64).
    let value: u64 = if from < 0 {
        let x: i64 = if neg {
            if v > 1u64 << 63 { i64::MIN } else { 0i64.wrapping_sub_unsigned(v) }
        } else {
            i64::try_from(v).unwrap_or(i64::MAX)
        };
        x as u64
    } else if neg {
        if overflow { u64::MAX } else { v.wrapping_neg() }
    } else {
        v
    };
    // longlong2str: a negative to_base writes the value as signed.
    let (neg_out, mag) = if to < 0 && (value as i64) < 0 {
        (true, (value as i64).unsigned_abs())
    } else {
        (false, value)
    };
    let mut digits = Vec::with_capacity(65);
    let mut m = mag;
    loop {
        let d = (m % u64::from(tb)) as u32;
        digits.push(char::from_digit(d, tb).map_or(b'0', |c| c.to_ascii_uppercase() as u8));
        m /= u64::from(tb);
        if m == 0 {
            break;
        }
    }
    if neg_out {
        digits.push(b'-');
    }
    digits.reverse();
    Some(digits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conv_as_mysql() {
        let c = |s: &str, f, t| conv_one(s.as_bytes(), f, t).map(|v| String::from_utf8(v).unwrap());
        assert_eq!(c("a", 16, 2).as_deref(), Some("1010"));
        assert_eq!(c("6E", 18, 8).as_deref(), Some("172"));
        assert_eq!(c("-17", 10, -18).as_deref(), Some("-H"));
        assert_eq!(c("-17", 10, 16).as_deref(), Some("FFFFFFFFFFFFFFEF"));
        assert_eq!(c("zz", 10, 10).as_deref(), Some("0"));
        assert_eq!(c("1", 1, 10), None);
        assert_eq!(c("1", 10, 37), None);
    }

    #[test]
    fn rand_is_mysqls_generator() {
        // MySQL: SELECT RAND(1) = 0.40540353712197724, RAND(0) = 0.15522042769493574.
        assert_eq!(MySqlRng::with_seed(1).next_f64(), 0.40540353712197724);
        assert_eq!(MySqlRng::with_seed(0).next_f64(), 0.15522042769493574);
    }
}
