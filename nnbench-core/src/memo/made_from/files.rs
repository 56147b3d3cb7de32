//! What a memo's inputs looked like when its value was made: its version,
//! its fingerprint, and the files that fingerprint read through
//! [`file_fingerprint`](super::super::file_fingerprint) or
//! [`file_digest`](super::super::file_digest).
//!
//! Knowing the files lets a later process take the fingerprint again
//! without the memo at hand (a `stat` per file), and tell a file that was
//! only touched (same bytes) from one that changed: a file whose length or
//! time moved is read and compared with the digest taken when the value
//! was made.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::{File, Metadata};
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex, PoisonError};

use serde::{Deserialize, Serialize};

/// A memo's version and fingerprint, as taken at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Seen {
    /// `Memo::version`.
    #[serde(default)]
    pub version: u32,
    /// `Memo::fingerprint`, when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// Why `Memo::fingerprint` failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
    /// The files the fingerprint looked at, in the order it looked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileSeen>,
}

/// One file a fingerprint looked at.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FileSeen {
    /// Where it was, absolute: the file this process read.
    pub path: PathBuf,
    /// The path as the memo named it, where that was relative: a later
    /// process looks for it under its own working directory, so that two
    /// checkouts sharing a disk tier, each naming `split.txt`, are checked
    /// against their own files. An absolute name is `path` itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub named: Option<PathBuf>,
    pub len: u64,
    /// Modification time, in nanoseconds since the Unix epoch (0 when the
    /// file system keeps none).
    pub modified_ns: u64,
    /// Which file it is and when its inode last changed (0 where the
    /// system does not say): what `cp -p`, `rsync -a` or `tar x` cannot put
    /// back when they restore the modification time of other bytes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub inode: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub changed_ns: u64,
    /// What `file_fingerprint` or `file_digest` returned for it: the part
    /// of the fingerprint this file accounts for.
    pub said: String,
    /// BLAKE3 of its bytes, where they were read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

/// How a file stands against what was seen of it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum FileNow {
    /// The same length and time, or other ones and the same bytes.
    Same,
    /// Other bytes, or another length or time and no digest to tell.
    Changed,
    /// It cannot be looked at any more.
    Gone(String),
}

impl Seen {
    /// Takes `version` and the fingerprint `fingerprint` gives, noting the
    /// files it looks at.
    pub(crate) fn take(
        version: u32,
        fingerprint: impl FnOnce() -> crate::Result<Option<String>>,
    ) -> Seen {
        let (fingerprint, files) = observing(fingerprint);
        match fingerprint {
            Ok(fingerprint) => Seen {
                version,
                fingerprint,
                unreadable: None,
                files,
            },
            Err(error) => Seen {
                version,
                fingerprint: None,
                unreadable: Some(format!("{error:#}")),
                files,
            },
        }
    }

    /// The fingerprint with each file's part replaced by a placeholder:
    /// what is left when every file is set aside. Two fingerprints whose
    /// templates match differ only in their files.
    fn template(&self) -> Option<String> {
        let mut template = self.fingerprint.clone()?;
        for (at, file) in self.files.iter().enumerate() {
            if !file.said.is_empty() {
                template = template.replace(&file.said, &format!("\u{0}{at}\u{0}"));
            }
        }
        Some(template)
    }

    /// Whether the fingerprint says more than its files do: words or
    /// numbers of its own (a setting, a variable), which only the memo can
    /// take again. Separators between the files' parts say nothing.
    pub(crate) fn besides_files(&self) -> bool {
        let Some(template) = self.template() else {
            return false;
        };
        let mut rest = template.as_str();
        let mut outside = String::new();
        while let Some(start) = rest.find('\u{0}') {
            outside.push_str(&rest[..start]);
            let after = &rest[start + 1..];
            rest = after.find('\u{0}').map_or("", |end| &after[end + 1..]);
        }
        outside.push_str(rest);
        outside.chars().any(char::is_alphanumeric)
    }

