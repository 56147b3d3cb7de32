//! The memo cache's disk tier: one file per entry under
//! `target/nnbench/memo-cache/<type>/<hash>.memo`.
//!
//! A file is a small header and the payload the memo's
//! [`Format`](crate::store::Format) wrote, page-aligned so that it can be
//! memory-mapped:
//!
//! ```text
//! "NNBMEMO1" | header length (u32, little endian) | header (JSON) | zeros | payload
//! ```
//!
//! The header holds what the entry is for (memo type, description, version,
//! input fingerprint, format), what the value was made from (the memos its
//! compute resolved, as they were), the bytes it held, and the payload's
//! offset, length and BLAKE3 checksum. An entry that does not match what
//! is asked for, whose inputs changed, or whose payload is shorter or
//! differs from its checksum, is never loaded: it is reported and
//! recomputed. Entries are written under a temporary name and renamed into
//! place, so processes sharing the folder never see a torn one, and named
//! by a hash of the key, so no key can reach outside the folder. A process
//! computing an entry holds a lock file beside it ([`hold`]), so that
//! others wait for the entry instead of computing it too.

mod upkeep;

pub use upkeep::{DiskEntry, Pruned};

use std::cell::RefCell;
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{PoisonError, RwLock};

use serde::{Deserialize, Serialize};

use super::made_from::Input;
use crate::atomic_file::{self, WriteError};
use crate::store::Payload;

const MAGIC: &[u8; 8] = b"NNBMEMO1";
const PAGE: u64 = 4096;

/// Where the disk tier of persisted memos lives.
///
/// A [`Runner`](crate::Runner) uses its own (`--disk-tier-dir`,
/// `--no-disk-tier`) for its cases and their hooks; memos resolved outside
/// a run use the process's, which [`set_disk_tier`](crate::memo::set_disk_tier) sets.
///
/// # Example
///
/// ```
/// use nnbench::memo::DiskTier;
/// assert_eq!(DiskTier::Off.dir(), None);
/// assert_eq!(DiskTier::At("/scratch/memos".into()).dir(), Some("/scratch/memos".into()));
/// assert!(DiskTier::Default.dir().unwrap().ends_with("nnbench/memo-cache"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum DiskTier {
    /// `target/nnbench/memo-cache` under cargo's target folder.
    #[default]
    Default,
    /// No disk tier: persisted memos are computed and kept in memory only.
    Off,
    /// This folder.
    At(PathBuf),
}

impl DiskTier {
    /// The tier's folder, or `None` when it is off.
    ///
    /// # Example
    ///
    /// ```
    /// let tier = nnbench::memo::DiskTier::At("memos".into());
    /// assert_eq!(tier.dir().as_deref(), Some(std::path::Path::new("memos")));
    /// ```
    pub fn dir(&self) -> Option<PathBuf> {
        match self {
            DiskTier::Default => Some(crate::paths::memo_cache_dir()),
            DiskTier::Off => None,
            DiskTier::At(dir) => Some(dir.clone()),
        }
    }
}

/// The tier of resolves made outside a run.
static PROCESS_TIER: RwLock<DiskTier> = RwLock::new(DiskTier::Default);

thread_local! {
    /// The tier of the run going on in this thread, if any.
    static THREAD_TIER: RefCell<Option<DiskTier>> = const { RefCell::new(None) };
}

/// The tier in force on this thread: its run's, else the process's.
pub(crate) fn current() -> DiskTier {
    THREAD_TIER.with(|t| t.borrow().clone()).unwrap_or_else(|| {
        PROCESS_TIER
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    })
}

/// The folder of the tier in force, or `None` when it is off.
pub(crate) fn dir() -> Option<PathBuf> {
    current().dir()
}

pub(crate) fn set_process_tier(tier: DiskTier) {
    *PROCESS_TIER.write().unwrap_or_else(PoisonError::into_inner) = tier;
}

/// Runs `f` with `tier` in force on this thread (a run's, or
/// [`memo::with_disk_tier`](crate::memo::with_disk_tier)'s); the previous
/// tier is back afterwards, even if `f` panics.
pub(crate) fn with_thread_tier<T>(tier: DiskTier, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<DiskTier>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            THREAD_TIER.with(|t| *t.borrow_mut() = previous);
        }
    }
    let _restore = Restore(THREAD_TIER.with(|t| t.borrow_mut().replace(tier)));
    f()
}

