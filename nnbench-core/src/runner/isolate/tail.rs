//! A worker's stderr, passed on to ours as it comes, with its last bytes
//! kept: a process that dies often says why there last ("memory allocation
//! of N bytes failed", a native library's message before it aborts).

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How much of the end is kept.
const KEEP: usize = 4096;

pub(crate) struct Tail {
    kept: Arc<Mutex<Kept>>,
    thread: Option<JoinHandle<()>>,
}

/// The last bytes, and how many came in all.
#[derive(Default)]
struct Kept {
    bytes: VecDeque<u8>,
    written: u64,
}

impl Tail {
    /// Copies `from` to this process's stderr until it closes.
    pub(crate) fn forward(mut from: impl Read + Send + 'static) -> Self {
        let kept = Arc::new(Mutex::new(Kept::default()));
        let thread = std::thread::Builder::new()
            .name("nnbench-worker-stderr".into())
            .spawn({
                let kept = Arc::clone(&kept);
                move || {
                    let mut buffer = [0u8; 8192];
                    loop {
                        let read = match from.read(&mut buffer) {
                            Ok(0) => return,
                            Ok(read) => read,
                            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                            Err(_) => return,
                        };
                        let chunk = &buffer[..read];
                        // A closed stderr must not stop the worker's.
                        let _ = std::io::stderr().write_all(chunk);
                        let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
                        kept.bytes.extend(chunk);
                        kept.written += read as u64;
                        let excess = kept.bytes.len().saturating_sub(KEEP);
                        kept.bytes.drain(..excess);
                    }
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
        let after_mark = kept.written.saturating_sub(mark);
        let skip = kept
            .bytes
            .len()
            .saturating_sub(after_mark.try_into().unwrap_or(usize::MAX));
        let bytes: Vec<u8> = kept.bytes.iter().skip(skip).copied().collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}