    /// Why `now` is not what `self` was, or `None` when it is the same
    /// (allowing files that were only touched).
    pub(crate) fn changed_to(&self, now: &Seen) -> Option<String> {
        if now.version != self.version {
            return Some(format!("version {} -> {}", self.version, now.version));
        }
        if let Some(why) = &now.unreadable {
            return Some(format!("it cannot be fingerprinted: {why}"));
        }
        if now.fingerprint == self.fingerprint && self.unreadable.is_none() {
            return None;
        }
        // Set aside, the files must still be the same files: two checkouts
        // that name their inputs by one relative path read two files.
        let same_shape = self.template() == now.template()
            && self.files.len() == now.files.len()
            && self
                .files
                .iter()
                .zip(&now.files)
                .all(|(a, b)| a.here() == b.path);
        if same_shape && let Some(why) = self.files_changed() {
            return Some(why);
        }
        if same_shape {
            return None;
        }
        Some(match (&self.fingerprint, &now.fingerprint) {
            (Some(old), Some(new)) => format!("fingerprint {old} -> {new}"),
            _ => "its fingerprint changed".to_owned(),
        })
    }

    /// Why the files seen are not as they were, or `None` when every one
    /// holds the same bytes.
    pub(crate) fn files_changed(&self) -> Option<String> {
        self.files.iter().find_map(|file| match file.now() {
            FileNow::Same => None,
            FileNow::Changed => Some(format!("file {}", shown(&file.here()))),
            FileNow::Gone(why) => Some(format!(
                "it cannot be fingerprinted: file {}: {why}",
                shown(&file.here())
            )),
        })
    }

    /// The same, with the digest of every file whose bytes are as they
    /// were when it was seen: what a value built from this one records.
    pub(crate) fn with_digests(&self) -> Seen {
        let mut seen = self.clone();
        for file in &mut seen.files {
            if file.digest.is_none() {
                file.digest = file.digest_if_unchanged();
            }
        }
        seen
    }
}

impl FileSeen {
    fn new(path: &Path, meta: &Metadata, said: &str, digest: Option<String>) -> FileSeen {
        let (inode, changed_ns) = identity(meta);
        FileSeen {
            path: std::path::absolute(path).unwrap_or_else(|_| path.to_owned()),
            named: path.is_relative().then(|| path.to_owned()),
            len: meta.len(),
            modified_ns: modified_ns(meta),
            inode,
            changed_ns,
            said: said.to_owned(),
            digest,
        }
    }

    /// How the file stands now: a `stat`, and a read only when its length
    /// or time moved and a digest of its bytes was taken.
    pub(crate) fn now(&self) -> FileNow {
        let here = self.here();
        let meta = match std::fs::metadata(&here) {
            Ok(meta) => meta,
            Err(e) => return FileNow::Gone(e.to_string()),
        };
        if self.as_it_was(&meta) {
            return FileNow::Same;
        }
        let Some(then) = &self.digest else {
            return FileNow::Changed;
        };
        match digest(&here) {
            Ok((now, _)) if now == *then => FileNow::Same,
            Ok(_) => FileNow::Changed,
            Err(e) => FileNow::Gone(e.to_string()),
        }
    }

    /// The file the memo's name stands for in this process: a relative
    /// name under the current working directory.
    fn here(&self) -> PathBuf {
        self.named
            .as_deref()
            .and_then(|named| std::path::absolute(named).ok())
            .unwrap_or_else(|| self.path.clone())
    }

    /// The digest of its bytes, if its length and time are still those
    /// seen: the bytes the value was made from.
    fn digest_if_unchanged(&self) -> Option<String> {
        let (digest, meta) = digest(&self.path).ok()?;
        self.as_it_was(&meta).then_some(digest)
    }

    /// Whether `meta` is the file as it was seen: its length and times, and
    /// the same inode (a file seen where the system gives none is judged
    /// by its length and modification time alone).
    fn as_it_was(&self, meta: &Metadata) -> bool {
        let (inode, changed_ns) = identity(meta);
        let same_identity =
            self.inode == 0 || (inode == self.inode && changed_ns == self.changed_ns);
        meta.len() == self.len && modified_ns(meta) == self.modified_ns && same_identity
    }
}

/// A path as a person would type it: relative to the current folder when
/// it lies below it.
fn shown(path: &Path) -> String {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_owned))
        .unwrap_or_else(|| path.to_owned())
        .display()
        .to_string()
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The file's inode and the time its inode last changed, in nanoseconds
/// since the Unix epoch; zeros where the system keeps neither.
pub(crate) fn identity(meta: &Metadata) -> (u64, u64) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let seconds = u64::try_from(meta.ctime()).unwrap_or(0);
        let nanos = u64::try_from(meta.ctime_nsec()).unwrap_or(0);
        (
            meta.ino(),
            seconds.saturating_mul(1_000_000_000).saturating_add(nanos),
        )
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        (0, 0)
    }
}

pub(crate) fn modified_ns(meta: &Metadata) -> u64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

