//! Shared-secret authentication of offload requests, for deployments without client
//! certificates: the storage node signs each request body with an HMAC-SHA256 keyed by a
//! secret both sides read from a file; the worker refuses a request whose signature is
//! missing (401), wrong or too old (403).
//!
//! The signed message is `rcop-hmac-v1\n{timestamp}\n{path}\n{body}`, where the timestamp is
//! the sender's clock in Unix milliseconds (header [`HEADER_AUTH_TIMESTAMP`]) and the
//! signature is the lowercase hex HMAC (header [`HEADER_AUTH_SIGNATURE`]). A timestamp more
//! than the allowed skew away from the receiver's clock is refused, which bounds how long a
//! captured request can be replayed; TLS keeps requests from being captured at all.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ring::hmac;

use crate::error::{Error, Result};

/// Request header with the sender's clock in Unix milliseconds.
pub const HEADER_AUTH_TIMESTAMP: &str = "x-rcop-timestamp";
/// Request header with the hex HMAC-SHA256 of the request.
pub const HEADER_AUTH_SIGNATURE: &str = "x-rcop-signature";
/// Default `auth-max-skew`: how far a request's timestamp may be from the receiver's clock.
pub const DEFAULT_AUTH_MAX_SKEW: Duration = Duration::from_secs(300);
/// Fewest bytes a shared secret may have (128 bits).
pub const MIN_SECRET_LEN: usize = 16;

const DOMAIN: &[u8] = b"rcop-hmac-v1\n";

/// Why a request failed authentication.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// No timestamp or signature header.
    #[error("request is not signed")]
    Missing,
    /// A header that is not a number or not hex of the right length.
    #[error("malformed signature headers")]
    Malformed,
    /// The timestamp is further from this clock than the allowed skew.
    #[error("request timestamp is {skew_ms} ms away from this clock")]
    Stale {
        /// Distance between the two clocks, in milliseconds.
        skew_ms: u64,
    },
    /// The signature does not match the body.
    #[error("bad request signature")]
    BadSignature,
}

impl AuthError {
    /// The HTTP status: 401 for an unsigned request, 403 for a refused signature.
    pub fn status(&self) -> u16 {
        match self {
            AuthError::Missing => 401,
            _ => 403,
        }
    }

    /// A short metric label: `missing`, `malformed`, `stale`, `bad_signature`.
    pub fn label(&self) -> &'static str {
        match self {
            AuthError::Missing => "missing",
            AuthError::Malformed => "malformed",
            AuthError::Stale { .. } => "stale",
            AuthError::BadSignature => "bad_signature",
        }
    }
}

/// The key both sides share. Debug output never shows it.
#[derive(Clone)]
pub struct SharedSecret {
    key: hmac::Key,
}

impl std::fmt::Debug for SharedSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedSecret(..)")
    }
}

impl SharedSecret {
    /// A secret of these bytes.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for fewer than [`MIN_SECRET_LEN`] bytes.
    pub fn new(secret: &[u8]) -> Result<Self> {
        if secret.len() < MIN_SECRET_LEN {
            return Err(Error::Config {
                key: "shared-secret-path",
                reason: format!("the secret has {} bytes, fewer than 16", secret.len()),
            });
        }
        Ok(SharedSecret { key: hmac::Key::new(hmac::HMAC_SHA256, secret) })
    }

    /// The secret in `path`, without trailing whitespace (a newline an editor added).
    ///
    /// # Errors
    ///
    /// [`Error::Read`] when the file cannot be read; as [`SharedSecret::new`].
    pub fn from_file(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path)
            .map_err(|source| Error::Read { path: path.to_path_buf(), source })?;
        let end = bytes.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(0, |i| i + 1);
        Self::new(bytes.get(..end).unwrap_or_default())
    }

    fn context(&self, unix_ms: u64, path: &str) -> hmac::Context {
        let mut ctx = hmac::Context::with_key(&self.key);
        ctx.update(DOMAIN);
        ctx.update(unix_ms.to_string().as_bytes());
        ctx.update(b"\n");
        ctx.update(path.as_bytes());
        ctx.update(b"\n");
        ctx
    }

    /// The signature header of `body` sent to `path` at `unix_ms`.
    pub fn sign(&self, unix_ms: u64, path: &str, body: &[u8]) -> String {
        let mut ctx = self.context(unix_ms, path);
        ctx.update(body);
        hex(ctx.sign().as_ref())
    }

    /// The two headers to send with `body` to `path` now: timestamp and signature.
    pub fn headers_now(&self, path: &str, body: &[u8]) -> [(&'static str, String); 2] {
        let now = unix_ms(SystemTime::now());
        [
            (HEADER_AUTH_TIMESTAMP, now.to_string()),
            (HEADER_AUTH_SIGNATURE, self.sign(now, path, body)),
        ]
    }

    /// Checks the headers of a request of `body` to `path` received at `now_unix_ms`,
    /// allowing `max_skew` between the clocks. The comparison takes constant time.
    ///
    /// # Errors
    ///
    /// The [`AuthError`] that refuses the request.
    pub fn verify(
        &self,
        timestamp: Option<&[u8]>,
        signature: Option<&[u8]>,
        path: &str,
        body: &[u8],
        now_unix_ms: u64,
        max_skew: Duration,
    ) -> std::result::Result<(), AuthError> {
        let (Some(timestamp), Some(signature)) = (timestamp, signature) else {
            return Err(AuthError::Missing);
        };
        let ts = std::str::from_utf8(timestamp)
            .ok()
            .filter(|t| !t.is_empty() && t.len() <= 20 && t.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|t| t.parse::<u64>().ok())
            .ok_or(AuthError::Malformed)?;
        let sig = unhex(signature).ok_or(AuthError::Malformed)?;
        let skew_ms = ts.abs_diff(now_unix_ms);
        if u128::from(skew_ms) > max_skew.as_millis() {
            return Err(AuthError::Stale { skew_ms });
        }
        let mut ctx = self.context(ts, path);
        ctx.update(body);
        let expected = ctx.sign();
        // Every byte compared whatever differs first: the time does not tell how much of a
        // forged signature was right.
        let expected = expected.as_ref();
        let diff = expected.iter().zip(&sig).fold(0u8, |acc, (a, b)| acc | (a ^ b));
        if diff != 0 || expected.len() != sig.len() {
            return Err(AuthError::BadSignature);
        }
        Ok(())
    }
}