/// What an entry is for; all of it must match for the entry to be used.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Key {
    /// The memo's type.
    #[serde(rename = "type")]
    pub type_name: String,
    /// Its `Debug` description.
    pub memo: String,
    /// `Memo::version`.
    pub version: u32,
    /// `Memo::fingerprint`.
    pub fingerprint: Option<String>,
    /// The format's name and version.
    pub format: String,
    /// The build whose fixtures these are, where fixtures are kept per
    /// build (a paired run, bisect); absent where builds share them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
}

impl Key {
    /// `<dir>/<type>/<hash>.memo`: the type's name with every character that
    /// could mean something to a file system replaced, and a hash of the key.
    pub(crate) fn path(&self, dir: &Path) -> PathBuf {
        let folder: String = self
            .type_name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '-'
                }
            })
            .take(120)
            .collect();
        let mut hasher = blake3::Hasher::new();
        for part in [
            self.type_name.as_str(),
            self.memo.as_str(),
            &self.version.to_string(),
            self.fingerprint.as_deref().unwrap_or(""),
            self.format.as_str(),
        ] {
            hasher.update(&(part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
        // Keyed apart only where a build is named: a shared entry keeps its
        // name.
        if let Some(build) = &self.build {
            hasher.update(b"build");
            hasher.update(build.as_bytes());
        }
        let hash = hasher.finalize().to_hex();
        dir.join(folder).join(format!("{}.memo", &hash[..32]))
    }
}

/// What an entry says of its value besides the payload.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Meta {
    /// The memos its compute resolved, as they were then; `None` in an
    /// entry written before they were recorded, which cannot be checked.
    #[serde(default)]
    pub inputs: Option<Vec<Input>>,
    /// The bytes the value held in memory when it was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// The bytes it held in GPU memory.
    #[serde(default)]
    pub device_bytes: u64,
    /// The build that computed it (the digest of its executable); `None`
    /// where that could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub made_by: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Header {
    #[serde(flatten)]
    pub key: Key,
    #[serde(flatten)]
    pub meta: Meta,
    payload_offset: u64,
    pub payload_bytes: u64,
    checksum: String,
}

/// Why an entry could not be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum EntryError {
    /// There is none: compute, and save.
    #[error("no entry")]
    Missing,
    /// There is one, but it must not be loaded: warn, compute, overwrite.
    #[error("{}: {reason}", path.display())]
    Unusable { path: PathBuf, reason: String },
    /// There is one, made from inputs that changed since: compute,
    /// overwrite, and say why.
    #[error("{0}")]
    Stale(String),
}

fn unusable(path: &Path, reason: impl Into<String>) -> EntryError {
    EntryError::Unusable {
        path: path.to_owned(),
        reason: reason.into(),
    }
}

/// Opens and verifies the entry for `key`; `stale` says why what it was
/// made from no longer holds, if it does not, before its payload is read;
/// `load` reads the value from its payload. A loaded entry's time is set
/// to now: the tier drops the entries least recently used first.
pub(crate) fn load<T>(
    path: &Path,
    key: &Key,
    stale: impl FnOnce(&[Input]) -> Option<String>,
    load: impl FnOnce(Payload<'_>) -> crate::Result<T>,
) -> Result<(T, Meta), EntryError> {
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(EntryError::Missing),
        Err(e) => return Err(unusable(path, e.to_string())),
    };
    read_lock(&file, path)?;
    let header = read_header(&mut file).map_err(|reason| unusable(path, reason))?;
    if header.key != *key {
        return Err(unusable(
            path,
            format!(
                "it holds {:?}, not {:?} (a foreign or outdated entry)",
                header.key, key
            ),
        ));
    }
    let Some(inputs) = &header.meta.inputs else {
        return Err(unusable(
            path,
            "written by an older nnbench, which did not record what the value was made from",
        ));
    };
    if let Some(why) = stale(inputs) {
        return Err(EntryError::Stale(why));
    }
    let file_len = file
        .metadata()
        .map_err(|e| unusable(path, e.to_string()))?
        .len();
    if header.payload_offset.checked_add(header.payload_bytes) != Some(file_len) {
        return Err(unusable(
            path,
            format!(
                "truncated: {file_len} bytes, but the header promises {} after offset {}",
                header.payload_bytes, header.payload_offset
            ),
        ));
    }
    let actual = checksum(&mut file, header.payload_offset, header.payload_bytes)
        .map_err(|e| unusable(path, e.to_string()))?;
    if actual != header.checksum {
        return Err(unusable(
            path,
            "corrupt: its payload does not match its checksum",
        ));
    }
    let payload = Payload::new(&file, path, header.payload_offset, header.payload_bytes);
    let value = load(payload).map_err(|e| unusable(path, format!("{e:#}")))?;
    // The time is only an order of use: an entry it cannot be set on is
    // dropped a little early.
    let _ = file.set_modified(std::time::SystemTime::now());
    Ok((value, header.meta))
}

