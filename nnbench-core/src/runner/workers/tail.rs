//! A worker's stderr, passed on to ours as it comes, with its last bytes
//! kept, and those before its last backtrace: a process that dies often
//! says why there last ("memory allocation of N bytes failed", a native
//! library's message before it aborts), or just before its backtrace.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How much of the end is kept, and of what came before a backtrace.
const KEEP: usize = 4096;

/// How Rust's panic and allocation-failure hooks begin a backtrace
/// (`RUST_BACKTRACE=1`, as CI runners often set). What the process said
/// just before it is why it died, and a backtrace is longer than [`KEEP`].
const BACKTRACE: &[u8] = b"stack backtrace:";

pub(crate) struct Tail {
    kept: Arc<Mutex<Kept>>,
    thread: Option<JoinHandle<()>>,
}

/// The last bytes, what came before the last backtrace, and how many
/// bytes came in all. Positions count bytes from the stream's start.
#[derive(Default)]
struct Kept {
    bytes: Vec<u8>,
    written: u64,
    /// Up to [`KEEP`] bytes that end with the last backtrace's first line.
    before_backtrace: Option<Before>,
}

struct Before {
    bytes: Vec<u8>,
    /// The position just after the backtrace's first line.
    end: u64,
}

impl Kept {
    fn push(&mut self, chunk: &[u8]) {
        // A backtrace's first line may straddle two chunks.
        let search_from = self.bytes.len().saturating_sub(BACKTRACE.len() - 1);
        self.bytes.extend_from_slice(chunk);
        self.written += chunk.len() as u64;
        if let Some(at) = self.bytes[search_from..]
            .windows(BACKTRACE.len())
            .rposition(|w| w == BACKTRACE)
        {
            let end = search_from + at + BACKTRACE.len();
            self.before_backtrace = Some(Before {
                bytes: self.bytes[end.saturating_sub(KEEP)..end].to_vec(),
                end: self.written - (self.bytes.len() - end) as u64,
            });
        }
        let excess = self.bytes.len().saturating_sub(KEEP);
        self.bytes.drain(..excess);
    }

    /// The bytes kept from position `mark` on: what came before the last
    /// backtrace, where it began after `mark`, then the last bytes, with
    /// how much between them was left out.
    fn since(&self, mark: u64) -> Vec<u8> {
        let tail_start = self.written - self.bytes.len() as u64;
        let mut out = Vec::new();
        if let Some(before) = self.before_backtrace.as_ref().filter(|b| b.end > mark) {
            let before_start = before.end - before.bytes.len() as u64;
            let from = mark.max(before_start);
            let to = before.end.min(tail_start);
            if from < to {
                out.extend(
                    &before.bytes[(from - before_start) as usize..(to - before_start) as usize],
                );
                if before.end < tail_start {
                    out.extend(
                        format!(
                            "\n[{} bytes of the backtrace left out]\n",
                            tail_start - before.end
                        )
                        .bytes(),
                    );
                }
            }
        }
        let from = mark.max(tail_start);
        out.extend_from_slice(&self.bytes[(from - tail_start) as usize..]);
        out
    }
}

/// What a worker wrote to its stderr, passed on in whole lines: unbuffered,
/// it writes a formatted line in pieces, and two workers running at once
/// would interleave their pieces.
#[derive(Default)]
struct Lines {
    pending: Vec<u8>,
}

impl Lines {
    /// A line longer than this goes on unfinished (a progress bar that
    /// redraws itself without ending its line).
    const LONGEST: usize = 8192;

    /// Takes `chunk` in; what is ready to pass on: up to the last line's
    /// end, or all of it where the line grew past [`Lines::LONGEST`].
    fn whole(&mut self, chunk: &[u8]) -> Vec<u8> {
        self.pending.extend_from_slice(chunk);
        let end = match self.pending.iter().rposition(|&b| b == b'\n' || b == b'\r') {
            Some(at) => at + 1,
            None if self.pending.len() > Self::LONGEST => self.pending.len(),
            None => return Vec::new(),
        };
        let rest = self.pending.split_off(end);
        std::mem::replace(&mut self.pending, rest)
    }

    /// What is left once the stream closed: a last line without its end.
    fn rest(self) -> Vec<u8> {
        self.pending
    }
}

impl Tail {
    /// Copies `from` to this process's stderr, line by line, until it
    /// closes.
    pub(crate) fn forward(mut from: impl Read + Send + 'static) -> Self {
        let kept = Arc::new(Mutex::new(Kept::default()));
        let thread = std::thread::Builder::new()
            .name("nnbench-worker-stderr".into())
            .spawn({
                let kept = Arc::clone(&kept);
                move || {
                    let mut buffer = [0u8; 8192];
                    let mut lines = Lines::default();
                    loop {
                        let read = match from.read(&mut buffer) {
                            Ok(0) => break,
                            Ok(read) => read,
                            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                            Err(_) => break,
                        };
                        let chunk = &buffer[..read];
                        // A closed stderr must not stop the worker's.
                        let _ = std::io::stderr().write_all(&lines.whole(chunk));
                        kept.lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .push(chunk);
                    }
                    let _ = std::io::stderr().write_all(&lines.rest());
                }
            })
            .ok();
        Self { kept, thread }
    }