/// Milliseconds since the Unix epoch (0 before it).
pub fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

fn unhex(text: &[u8]) -> Option<Vec<u8>> {
    if text.len() != 64 {
        return None;
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    text.chunks_exact(2).map(|p| Some(digit(*p.first()?)? << 4 | digit(*p.get(1)?)?)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SKEW: Duration = DEFAULT_AUTH_MAX_SKEW;

    #[test]
    fn a_signed_request_verifies_and_every_change_is_refused() {
        let s = SharedSecret::new(b"0123456789abcdef-secret").unwrap();
        let sig = s.sign(1_000_000, "/coprocessor", b"body");
        assert_eq!(sig.len(), 64);
        let ok = |ts: &[u8], sig: &[u8], path: &str, body: &[u8], now: u64| {
            s.verify(Some(ts), Some(sig), path, body, now, SKEW)
        };
        assert_eq!(ok(b"1000000", sig.as_bytes(), "/coprocessor", b"body", 1_000_000), Ok(()));
        assert_eq!(
            ok(b"1000000", sig.to_uppercase().as_bytes(), "/coprocessor", b"body", 1_000_100),
            Ok(())
        );
        assert_eq!(
            ok(b"1000000", sig.as_bytes(), "/coprocessor", b"bodY", 1_000_000),
            Err(AuthError::BadSignature)
        );
        assert_eq!(
            ok(b"1000000", sig.as_bytes(), "/other", b"body", 1_000_000),
            Err(AuthError::BadSignature)
        );
        assert_eq!(
            ok(b"1000001", sig.as_bytes(), "/coprocessor", b"body", 1_000_000),
            Err(AuthError::BadSignature)
        );
        let other = SharedSecret::new(b"0123456789abcdef-other!").unwrap();
        assert_eq!(
            other.verify(
                Some(b"1000000"),
                Some(sig.as_bytes()),
                "/coprocessor",
                b"body",
                1_000_000,
                SKEW
            ),
            Err(AuthError::BadSignature)
        );
        // Too old and too new.
        let late = 1_000_000 + 300_001;
        assert_eq!(
            ok(b"1000000", sig.as_bytes(), "/coprocessor", b"body", late),
            Err(AuthError::Stale { skew_ms: 300_001 })
        );
        assert!(matches!(
            ok(b"1000000", sig.as_bytes(), "/coprocessor", b"body", 0),
            Err(AuthError::Stale { .. })
        ));
        // Missing or malformed headers.
        assert_eq!(
            s.verify(None, Some(sig.as_bytes()), "/", b"", 0, SKEW),
            Err(AuthError::Missing)
        );
        assert_eq!(s.verify(Some(b"1"), None, "/", b"", 0, SKEW), Err(AuthError::Missing));
        for (ts, sig) in [
            (&b"-1"[..], sig.as_bytes()),
            (b"", sig.as_bytes()),
            (b"1e6", sig.as_bytes()),
            (b"1000000", &sig.as_bytes()[1..]),
            (b"1000000", b"zz"),
        ] {
            assert_eq!(ok(ts, sig, "/coprocessor", b"body", 1_000_000), Err(AuthError::Malformed));
        }
        assert_eq!((AuthError::Missing.status(), AuthError::BadSignature.status()), (401, 403));
    }

    #[test]
    fn the_signature_is_the_hmac_sha256_of_the_message() {
        // The documented message, signed by ring's one-shot HMAC.
        let s = SharedSecret::new(b"Jefe____________").unwrap();
        let key = hmac::Key::new(hmac::HMAC_SHA256, b"Jefe____________");
        let expected = hmac::sign(&key, b"rcop-hmac-v1\n42\n/coprocessor\nwhat do ya want");
        assert_eq!(s.sign(42, "/coprocessor", b"what do ya want"), hex(expected.as_ref()));
        assert!(SharedSecret::new(b"short").is_err());
        assert_eq!(format!("{s:?}"), "SharedSecret(..)");
    }

    #[test]
    fn secrets_are_read_without_trailing_whitespace() {
        let dir = std::env::temp_dir().join(format!("rcop-secret-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("secret");
        std::fs::write(&path, b"0123456789abcdef-secret\n").unwrap();
        let from_file = SharedSecret::from_file(&path).unwrap();
        let direct = SharedSecret::new(b"0123456789abcdef-secret").unwrap();
        assert_eq!(from_file.sign(1, "/", b"x"), direct.sign(1, "/", b"x"));
        std::fs::write(&path, b"short\n").unwrap();
        assert!(SharedSecret::from_file(&path).is_err());
        assert!(SharedSecret::from_file(&dir.join("missing")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