thread_local! {
    /// The files seen by each fingerprint being taken on this thread,
    /// innermost last.
    static OBSERVED: RefCell<Vec<Vec<FileSeen>>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f`, returning what it returned and the files it looked at.
fn observing<T>(f: impl FnOnce() -> T) -> (T, Vec<FileSeen>) {
    struct Pop;
    impl Drop for Pop {
        fn drop(&mut self) {
            OBSERVED.with(|o| o.borrow_mut().pop());
        }
    }
    OBSERVED.with(|o| o.borrow_mut().push(Vec::new()));
    let pop = Pop;
    let out = f();
    let files = OBSERVED.with(|o| o.borrow_mut().last_mut().map(std::mem::take));
    drop(pop);
    (out, files.unwrap_or_default())
}

/// Notes, for the fingerprint being taken (if any), that it looked at
/// `path` and made `said` of it.
pub(crate) fn looked_at(path: &Path, meta: &Metadata, said: &str, digest: Option<String>) {
    OBSERVED.with(|o| {
        if let Some(files) = o.borrow_mut().last_mut() {
            files.push(FileSeen::new(path, meta, said, digest));
        }
    });
}

/// Notes that the fingerprint being taken (if any) looks at `path`, whose
/// part is told later ([`said_of`]): a directory, noted before the files
/// under it. Returns where it was noted.
pub(crate) fn looking_at(path: &Path, meta: &Metadata) -> Option<usize> {
    OBSERVED.with(|o| {
        let mut observed = o.borrow_mut();
        let files = observed.last_mut()?;
        files.push(FileSeen::new(path, meta, "", None));
        Some(files.len() - 1)
    })
}

/// Tells the part of the fingerprint that the file noted `at` accounts for.
pub(crate) fn said_of(at: Option<usize>, said: &str) {
    let Some(at) = at else { return };
    OBSERVED.with(|o| {
        if let Some(file) = o
            .borrow_mut()
            .last_mut()
            .and_then(|files| files.get_mut(at))
        {
            file.said = said.to_owned();
        }
    });
}

/// A file as it stood: its absolute path, length, modification time, inode
/// and inode change time.
type FileVersion = (PathBuf, u64, u64, (u64, u64));

/// Digests already taken in this process: a file that many memos were
/// built from is read once.
static DIGESTS: LazyLock<Mutex<HashMap<FileVersion, String>>> = LazyLock::new(Mutex::default);

/// `blake3:<hex>` of the file's bytes and the metadata they were read
/// under, from the process's digests where the file is as it was then.
pub(crate) fn digest(path: &Path) -> std::io::Result<(String, Metadata)> {
    let file = File::open(path)?;
    let meta = file.metadata()?;
    let key = (
        std::path::absolute(path).unwrap_or_else(|_| path.to_owned()),
        meta.len(),
        modified_ns(&meta),
        identity(&meta),
    );
    let digests = || DIGESTS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(known) = digests().get(&key) {
        return Ok((known.clone(), meta));
    }
    let mut hasher = blake3::Hasher::new();
    hasher.update_reader(&file)?;
    let digest = format!("blake3:{}", hasher.finalize().to_hex());
    digests().insert(key, digest.clone());
    Ok((digest, meta))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memo::{file_digest, file_fingerprint};

    fn touch(path: &Path) {
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(7);
        File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(later)
            .unwrap();
    }

    #[test]
    fn a_fingerprint_notes_the_files_it_read_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, b"one").unwrap();
        std::fs::write(&b, b"two").unwrap();
        let seen = Seen::take(3, || {
            Ok(Some(format!(
                "{}+{}+lr=0.1",
                file_fingerprint(&a)?,
                file_digest(&b)?
            )))
        });
        assert_eq!(seen.version, 3);
        assert_eq!(seen.files.len(), 2);
        assert!(seen.files[0].digest.is_none() && seen.files[1].digest.is_some());
        assert_eq!(seen.template().unwrap(), "\u{0}0\u{0}+\u{0}1\u{0}+lr=0.1");
        // Outside a fingerprint being taken, nothing is noted.
        file_fingerprint(&a).unwrap();
        assert!(Seen::take(0, || Ok(None)).files.is_empty());
    }

    #[test]
    fn a_touched_file_is_the_same_by_its_digest_and_changed_without_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("split.txt");
        std::fs::write(&path, b"1,2,3").unwrap();
        let seen = Seen::take(0, || file_fingerprint(&path).map(Some));
        let digested = seen.with_digests();
        touch(&path);
        let now = Seen::take(0, || file_fingerprint(&path).map(Some));
        assert_ne!(now.fingerprint, seen.fingerprint);
        assert_eq!(digested.changed_to(&now), None);
        assert_eq!(digested.files_changed(), None);
        assert!(seen.changed_to(&now).unwrap().starts_with("file "));

        std::fs::write(&path, b"1,2,4").unwrap();
        let why = digested.files_changed().unwrap();
        assert!(
            why.starts_with("file ") && why.ends_with("split.txt"),
            "{why}"
        );
        std::fs::remove_file(&path).unwrap();
        let gone = digested.files_changed().unwrap();
        assert!(gone.contains("cannot be fingerprinted"), "{gone}");
    }

    #[test]
    fn a_version_an_error_or_another_template_is_a_change() {
        let base = Seen::take(1, || Ok(Some("lr=0.1".into())));
        assert_eq!(
            base.changed_to(&Seen::take(1, || Ok(Some("lr=0.1".into())))),
            None
        );
        assert_eq!(
            base.changed_to(&Seen::take(2, || Ok(Some("lr=0.1".into()))))
                .unwrap(),
            "version 1 -> 2"
        );
        let failing = Seen::take(1, || Err(crate::Error::msg("registry unreachable")));
        assert!(
            base.changed_to(&failing)
                .unwrap()
                .contains("registry unreachable")
        );
        assert_eq!(
            base.changed_to(&Seen::take(1, || Ok(Some("lr=0.2".into()))))
                .unwrap(),
            "fingerprint lr=0.1 -> lr=0.2"
        );
    }

    #[test]
    fn one_name_in_two_folders_is_two_files() {
        let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (a, b) = (one.path().join("split.txt"), two.path().join("split.txt"));
        std::fs::write(&a, b"1,2,3").unwrap();
        std::fs::write(&b, b"4,5,6").unwrap();
        let time =
            std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        for path in [&a, &b] {
            File::options()
                .write(true)
                .open(path)
                .unwrap()
                .set_modified(time)
                .unwrap();
        }
        let first = Seen::take(0, || file_fingerprint(&a).map(Some)).with_digests();
        let second = Seen::take(0, || file_fingerprint(&b).map(Some));
        assert!(first.changed_to(&second).is_some());
    }

    #[test]
    fn other_bytes_under_a_restored_time_are_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("split.txt");
        std::fs::write(&path, b"1,2,3").unwrap();
        let then = std::fs::metadata(&path).unwrap().modified().unwrap();
        let seen = Seen::take(0, || file_fingerprint(&path).map(Some));
        // Rewritten, as `cp -p` or `tar x` would, with its time put back.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&path, b"1,2,4").unwrap();
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(then)
            .unwrap();
        let now = Seen::take(0, || file_fingerprint(&path).map(Some));
        assert!(seen.changed_to(&now).is_some());
        assert!(seen.files_changed().unwrap().starts_with("file "));
    }

    #[test]
    fn a_directory_is_seen_with_every_file_under_it() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir_all(data.join("part")).unwrap();
        std::fs::write(data.join("part/0.bin"), b"0").unwrap();
        std::fs::write(data.join("1.bin"), b"1").unwrap();
        let seen = Seen::take(0, || file_fingerprint(&data).map(Some));
        assert_eq!(
            seen.files.len(),
            4,
            "the directory, the one below it and two files"
        );
        assert_eq!(seen.files_changed(), None);
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(data.join("part/0.bin"), b"9").unwrap();
        assert!(seen.files_changed().unwrap().ends_with("0.bin"));
        let now = Seen::take(0, || file_fingerprint(&data).map(Some));
        assert!(seen.changed_to(&now).is_some());
        std::fs::write(data.join("2.bin"), b"2").unwrap();
        assert!(now.files_changed().unwrap().ends_with("data"));
    }

    #[test]
    fn a_setting_beside_the_files_is_more_than_they_say() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, b"one").unwrap();
        std::fs::write(&b, b"two").unwrap();
        let files_only = Seen::take(0, || {
            Ok(Some(format!(
                "{}+{}",
                file_fingerprint(&a)?,
                file_digest(&b)?
            )))
        });
        assert!(!files_only.besides_files());
        let with_setting = Seen::take(0, || Ok(Some(format!("{}+lr=0.1", file_fingerprint(&a)?))));
        assert!(with_setting.besides_files());
    }
}
