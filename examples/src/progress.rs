//! Progress of long work (loading a table): done / total, rate and time left. On a terminal
//! the line is redrawn in place; anywhere else (a log file, a pipe) a plain line is written
//! every few seconds, never a carriage return.

use std::io::Write;
use std::time::{Duration, Instant};

/// How often a plain (non-terminal) progress line is written.
const PLAIN_EVERY: Duration = Duration::from_secs(5);

/// One task's progress, written to a sink (stderr by default).
pub struct Progress {
    label: String,
    total: Option<u64>,
    started: Instant,
    last: Option<Instant>,
    terminal: bool,
    out: Box<dyn Write + Send>,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Progress").field("label", &self.label).field("total", &self.total).finish()
    }
}

impl Progress {
    /// Progress of `label` towards about `total` units, written to stderr (redrawn in place
    /// when stderr is a terminal).
    pub fn stderr(label: impl Into<String>, total: Option<u64>) -> Self {
        use std::io::IsTerminal;
        let terminal = std::io::stderr().is_terminal();
        Self::to(label, total, terminal, Box::new(std::io::stderr()))
    }

    /// Progress written to `out`; `terminal` redraws one line in place.
    pub fn to(
        label: impl Into<String>,
        total: Option<u64>,
        terminal: bool,
        out: Box<dyn Write + Send>,
    ) -> Self {
        Progress { label: label.into(), total, started: Instant::now(), last: None, terminal, out }
    }

    /// `done` units so far.
    pub fn update(&mut self, done: u64) {
        let now = Instant::now();
        let due = match self.last {
            None => true,
            Some(t) if self.terminal => now.duration_since(t) >= Duration::from_millis(100),
            Some(t) => now.duration_since(t) >= PLAIN_EVERY,
        };
        if !due {
            return;
        }
        self.last = Some(now);
        let line = self.line(done, now.duration_since(self.started));
        let _ = if self.terminal {
            write!(self.out, "\r{line}\x1b[K")
        } else {
            writeln!(self.out, "{line}")
        };
        let _ = self.out.flush();
    }

    /// The last line: `done` units in the time taken, and `summary`.
    pub fn finish(&mut self, done: u64, summary: &str) {
        let took = self.started.elapsed();
        let rate = rate(done, took);
        let end = if self.terminal { "\r\x1b[K" } else { "" };
        let _ = writeln!(
            self.out,
            "{end}{}: {done} done in {:.1} s ({rate:.0}/s){summary}",
            self.label,
            took.as_secs_f64()
        );
        let _ = self.out.flush();
    }

    /// `label: done/≈total (pct), rate/s, ETA`.
    fn line(&self, done: u64, elapsed: Duration) -> String {
        let rate = rate(done, elapsed);
        match self.total.filter(|&t| t > 0) {
            Some(total) => {
                let pct = (done as f64 / total as f64 * 100.0).min(100.0);
                let left = total.saturating_sub(done) as f64;
                let eta = if rate > 0.0 { format!("{:.0} s", left / rate) } else { "?".to_owned() };
                let bar = if self.terminal { format!("{} ", bar(pct)) } else { String::new() };
                format!("{}: {bar}{done}/≈{total} ({pct:.0}%), {rate:.0}/s, ETA {eta}", self.label)
            }
            None => format!("{}: {done}, {rate:.0}/s", self.label),
        }
    }
}

fn rate(done: u64, elapsed: Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    if secs > 0.0 { done as f64 / secs } else { 0.0 }
}

fn bar(pct: f64) -> String {
    let filled = ((pct / 100.0) * 20.0).round() as usize;
    format!("[{}{}]", "#".repeat(filled.min(20)), ".".repeat(20 - filled.min(20)))
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn plain_output_has_lines_and_no_carriage_return() {
        let sink = Sink::default();
        let mut p = Progress::to("loading lineitem", Some(1000), false, Box::new(sink.clone()));
        p.update(10);
        p.update(20); // within 5 s of the first: not written
        p.finish(1000, ", 40 in the memtable");
        let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        assert!(!text.contains('\r'), "{text:?}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[0].starts_with("loading lineitem: 10/≈1000 (1%), "), "{}", lines[0]);
        assert!(lines[0].contains("/s, ETA "), "{}", lines[0]);
        assert!(lines[1].starts_with("loading lineitem: 1000 done in "), "{}", lines[1]);
        assert!(lines[1].ends_with(", 40 in the memtable"), "{}", lines[1]);
    }

    #[test]
    fn a_terminal_gets_one_redrawn_line_with_a_bar() {
        let sink = Sink::default();
        let mut p = Progress::to("loading", Some(100), true, Box::new(sink.clone()));
        p.update(50);
        let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        assert!(text.starts_with("\rloading: [##########..........] 50/≈100 (50%)"), "{text:?}");
        assert!(!text.contains('\n'));
        let unknown = Progress::to("scan", None, false, Box::new(Sink::default()));
        assert!(unknown.line(7, Duration::from_secs(1)).starts_with("scan: 7, 7/s"));
    }
}
