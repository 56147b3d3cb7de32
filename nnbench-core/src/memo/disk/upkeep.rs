//! The disk tier as a whole: what it holds, kept within a size by dropping
//! the entries used least recently, and emptied. What `nnbench disk-tier`
//! shows and does, and what `--disk-tier-max` keeps.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

use super::{self as disk, DiskTier};

/// One entry of a disk tier, from [`DiskTier::entries`].
///
/// # Example
///
/// ```
/// for entry in nnbench::memo::DiskTier::Default.entries().unwrap() {
///     println!("{} {} bytes, built from {:?}", entry.memo, entry.bytes, entry.inputs);
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct DiskEntry {
    /// The entry's file.
    pub path: PathBuf,
    /// The memo's type.
    #[serde(rename = "type")]
    pub type_name: String,
    /// The memo's `Debug` description.
    pub memo: String,
    /// Its [`Memo::version`](crate::Memo::version) when it was saved.
    pub version: u32,
    /// Its [`Memo::fingerprint`](crate::Memo::fingerprint) when it was saved.
    pub fingerprint: Option<String>,
    /// The [`Format`](crate::store::Format) of its payload.
    pub format: String,
    /// The file's size.
    pub bytes: u64,
    /// The memos its compute resolved, directly, by description.
    pub inputs: Vec<String>,
    /// When it was last saved or loaded.
    #[serde(serialize_with = "rfc3339")]
    pub last_use: SystemTime,
    /// Why it would not be loaded (a corrupt or foreign file), if so.
    pub problem: Option<String>,
}

/// What [`DiskTier::prune`] did.
///
/// # Example
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let pruned = nnbench::memo::DiskTier::At(dir.path().into()).prune(1 << 30).unwrap();
/// assert!(pruned.removed.is_empty() && pruned.kept_bytes == 0);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Pruned {
    /// The entries removed, least recently used first.
    pub removed: Vec<DiskEntry>,
    /// How many entries are left.
    pub kept: usize,
    /// The bytes they hold.
    pub kept_bytes: u64,
}

impl DiskTier {
    /// The tier's entries, most recently used first.
    ///
    /// # Errors
    ///
    /// When the tier's folder exists and cannot be read.
    ///
    /// # Example
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// assert!(nnbench::memo::DiskTier::At(dir.path().into()).entries().unwrap().is_empty());
    /// ```
    pub fn entries(&self) -> crate::Result<Vec<DiskEntry>> {
        let mut entries = self.scan()?.entries();
        entries.sort_by_key(|e| std::cmp::Reverse(e.last_use));
        Ok(entries)
    }

    /// Removes the entries used least recently until the tier holds at
    /// most `max_bytes`, with what processes that died left behind: an
    /// entry a process is writing, reading or holds mapped now stays. Only the entries removed
    /// are read. `--disk-tier-max` does this after each case that saved
    /// an entry; `nnbench disk-tier prune --max SIZE` on demand.
    ///
    /// # Errors
    ///
    /// When the tier's folder cannot be read or an entry removed.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench::memo::DiskTier;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let pruned = DiskTier::At(dir.path().into()).prune(512 << 20).unwrap();
    /// assert_eq!(pruned.kept, 0);
    /// ```
    pub fn prune(&self, max_bytes: u64) -> crate::Result<Pruned> {
        let scan = self.scan()?;
        scan.remove_debris();
        let mut files = scan.files;
        files.sort_by_key(|(_, meta)| meta.modified().unwrap_or(SystemTime::UNIX_EPOCH));
        let mut held: u64 = files.iter().map(|(_, meta)| meta.len()).sum();
        let mut pruned = Pruned::default();
        for (path, meta) in files {
            // Described before it goes: its header is read from the file.
            let entry = (held > max_bytes).then(|| described(path.clone(), &meta));
            match entry {
                Some(entry) if remove_entry(&path).map_err(|e| context(e, &path))? => {
                    held -= meta.len();
                    pruned.removed.push(entry);
                }
                _ => {
                    pruned.kept += 1;
                    pruned.kept_bytes += meta.len();
                }
            }
        }
        Ok(pruned)
    }

