//! What errors and logs may show: redaction of keys, values and object paths, and a gate
//! that lets one repeated warning through per interval.
//!
//! Redaction is process-wide, as TiKV's `[security] redact-info-log`: on by default, so an
//! error message or a log line that reaches an operator (or a storage node, in a 4xx body)
//! carries no user data unless the deployment turns it off to debug.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

static REDACT: AtomicBool = AtomicBool::new(true);

/// Turns redaction of keys, values and object paths in errors and logs on or off for the
/// whole process (on by default).
pub fn set_redact_info_log(on: bool) {
    REDACT.store(on, Ordering::Relaxed);
}

/// Whether errors and logs hide keys, values and object paths.
pub fn redact_info_log() -> bool {
    REDACT.load(Ordering::Relaxed)
}

/// Bytes of user data (a key, a value) in an error or log line: `?` while redaction is on,
/// else lowercase hex.
#[derive(Clone, Copy)]
pub struct Redacted<'a>(pub &'a [u8]);

impl fmt::Display for Redacted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if redact_info_log() {
            return f.write_str("?");
        }
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Redacted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Text naming user data (an object path): `?` while redaction is on.
#[derive(Clone, Copy)]
pub struct RedactedStr<'a>(pub &'a str);

impl fmt::Display for RedactedStr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if redact_info_log() { "?" } else { self.0 })
    }
}

impl fmt::Debug for RedactedStr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Lets one event through per interval and counts the ones it held back: a warning that a
/// flood of bad requests repeats is logged once per interval, with the number suppressed.
#[derive(Debug)]
pub struct RateLimited {
    interval_ms: u64,
    start: Instant,
    /// Milliseconds since `start` of the last event let through, plus one (0: none yet).
    last: AtomicU64,
    suppressed: AtomicU64,
}

impl RateLimited {
    /// A gate letting one event through per `interval`.
    pub fn new(interval: Duration) -> Self {
        RateLimited {
            interval_ms: u64::try_from(interval.as_millis()).unwrap_or(u64::MAX),
            start: Instant::now(),
            last: AtomicU64::new(0),
            suppressed: AtomicU64::new(0),
        }
    }

    /// `Some(events held back since the last one let through)` when this one may pass.
    pub fn allow(&self) -> Option<u64> {
        let now = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX) + 1;
        let last = self.last.load(Ordering::Relaxed);
        if last != 0 && now.saturating_sub(last) < self.interval_ms {
            self.suppressed.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        if self.last.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_err() {
            self.suppressed.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        Some(self.suppressed.swap(0, Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_event_per_interval_and_the_count_of_the_rest() {
        let gate = RateLimited::new(Duration::from_secs(3600));
        assert_eq!(gate.allow(), Some(0));
        assert_eq!((gate.allow(), gate.allow()), (None, None));
        let open = RateLimited::new(Duration::ZERO);
        assert_eq!((open.allow(), open.allow()), (Some(0), Some(0)));
    }

    #[test]
    fn redaction_hides_user_data_until_turned_off() {
        assert!(redact_info_log(), "on by default");
        assert_eq!(format!("{} {}", Redacted(b"\x01k"), RedactedStr("bucket/1.sst")), "? ?");
        set_redact_info_log(false);
        let shown = format!("{} {:?}", Redacted(b"\x01k"), RedactedStr("bucket/1.sst"));
        set_redact_info_log(true);
        assert_eq!(shown, "016b bucket/1.sst");
    }
}
