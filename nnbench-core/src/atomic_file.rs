//! Files that appear whole or not at all: records, npy arrays and memo
//! cache entries are written under a temporary name in their folder, synced,
//! and renamed into place. A reader (another process sharing the folder, or
//! the next run after a crash) never sees a torn file, and a rename never
//! publishes data the disk does not hold yet.

use std::fs::{self, File};
use std::io;
use std::path::Path;

/// Why [`write`] failed: the file system, or the closure that filled the file.
#[derive(Debug)]
pub(crate) enum WriteError<E> {
    Io(io::Error),
    Fill(E),
}

/// Creates `path`'s folder if needed, lets `fill` write a temporary file
/// beside `path`, syncs it and renames it to `path`. On failure the
/// temporary file is removed and `path` is left as it was.
pub(crate) fn write<T, E>(
    path: &Path,
    fill: impl FnOnce(&mut File) -> Result<T, E>,
) -> Result<T, WriteError<E>> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir).map_err(WriteError::Io)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut builder = tempfile::Builder::new();
    let prefix = format!(".{name}.");
    builder.prefix(&prefix).suffix(".tmp");
    // A temporary file is private by default; what it becomes is created
    // as any file of the user's (the umask decides), so a record or a tier
    // shared through a group folder can be read by the group.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut temp = builder.tempfile_in(dir).map_err(WriteError::Io)?;
    let out = fill(temp.as_file_mut()).map_err(WriteError::Fill)?;
    temp.as_file().sync_all().map_err(WriteError::Io)?;
    temp.persist(path).map_err(|e| WriteError::Io(e.error))?;
    Ok(out)
}

/// The file that `temporary`, a file [`write`] fills (`.<name>.<random>.tmp`
/// beside it), would become; `None` for any other file. What a process
/// killed while writing leaves is found by it.
pub(crate) fn target_of_temporary(temporary: &Path) -> Option<std::path::PathBuf> {
    let name = temporary.file_name()?.to_str()?;
    let inner = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (target, random) = inner.rsplit_once('.')?;
    (!target.is_empty() && !random.is_empty()).then(|| temporary.with_file_name(target))
}

/// A name [`write`] could give the temporary file of `path`.
#[cfg(test)]
pub(crate) fn temporary_beside(path: &Path) -> Option<std::path::PathBuf> {
    let name = path.file_name()?.to_str()?;
    Some(path.with_file_name(format!(".{name}.a1B2c3.tmp")))
}

/// Whether a file can be written at `path`, found by making its folder and
/// a temporary file there: a run checks its `--out` so before its cases,
/// not after them.
pub(crate) fn check_writable(path: &Path) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    if path.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "a folder is there, where the file would go",
        ));
    }
    fs::create_dir_all(dir)?;
    tempfile::NamedTempFile::new_in(dir)?.close()
}

impl WriteError<io::Error> {
    /// The one `io::Error` of a fill that fails only with those.
    pub(crate) fn into_io(self) -> io::Error {
        match self {
            WriteError::Io(e) | WriteError::Fill(e) => e,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    #[test]
    fn a_temporary_file_names_the_file_it_becomes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ab.memo");
        let seen = std::cell::RefCell::new(None);
        write(&path, |f| {
            let temp = fs::read_dir(dir.path())
                .unwrap()
                .flatten()
                .next()
                .unwrap()
                .path();
            *seen.borrow_mut() = target_of_temporary(&temp);
            f.write_all(b"x")
        })
        .unwrap();
        assert_eq!(seen.into_inner(), Some(path.clone()));
        assert_eq!(target_of_temporary(&path), None);
        assert_eq!(target_of_temporary(&dir.path().join(".x.tmp")), None);
    }

    /// The process's umask as Linux reports it, without changing it (the
    /// tests of this process run side by side).
    #[cfg(target_os = "linux")]
    fn umask() -> u32 {
        let status = fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("Umask:")).unwrap();
        u32::from_str_radix(line["Umask:".len()..].trim(), 8).unwrap()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_written_file_has_the_mode_the_umask_gives() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.json");
        write(&path, |f| f.write_all(b"{}")).unwrap();
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666 & !umask(), "{mode:o}");
    }

    #[test]
    fn a_failed_fill_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested").join("run.json");
        write(&path, |f| f.write_all(b"old")).unwrap();
        let failed = write(&path, |f| {
            f.write_all(b"half")?;
            Err::<(), _>(io::Error::other("disk full"))
        });
        assert!(matches!(failed, Err(WriteError::Fill(_))));
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert_eq!(fs::read_dir(path.parent().unwrap()).unwrap().count(), 1);
    }
}