/// Takes a reader's (shared) lock on the entry `file`, open from `path`:
/// a prune or clear, which takes the writer's lock before it removes an
/// entry, passes over one a process reads or holds mapped (the lock lasts
/// as long as the file, or a mapped value's copy of it, is open). Where
/// the file system takes no locks, the entry is read without one.
fn read_lock(file: &File, path: &Path) -> Result<(), EntryError> {
    match file.lock_shared() {
        Ok(()) => {}
        Err(e) if unsupported(&e) => {
            without_locks(path, &e);
            return Ok(());
        }
        Err(e) => {
            return Err(unusable(
                path,
                format!("could not be locked for reading: {e}"),
            ));
        }
    }
    // A prune that removed it while this process waited for the lock.
    if still_at(file, path) {
        Ok(())
    } else {
        Err(EntryError::Missing)
    }
}

/// Takes the writer's (exclusive) lock on the entry at `path` if no
/// process reads it now: `Ok(None)` when one does, or when it is gone.
/// Where the file system takes no locks, the entry is taken without one.
pub(crate) fn try_write_lock(path: &Path) -> io::Result<Option<File>> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(fs::TryLockError::WouldBlock) => Ok(None),
        Err(fs::TryLockError::Error(e)) if unsupported(&e) => {
            without_locks(path, &e);
            Ok(Some(file))
        }
        Err(fs::TryLockError::Error(e)) => Err(e),
    }
}

/// The header of the entry at `path`, without checking its payload.
pub(crate) fn header(path: &Path) -> Result<Header, String> {
    let mut file = File::open(path).map_err(|e| e.to_string())?;
    read_header(&mut file)
}

fn read_header(file: &mut File) -> Result<Header, String> {
    let mut prefix = [0u8; 12];
    file.read_exact(&mut prefix)
        .map_err(|_| "too short to be a memo cache entry".to_owned())?;
    if &prefix[..8] != MAGIC {
        return Err("not a memo cache entry (wrong magic)".into());
    }
    let len = u32::from_le_bytes([prefix[8], prefix[9], prefix[10], prefix[11]]) as u64;
    // A memo built from thousands of memos records them all.
    if len > 64 << 20 {
        return Err(format!("header of {len} bytes: corrupt"));
    }
    let mut text = vec![0u8; len as usize];
    file.read_exact(&mut text)
        .map_err(|_| "truncated inside its header".to_owned())?;
    serde_json::from_slice(&text).map_err(|e| format!("corrupt header: {e}"))
}

/// BLAKE3 of `len` bytes at `offset`, read (not mapped: a mapped payload
/// would become resident just to be checked).
fn checksum(file: &mut File, offset: u64, len: u64) -> io::Result<String> {
    file.seek(SeekFrom::Start(offset))?;
    let mut hasher = blake3::Hasher::new();
    let mut buffer = vec![0u8; 1 << 20];
    let mut left = len;
    while left > 0 {
        let want = buffer
            .len()
            .min(usize::try_from(left).unwrap_or(usize::MAX));
        let got = file.read(&mut buffer[..want])?;
        if got == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "payload ends early",
            ));
        }
        hasher.update(&buffer[..got]);
        left -= got as u64;
    }
    Ok(hasher.finalize().to_hex().to_string())
}