    /// How many bytes came so far.
    pub(crate) fn written(&self) -> u64 {
        self.kept
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .written
    }

    /// The last bytes kept of those that came after the first `mark`,
    /// once the stream closed or `patience` passed (a process the worker
    /// started may hold it open).
    pub(crate) fn since(&mut self, mark: u64, patience: Duration) -> String {
        let until = Instant::now() + patience;
        if let Some(thread) = self.thread.take() {
            while !thread.is_finished() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(2));
            }
            if thread.is_finished() {
                let _ = thread.join();
            }
        }
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        String::from_utf8_lossy(&kept.since(mark)).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(chunks: &[&[u8]]) -> Kept {
        let mut kept = Kept::default();
        for chunk in chunks {
            kept.push(chunk);
        }
        kept
    }

    fn text(kept: &Kept, mark: u64) -> String {
        String::from_utf8(kept.since(mark)).unwrap()
    }

    /// A short backtrace's frames, `n` of them.
    fn frames(n: usize) -> String {
        (0..n)
            .map(|i| {
                format!("  {i:>2}: some::function::name\n             at ./src/file.rs:{i}:5\n")
            })
            .collect()
    }

    const DIED: &str = "memory allocation of 1073741824 bytes failed\nstack backtrace:\n";
    const NOTE: &str = "note: Some details are omitted\n";

    #[test]
    fn the_line_before_a_backtrace_longer_than_the_tail_is_kept() {
        let frames = frames(200);
        assert!(frames.len() > 2 * KEEP);
        let kept = kept(&[
            b"case output\n",
            DIED.as_bytes(),
            frames.as_bytes(),
            NOTE.as_bytes(),
        ]);
        let said = text(&kept, 0);
        assert!(said.starts_with(&format!("case output\n{DIED}")), "{said}");
        assert!(
            said.contains(" bytes of the backtrace left out]\n"),
            "{said}"
        );
        assert!(said.ends_with(NOTE), "{said}");
        assert_eq!(
            super::super::death::last_words(&said),
            Some("memory allocation of 1073741824 bytes failed")
        );
        // The whole stream's last bytes follow, as many as are kept.
        let (_, last) = said.split_once("left out]\n").unwrap();
        assert_eq!(last.len(), KEEP);
    }

    #[test]
    fn a_backtrace_line_split_between_reads_is_found() {
        let frames = frames(200);
        let (first, second) = DIED.split_at(DIED.find("trace:").unwrap());
        let kept = kept(&[first.as_bytes(), second.as_bytes(), frames.as_bytes()]);
        assert!(text(&kept, 0).starts_with(DIED));
    }

    #[test]
    fn a_short_stream_is_kept_whole_once() {
        let whole = format!("{DIED}{}{NOTE}", frames(3));
        let kept = kept(&[whole.as_bytes()]);
        assert_eq!(text(&kept, 0), whole);
        // From a mark on: only what came after it.
        assert_eq!(text(&kept, 7), &whole[7..]);
    }

    #[test]
    fn a_backtrace_before_the_mark_is_not_this_cases() {
        let frames = frames(200);
        let kept = kept(&[DIED.as_bytes(), frames.as_bytes(), b"next case\n"]);
        let mark = kept.written - "next case\n".len() as u64;
        assert_eq!(text(&kept, mark), "next case\n");
    }

    #[test]
    fn without_a_backtrace_the_last_bytes_are_kept() {
        let long = "x".repeat(3 * KEEP) + "\nlast words\n";
        let kept = kept(&[long.as_bytes()]);
        let said = text(&kept, 0);
        assert_eq!(said.len(), KEEP);
        assert!(said.ends_with("last words\n"));
    }

    #[test]
    fn a_line_written_in_pieces_is_passed_on_whole() {
        let mut lines = Lines::default();
        assert!(lines.whole(b"building ").is_empty());
        assert!(lines.whole(b"Model(1)").is_empty());
        assert_eq!(
            lines.whole(b" on head\nbuil"),
            b"building Model(1) on head\n"
        );
        assert_eq!(lines.whole(b"t\r"), b"built\r");
        assert!(lines.whole(b"last").is_empty());
        assert_eq!(lines.rest(), b"last");
        let mut long = Lines::default();
        let bar = vec![b'='; Lines::LONGEST + 1];
        assert_eq!(long.whole(&bar), bar);
    }
}
