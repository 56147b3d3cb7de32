//! Formats in which a memo's value is kept on disk between runs (the memo
//! cache's disk tier): `.npy` for ndarray arrays (read into memory, or
//! memory-mapped read-only), JSON or a compact binary form (postcard) for
//! serde types, or your own through [`Format`]. None of them runs code on
//! load.
//!
//! A memo opts in by returning a format from [`Memo::store`](crate::Memo::store):
//!
//! ```
//! use ndarray::Array2;
//! use nnbench::Memo;
//! use nnbench::store::{Format, Npy};
//!
//! #[derive(Clone, Debug, Hash, PartialEq, Eq)]
//! struct Features { rows: usize }
//!
//! impl Memo for Features {
//!     type Value = Array2<f32>;
//!     fn compute(&self) -> nnbench::Result<Array2<f32>> {
//!         Ok(Array2::zeros((self.rows, 16)))
//!     }
//!     fn store(&self) -> Option<Box<dyn Format<Array2<f32>>>> {
//!         Some(Box::new(Npy))
//!     }
//! }
//! ```

mod npy_formats;
mod serde_formats;

// Documented in `npy`, which makes and reads it; kept here for the
// formats' users one more release.
#[doc(hidden)]
pub use crate::npy::MappedArray;
pub use npy_formats::{MappedNpy, Npy};
pub use serde_formats::{Binary, Json};

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use crate::Result;

/// A way to write a value to disk and read it back.
///
/// `name` identifies the encoding in each disk entry: change it when the
/// encoding changes, and old entries are recomputed instead of misread.
///
/// # Example
///
/// ```
/// use std::io::Write;
/// use nnbench::store::{Format, Payload};
///
/// /// Lines of text, one per element.
/// struct Lines;
///
/// impl Format<Vec<String>> for Lines {
///     fn name(&self) -> &'static str { "lines-1" }
///     fn save(&self, value: &Vec<String>, out: &mut dyn Write) -> nnbench::Result<()> {
///         for line in value {
///             writeln!(out, "{line}")?;
///         }
///         Ok(())
///     }
///     fn load(&self, payload: Payload<'_>) -> nnbench::Result<Vec<String>> {
///         let text = String::from_utf8(payload.read_all()?)?;
///         Ok(text.lines().map(str::to_owned).collect())
///     }
/// }
/// ```
pub trait Format<V>: Send + Sync {
    /// The encoding's name and version, such as `npy-1`.
    fn name(&self) -> &'static str;

    /// Writes `value`.
    ///
    /// # Errors
    ///
    /// When the value cannot be encoded or written; it then stays in memory
    /// only, with a warning.
    fn save(&self, value: &V, out: &mut dyn io::Write) -> Result<()>;

    /// Reads a value back from what [`save`](Self::save) wrote. The payload's
    /// length and checksum are verified before this is called.
    ///
    /// # Errors
    ///
    /// When the payload is not what `save` writes; the value is then
    /// computed again, with a warning.
    fn load(&self, payload: Payload<'_>) -> Result<V>;
}

/// The saved bytes of a disk entry: a region of its file.
///
/// # Example
///
/// ```
/// # fn f(payload: nnbench::store::Payload<'_>) -> nnbench::Result<()> {
/// let bytes = payload.read_all()?;
/// assert_eq!(bytes.len() as u64, payload.len());
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Payload<'a> {
    file: &'a File,
    path: &'a Path,
    offset: u64,
    len: u64,
}

impl<'a> Payload<'a> {
    pub(crate) fn new(file: &'a File, path: &'a Path, offset: u64, len: u64) -> Self {
        Self {
            file,
            path,
            offset,
            len,
        }
    }

    /// The entry's open file.
    pub(crate) fn file(&self) -> &'a File {
        self.file
    }

    /// Where the payload starts in the file.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    /// The payload's length in bytes.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(p: nnbench::store::Payload<'_>) { let _ = p.len(); }
    /// ```
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the payload is empty.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(p: nnbench::store::Payload<'_>) { let _ = p.is_empty(); }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entry's file, for messages.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(p: nnbench::store::Payload<'_>) { println!("{}", p.path().display()); }
    /// ```
    pub fn path(&self) -> &Path {
        self.path
    }

    /// A reader of the payload from its start.
    ///
    /// # Errors
    ///
    /// When the file cannot be read.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(p: nnbench::store::Payload<'_>) -> std::io::Result<()> {
    /// use std::io::Read;
    /// let mut first = [0u8; 4];
    /// p.reader()?.read_exact(&mut first)?;
    /// # Ok(()) }
    /// ```
    pub fn reader(&self) -> io::Result<impl Read + use<>> {
        let mut file = self.file.try_clone()?;
        file.seek(SeekFrom::Start(self.offset))?;
        Ok(file.take(self.len))
    }

    /// The whole payload in memory.
    ///
    /// # Errors
    ///
    /// When the file cannot be read.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(p: nnbench::store::Payload<'_>) -> std::io::Result<()> {
    /// let bytes = p.read_all()?;
    /// # Ok(()) }
    /// ```
    pub fn read_all(&self) -> io::Result<Vec<u8>> {
        let mut bytes = Vec::with_capacity(usize::try_from(self.len).unwrap_or(0));
        self.reader()?.read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// The payload mapped into memory read-only: pages are read from the file
    /// when first touched, and only those count as resident.
    ///
    /// # Errors
    ///
    /// When the file cannot be mapped.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(p: nnbench::store::Payload<'_>) -> std::io::Result<()> {
    /// let map = p.map()?;
    /// assert_eq!(map.len() as u64, p.len());
    /// # Ok(()) }
    /// ```
    pub fn map(&self) -> io::Result<memmap2::Mmap> {
        let len = usize::try_from(self.len).map_err(io::Error::other)?;
        // SAFETY: the map is read-only and private; entries are written
        // once under a temporary name and renamed into place, never
        // modified afterwards, so its bytes do not change under it.
        unsafe {
            memmap2::MmapOptions::new()
                .offset(self.offset)
                .len(len)
                .map(self.file)
        }
    }
}