/// Entries this process has saved, to every tier: what `--disk-tier-max`
/// looks at before it prunes.
pub(crate) static SAVES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Writes the entry for `key`, saying `meta`, atomically; `save` writes
/// the payload. Returns the payload's size.
pub(crate) fn save(
    path: &Path,
    key: &Key,
    meta: &Meta,
    save: impl FnOnce(&mut dyn Write) -> crate::Result<()>,
) -> crate::Result<u64> {
    let written = atomic_file::write(path, |file| -> crate::Result<u64> {
        // The payload goes after a page-aligned header slot sized for the
        // largest header this key can have.
        let longest = Header {
            key: key.clone(),
            meta: meta.clone(),
            payload_offset: u64::MAX,
            payload_bytes: u64::MAX,
            checksum: "0".repeat(64),
        };
        let slot = 12 + serde_json::to_vec(&longest)?.len() as u64;
        let payload_offset = slot.div_ceil(PAGE) * PAGE;
        file.seek(SeekFrom::Start(payload_offset))?;
        let mut writer = HashingWriter {
            inner: io::BufWriter::new(&mut *file),
            hasher: blake3::Hasher::new(),
            written: 0,
        };
        save(&mut writer)?;
        writer.inner.flush()?;
        let (payload_bytes, checksum) = (
            writer.written,
            writer.hasher.finalize().to_hex().to_string(),
        );
        drop(writer);
        let header = serde_json::to_vec(&Header {
            key: key.clone(),
            meta: meta.clone(),
            payload_offset,
            payload_bytes,
            checksum,
        })?;
        file.seek(SeekFrom::Start(0))?;
        file.write_all(MAGIC)?;
        file.write_all(&(header.len() as u32).to_le_bytes())?;
        file.write_all(&header)?;
        Ok(payload_bytes)
    });
    SAVES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    written.map_err(|e| match e {
        WriteError::Io(e) => with_path(e, path),
        WriteError::Fill(e) => e,
    })
}

fn with_path(error: io::Error, path: &Path) -> crate::Error {
    crate::Error::from(error).context(format!("memo cache: {}", path.display()))
}

struct HashingWriter<W> {
    inner: W,
    hasher: blake3::Hasher,
    written: u64,
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(bytes)?;
        self.hasher.update(&bytes[..n]);
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// The lock file of the entry at `entry`: `<hash>.memo.lock` beside it.
pub(crate) fn lock_path(entry: &Path) -> PathBuf {
    let mut name = entry.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// This process's hold on an entry, taken before computing it: processes
/// sharing the tier that miss the entry meanwhile wait, then load what it
/// saved. The lock file exists only while held (or after its holder died,
/// when the next one takes it over): the kernel lets go of the lock of a
/// process that ends, however it ends.
pub(crate) struct Held {
    file: File,
    path: PathBuf,
}

impl Drop for Held {
    fn drop(&mut self) {
        // Removed while still locked: a process waiting on this file finds
        // it gone once it gets the lock, and locks the file now there.
        let _ = fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

/// How long a process waits for another that holds an entry it needs,
/// unless `NNBENCH_MEMO_LOCK_TIMEOUT` says (a duration: `90s`, `1h`): a
/// holder stopped on a node of a cluster would stall every other process.
const LOCK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30 * 60);

/// After this long waiting, a process says whom it waits for.
const SAY_AFTER: std::time::Duration = std::time::Duration::from_secs(5);

/// Takes the hold on the entry at `entry`, waiting for another process
/// that holds it, for `NNBENCH_MEMO_LOCK_TIMEOUT` at most; says how long it
/// waited.
pub(crate) fn hold(entry: &Path) -> io::Result<(Held, std::time::Duration)> {
    let limit = std::env::var("NNBENCH_MEMO_LOCK_TIMEOUT")
        .ok()
        .and_then(|limit| nnbench_vocab::parse_duration(&limit).ok())
        .unwrap_or(LOCK_TIMEOUT);
    hold_within(entry, limit)
}

/// [`hold`], giving up after `limit` with an error that names the holder.
pub(crate) fn hold_within(
    entry: &Path,
    limit: std::time::Duration,
) -> io::Result<(Held, std::time::Duration)> {
    let started = std::time::Instant::now();
    let mut said = false;
    loop {
        let (mut file, path) = open_lock(entry)?;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(fs::TryLockError::WouldBlock) => {}
                Err(fs::TryLockError::Error(e)) if unsupported(&e) => {
                    without_locks(&path, &e);
                    return Ok((Held { file, path }, std::time::Duration::ZERO));
                }
                Err(fs::TryLockError::Error(e)) => return Err(e),
            }
            let waited = started.elapsed();
            if waited >= limit {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "gave up after {} waiting for {} (NNBENCH_MEMO_LOCK_TIMEOUT sets how long)",
                        nnbench_vocab::format_ns(waited.as_nanos() as f64),
                        holder(&path)
                    ),
                ));
            }
            if !said && waited >= SAY_AFTER {
                said = true;
                super::journal::warn(format!(
                    "memo tier: waited for {} to finish {}",
                    holder(&path),
                    entry.display()
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        if still_at(&file, &path) {
            // Who holds it, for those that wait.
            let _ = file.set_len(0);
            let _ = writeln!(file, "process {} on {}", std::process::id(), host());
            let wait = started.elapsed();
            let wait = if wait > std::time::Duration::from_millis(20) {
                wait
            } else {
                std::time::Duration::ZERO
            };
            return Ok((Held { file, path }, wait));
        }
    }
}

/// Who holds the lock file at `path`, as its holder wrote it.
fn holder(path: &Path) -> String {
    match fs::read_to_string(path) {
        Ok(said) if !said.trim().is_empty() => said.trim().to_owned(),
        _ => format!("the process holding {}", path.display()),
    }
}

/// This machine's name, as the holder of a lock says it.
fn host() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| fs::read_to_string("/etc/hostname"))
        .map(|name| name.trim().to_owned())
        .unwrap_or_else(|_| "this machine".into())
}