    /// Removes every entry, and what processes that died left behind;
    /// returns how many it removed. An entry a process is writing, reading
    /// or holds mapped now stays.
    ///
    /// # Errors
    ///
    /// When the tier's folder cannot be read or an entry removed.
    ///
    /// # Example
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// assert_eq!(nnbench::memo::DiskTier::At(dir.path().into()).clear().unwrap(), 0);
    /// ```
    pub fn clear(&self) -> crate::Result<usize> {
        let scan = self.scan()?;
        scan.remove_debris();
        let mut removed = 0;
        for (path, _) in &scan.files {
            if remove_entry(path).map_err(|e| context(e, path))? {
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// The bytes of the tier's entries.
    pub(crate) fn bytes(&self) -> u64 {
        self.scan()
            .map(|scan| scan.files.iter().map(|(_, meta)| meta.len()).sum())
            .unwrap_or(0)
    }

    fn scan(&self) -> crate::Result<Scan> {
        let Some(dir) = self.dir() else {
            return Ok(Scan::default());
        };
        Scan::of(&dir).map_err(|e| context(e, &dir))
    }
}

fn context(error: io::Error, path: &Path) -> crate::Error {
    crate::Error::from(error).context(format!("memo cache: {}", path.display()))
}

/// Removes the entry at `path` unless a process is computing it, or
/// reads it or holds it mapped; says whether it did.
fn remove_entry(path: &Path) -> io::Result<bool> {
    let Some(_held) = disk::try_hold(path)? else {
        return Ok(false);
    };
    let Some(_unread) = disk::try_write_lock(path)? else {
        return Ok(false);
    };
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// What a tier's folder holds: `<type>/<hash>.memo` entries, and the lock
/// and half-written files of entries being computed (or of processes that
/// died computing them).
#[derive(Default)]
struct Scan {
    files: Vec<(PathBuf, fs::Metadata)>,
    locks: Vec<PathBuf>,
    /// Half-written entries, with the entry each would become.
    partial: Vec<(PathBuf, PathBuf)>,
}

impl Scan {
    fn of(dir: &Path) -> io::Result<Scan> {
        let mut scan = Scan::default();
        let folders = match fs::read_dir(dir) {
            Ok(folders) => folders,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(scan),
            Err(e) => return Err(e),
        };
        for folder in folders.flatten() {
            if !folder.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            for file in fs::read_dir(folder.path())?.flatten() {
                let path = file.path();
                let name = file.file_name().to_string_lossy().into_owned();
                if name.ends_with(".memo") {
                    if let Ok(meta) = file.metadata() {
                        scan.files.push((path, meta));
                    }
                } else if name.ends_with(".memo.lock") {
                    scan.locks.push(path);
                } else if let Some(entry) = crate::atomic_file::target_of_temporary(&path)
                    && entry.extension().is_some_and(|x| x == "memo")
                {
                    scan.partial.push((path, entry));
                }
            }
        }
        Ok(scan)
    }

    /// The entries, as their headers describe them.
    fn entries(&self) -> Vec<DiskEntry> {
        self.files
            .iter()
            .map(|(path, meta)| described(path.clone(), meta))
            .collect()
    }

    /// Removes the lock and half-written files no process holds: those of
    /// processes that died computing an entry.
    fn remove_debris(&self) {
        for (partial, entry) in &self.partial {
            if let Ok(Some(_held)) = disk::try_hold(entry) {
                let _ = fs::remove_file(partial);
            }
        }
        for lock in &self.locks {
            let entry = lock.with_extension("");
            // Taking the hold and letting it go removes the file.
            let _ = disk::try_hold(&entry);
        }
    }
}

/// The entry at `path`, as its header describes it.
fn described(path: PathBuf, meta: &fs::Metadata) -> DiskEntry {
    let last_use = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    match disk::header(&path) {
        Ok(header) => DiskEntry {
            type_name: header.key.type_name,
            memo: header.key.memo,
            version: header.key.version,
            fingerprint: header.key.fingerprint,
            format: header.key.format,
            bytes: meta.len(),
            inputs: header
                .meta
                .inputs
                .unwrap_or_default()
                .into_iter()
                .map(|input| input.memo)
                .collect(),
            last_use,
            problem: None,
            path,
        },
        Err(problem) => DiskEntry {
            type_name: String::new(),
            memo: String::new(),
            version: 0,
            fingerprint: None,
            format: String::new(),
            bytes: meta.len(),
            inputs: Vec::new(),
            last_use,
            problem: Some(problem),
            path,
        },
    }
}

fn rfc3339<S: serde::Serializer>(time: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&humantime::format_rfc3339_seconds(*time).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memo::disk::{Key, Meta};

    fn save(dir: &Path, memo: &str, bytes: usize, age_s: u64) -> PathBuf {
        let key = Key {
            type_name: "tests::Blob".into(),
            memo: memo.into(),
            version: 0,
            fingerprint: None,
            format: "raw-1".into(),
            build: None,
        };
        let path = key.path(dir);
        let meta = Meta {
            inputs: Some(Vec::new()),
            ..Meta::default()
        };
        disk::save(
            &path,
            &key,
            &meta,
            |out| Ok(out.write_all(&vec![7; bytes])?),
        )
        .unwrap();
        let then = SystemTime::now() - std::time::Duration::from_secs(age_s);
        fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(then)
            .unwrap();
        path
    }

    #[test]
    fn prune_drops_the_least_recently_used_until_the_tier_fits() {
        let dir = tempfile::tempdir().unwrap();
        let tier = DiskTier::At(dir.path().to_owned());
        save(dir.path(), "old", 100_000, 300);
        save(dir.path(), "mid", 100_000, 200);
        save(dir.path(), "new", 100_000, 100);
        std::fs::write(dir.path().join("tests--Blob").join("0000.memo"), b"junk").unwrap();
        let listed = tier.entries().unwrap();
        let memos: Vec<&str> = listed.iter().map(|e| e.memo.as_str()).collect();
        assert_eq!(memos, ["", "new", "mid", "old"]);
        assert!(listed[0].problem.as_deref().unwrap().contains("too short"));

        let entry = listed[1].bytes;
        let pruned = tier.prune(2 * entry + 10).unwrap();
        let removed: Vec<&str> = pruned.removed.iter().map(|e| e.memo.as_str()).collect();
        assert_eq!(removed, ["old"], "least recently used first, until it fits");
        assert_eq!((pruned.kept, pruned.kept_bytes), (3, 2 * entry + 4));
        assert!(tier.bytes() <= 2 * entry + 10);
        assert_eq!(tier.clear().unwrap(), 3);
        assert!(tier.entries().unwrap().is_empty());
    }

    #[test]
    fn an_entry_held_by_a_computing_process_stays_and_what_a_dead_one_left_goes() {
        let dir = tempfile::tempdir().unwrap();
        let tier = DiskTier::At(dir.path().to_owned());
        let path = save(dir.path(), "busy", 1000, 0);
        let (held, waited) = disk::hold(&path).unwrap();
        assert!(waited.is_zero());
        assert!(disk::lock_path(&path).exists());
        assert_eq!(tier.clear().unwrap(), 0);
        assert!(path.exists());
        drop(held);
        assert!(
            !disk::lock_path(&path).exists(),
            "the lock file goes with its hold"
        );

        // A lock file and a half-written entry, as a process killed while
        // computing leaves them.
        std::fs::write(disk::lock_path(&path), b"").unwrap();
        let partial = crate::atomic_file::temporary_beside(&path).unwrap();
        std::fs::write(&partial, b"half").unwrap();
        assert_eq!(tier.prune(u64::MAX).unwrap().kept, 1);
        assert!(!disk::lock_path(&path).exists() && !partial.exists());
    }

    #[test]
    fn a_wait_for_a_holder_that_never_lets_go_ends_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = save(dir.path(), "stuck", 1000, 0);
        // Held as a stopped process on another node would hold it.
        let (_held, _) = disk::hold(&path).unwrap();
        let limit = std::time::Duration::from_millis(200);
        let Err(error) = disk::hold_within(&path, limit) else {
            panic!("a second hold while the first is held");
        };
        assert_eq!(error.kind(), std::io::ErrorKind::TimedOut);
        let said = error.to_string();
        assert!(
            said.contains(&format!("process {}", std::process::id())),
            "{said}"
        );
        assert!(said.contains("NNBENCH_MEMO_LOCK_TIMEOUT"), "{said}");
    }
}