/// The hold on the entry at `entry` if no other process has it now.
pub(crate) fn try_hold(entry: &Path) -> io::Result<Option<Held>> {
    let (file, path) = open_lock(entry)?;
    match file.try_lock() {
        Ok(()) if still_at(&file, &path) => Ok(Some(Held { file, path })),
        Ok(()) | Err(fs::TryLockError::WouldBlock) => Ok(None),
        Err(fs::TryLockError::Error(e)) if unsupported(&e) => {
            without_locks(&path, &e);
            Ok(Some(Held { file, path }))
        }
        Err(fs::TryLockError::Error(e)) => Err(e),
    }
}

/// Whether `error` says the file system takes no locks (some network file
/// systems without a lock daemon), as opposed to failing to take one.
fn unsupported(error: &io::Error) -> bool {
    #[cfg(unix)]
    if matches!(
        error.raw_os_error(),
        Some(libc::ENOSYS | libc::ENOTSUP | libc::ENOLCK)
    ) {
        return true;
    }
    error.kind() == io::ErrorKind::Unsupported
}

/// Says once a run that the tier goes on without locks, and what that
/// costs.
fn without_locks(lock: &Path, error: &io::Error) {
    super::journal::warn_once(format!(
        "memo tier: {} takes no file locks ({error}): it is used without them, so \
         processes sharing it may compute an entry twice, and a prune may remove an entry \
         another process is reading",
        lock.parent().unwrap_or(lock).display()
    ));
}

fn open_lock(entry: &Path) -> io::Result<(File, PathBuf)> {
    let path = lock_path(entry);
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    let file = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)?;
    Ok((file, path))
}

/// Whether `file` is still the file at `path`: not removed by the holder
/// it waited for.
#[cfg(unix)]
fn still_at(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::metadata(path)) {
        (Ok(held), Ok(there)) => (held.dev(), held.ino()) == (there.dev(), there.ino()),
        _ => false,
    }
}

/// Elsewhere an open file cannot be removed: the file held is the one there.
#[cfg(not(unix))]
fn still_at(_: &File, _: &Path) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_system_without_locks_is_told_from_a_lock_that_failed() {
        #[cfg(unix)]
        for errno in [libc::ENOSYS, libc::ENOTSUP, libc::ENOLCK] {
            assert!(unsupported(&io::Error::from_raw_os_error(errno)));
        }
        assert!(unsupported(&io::Error::from(io::ErrorKind::Unsupported)));
        assert!(!unsupported(&io::Error::from(
            io::ErrorKind::PermissionDenied
        )));
    }
}
