//! Validated `.npy` loading and atomic `.npy` writing.
//!
//! `ndarray_npy::read_npy` trusts the header: a 136-byte file whose header
//! declares 2^40 elements makes it allocate terabytes, and the allocation
//! failure aborts the process. [`read`] checks the header's shape and item
//! size against the file's length first, so a hostile or damaged file is an
//! error that names the file, never an abort.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write as _};
use std::path::{Path, PathBuf};

use ndarray::{Array, ArrayBase, Data, Dimension, IxDyn};
use ndarray_npy::{
    ReadNpyError, ReadNpyExt, ReadableElement, ViewElement, WritableElement, WriteNpyExt,
};
use py_literal::Value as PyValue;

use crate::atomic_file::{self, WriteError};
mod direct;
mod mapped;

pub use mapped::MappedArray;

const MAGIC: &[u8; 6] = b"\x93NUMPY";
/// numpy writes headers of a few hundred bytes; anything near this is not one.
const MAX_HEADER_BYTES: usize = 1 << 20;

/// The header of an `.npy` file.
///
/// # Example
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("a.npy");
/// nnbench::npy::write(&path, &ndarray::Array2::<f64>::zeros((2, 3))).unwrap();
/// let header = nnbench::npy::read_header(&path).unwrap();
/// assert_eq!(header.shape, [2, 3]);
/// assert_eq!(header.descr, "<f8");
/// assert_eq!(header.data_bytes(), 48);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Header {
    /// The numpy type descriptor, such as `<f8`.
    pub descr: String,
    /// Whether the data is stored in column-major order.
    pub fortran_order: bool,
    /// The array's shape.
    pub shape: Vec<usize>,
    /// Bytes of one element.
    pub item_size: usize,
    /// Where the data starts in the file.
    pub data_offset: u64,
}

impl Header {
    /// Bytes the data takes: elements times item size.
    ///
    /// # Example
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("w.npy");
    /// nnbench::npy::write(&path, &ndarray::Array2::<f32>::zeros((4, 4))).unwrap();
    /// assert_eq!(nnbench::npy::read_header(&path).unwrap().data_bytes(), 64);
    /// ```
    pub fn data_bytes(&self) -> u64 {
        // read_header has checked that this product fits.
        self.shape.iter().product::<usize>() as u64 * self.item_size as u64
    }
}

/// Why an `.npy` file could not be read or written. Every variant names the file.
///
/// # Example
///
/// ```
/// let err = nnbench::npy::read::<f64, ndarray::Ix2>("/no/such/model.npy").unwrap_err();
/// assert!(err.to_string().starts_with("/no/such/model.npy: "));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NpyError {
    /// The file could not be opened or read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// The file does not start with the `.npy` magic string.
    #[error("{}: not an .npy file (no \\x93NUMPY magic string)", path.display())]
    NotNpy {
        /// The file.
        path: PathBuf,
    },
    /// The format version is not 1.0, 2.0 or 3.0.
    #[error("{}: unsupported .npy format version {major}.{minor}", path.display())]
    Version {
        /// The file.
        path: PathBuf,
        /// Major version byte.
        major: u8,
        /// Minor version byte.
        minor: u8,
    },
    /// The header is damaged.
    #[error("{}: corrupt header: {reason}", path.display())]
    Header {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The array holds Python objects, which only pickle can load.
    #[error("{}: holds Python objects (dtype {descr:?}); loading them would run pickled code, so it is refused", path.display())]
    ObjectDtype {
        /// The file.
        path: PathBuf,
        /// The type descriptor.
        descr: String,
    },
    /// The element type is not a fixed-size number or bool.
    #[error("{}: unsupported dtype {descr}", path.display())]
    UnsupportedDtype {
        /// The file.
        path: PathBuf,
        /// The type descriptor as written in the header.
        descr: String,
    },
    /// The shape's element or byte count overflows.
    #[error("{}: shape {shape:?} of {item_size}-byte items overflows", path.display())]
    Overflow {
        /// The file.
        path: PathBuf,
        /// The declared shape.
        shape: Vec<usize>,
        /// Bytes of one element.
        item_size: usize,
    },
    /// The file is shorter or longer than its header says.
    #[error(
        "{}: header declares shape {shape:?} of {descr} ({expected} bytes of data) but the file holds {actual} bytes of data{}",
        path.display(),
        if actual < expected { " (truncated)" } else { " (trailing bytes)" }
    )]
    SizeMismatch {
        /// The file.
        path: PathBuf,
        /// The declared shape.
        shape: Vec<usize>,
        /// The type descriptor.
        descr: String,
        /// Bytes the header promises.
        expected: u64,
        /// Bytes the file has after the header.
        actual: u64,
    },
    /// The array has another number of dimensions than asked for.
    #[error("{}: array has {found} dimensions, expected {expected}", path.display())]
    WrongNdim {
        /// The file.
        path: PathBuf,
        /// The dimensions asked for.
        expected: usize,
        /// The dimensions in the file.
        found: usize,
    },
    /// The elements are of another type than asked for.
    #[error("{}: elements are {descr}, which cannot be read as {expected}", path.display())]
    WrongType {
        /// The file.
        path: PathBuf,
        /// The Rust type asked for.
        expected: &'static str,
        /// The type descriptor in the file.
        descr: String,
    },
    /// The data could not be read.
    #[error("{}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What ndarray-npy said.
        source: ReadNpyError,
    },
    /// The array could not be written.
    #[error("{}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What ndarray-npy said.
        source: ndarray_npy::WriteNpyError,
    },
}

/// Reads and validates the header of the `.npy` file at `path`.
///
/// # Errors
///
/// An [`NpyError`] naming the file when it is missing, not `.npy`, has a
/// damaged header, holds objects, or is shorter or longer than declared.
///
/// # Example
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("short.npy");
/// nnbench::npy::write(&path, &ndarray::arr1(&[1.0f32, 2.0, 3.0])).unwrap();
/// let bytes = std::fs::read(&path).unwrap();
/// std::fs::write(&path, &bytes[..bytes.len() - 4]).unwrap();
/// let err = nnbench::npy::read_header(&path).unwrap_err();
/// assert!(err.to_string().contains("truncated"));
/// ```
pub fn read_header(path: impl AsRef<Path>) -> Result<Header, NpyError> {
    let path = path.as_ref();
    let mut file = open(path)?;
    let len = file_len(path, &file)?;
    header_of(path, &mut file, len)
}

/// Reads the array in the `.npy` file at `path`, after checking that the
/// file holds exactly the data its header declares.
///
/// Memory is allocated only for data the file really has. Numbers stored
/// as this machine holds them (little-endian floats and integers, C order:
/// what numpy writes by default) are read from the file straight into the
/// array's allocation, which is advised for transparent huge pages on
/// Linux: one copy from the page cache, and a page fault per huge page
/// (the book's page of measured figures sets it beside `np.load`,
/// `scripts/figures.sh npy_load`). Other layouts (Fortran order,
/// big-endian) go through ndarray-npy, converted.
///
/// # Errors
///
/// An [`NpyError`] naming the file: missing, truncated, corrupt, holding
/// objects, of another element type or number of dimensions.
///
/// # Example
///
/// ```
/// use ndarray::{array, Array2, Ix2};
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("w.npy");
/// nnbench::npy::write(&path, &array![[1.0, 2.0], [3.0, 4.0]]).unwrap();
/// let w: Array2<f64> = nnbench::npy::read(&path).unwrap();
/// assert_eq!(w.sum(), 10.0);
///
/// let err = nnbench::npy::read::<f32, Ix2>(&path).unwrap_err();
/// assert!(err.to_string().contains("cannot be read as f32"));
/// ```
pub fn read<A, D>(path: impl AsRef<Path>) -> Result<Array<A, D>, NpyError>
where
    A: ReadableElement + 'static,
    D: Dimension,
{
    let path = path.as_ref();
    let file = open(path)?;
    let len = file_len(path, &file)?;
    read_validated(path, &file, 0, len)
}

/// Maps the `.npy` file at `path` read-only, as `np.load(path,
/// mmap_mode="r")` does: nothing is copied, pages are read from the file
/// when a case first touches them, and only those count as resident. The
/// header is checked against the file's length first, as [`read`] does.
///
/// The file must not change while it is mapped: bytes written by another
/// process show through the array, and a file cut short under it makes
/// reads past its new end fault.
///
/// # Errors
///
/// An [`NpyError`] naming the file: missing, truncated, corrupt, of another
/// element type (elements must be stored as this machine holds them) or
/// number of dimensions, or not mappable.
///
/// # Example
///
/// ```
/// use ndarray::{array, Ix2};
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("w.npy");
/// nnbench::npy::write(&path, &array![[1.0, 2.0], [3.0, 4.0]]).unwrap();
/// let w = nnbench::npy::map::<f64, Ix2>(&path).unwrap();
/// assert!(w.is_mapped());
/// assert_eq!(w.view().sum(), 10.0);
/// assert!(nnbench::npy::map::<f32, Ix2>(&path).is_err());
/// ```
pub fn map<A, D>(path: impl AsRef<Path>) -> Result<MappedArray<A, D>, NpyError>
where
    A: ViewElement + 'static,
    D: Dimension,
{
    let path = path.as_ref();
    let file = open(path)?;
    let len = file_len(path, &file)?;
    let header = header_of(path, &mut &file, len)?;
    check_ndim::<D>(path, &header)?;
    if direct::native_descr::<A>() != Some(header.descr.as_str()) {
        return Err(NpyError::WrongType {
            path: path.to_owned(),
            expected: std::any::type_name::<A>(),
            descr: header.descr,
        });
    }
    // SAFETY: a read-only private map; the documentation above says the
    // file must not change while mapped, as numpy's `mmap_mode="r"` asks.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|source| NpyError::Io {
        path: path.to_owned(),
        source,
    })?;
    MappedArray::from_map(map).map_err(|e| NpyError::Header {
        path: path.to_owned(),
        reason: e.to_string(),
    })
}

/// Reads the `.npy` array stored in `file` from `offset` for `len` bytes,
/// checking its header against that length first. Plain numbers stored as
/// this machine holds them go straight from the file into the array;
/// anything else through ndarray-npy.
pub(crate) fn read_validated<A, D>(
    path: &Path,
    file: &File,
    offset: u64,
    len: u64,
) -> Result<Array<A, D>, NpyError>
where
    A: ReadableElement + 'static,
    D: Dimension,
{
    let io = |source| NpyError::Io {
        path: path.to_owned(),
        source,
    };
    let region = || -> io::Result<io::Take<File>> {
        let mut region = file.try_clone()?;
        region.seek(SeekFrom::Start(offset))?;
        Ok(region.take(len))
    };
    let header = header_of(path, &mut region().map_err(io)?, len)?;
    check_ndim::<D>(path, &header)?;
    if !header.fortran_order && direct::native_descr::<A>() == Some(header.descr.as_str()) {
        let elements = header.shape.iter().product();
        // SAFETY: `native_descr` knows `A`: a plain number, valid for any bytes.
        let data =
            unsafe { direct::read_elements::<A>(file, offset + header.data_offset, elements) }
                .map_err(io)?;
        let shaped = Array::from_shape_vec(IxDyn(&header.shape), data)
            .ok()
            .and_then(|array| array.into_dimensionality::<D>().ok());
        // The header was checked against the file's length and `D` above.
        return shaped.ok_or_else(|| NpyError::Header {
            path: path.to_owned(),
            reason: format!("shape {:?} does not fit its data", header.shape),
        });
    }
    let reader = BufReader::new(region().map_err(io)?);
    Array::<A, D>::read_npy(reader).map_err(|source| match source {
        ReadNpyError::WrongDescriptor(_) => NpyError::WrongType {
            path: path.to_owned(),
            expected: std::any::type_name::<A>(),
            descr: header.descr.clone(),
        },
        source => NpyError::Read {
            path: path.to_owned(),
            source,
        },
    })
}

/// Writes `array` to `path` as `.npy`, atomically: readers see the old file
/// or the whole new one, never a torn one.
///
/// # Errors
///
/// An [`NpyError`] naming the file when it cannot be written.
///
/// # Example
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("ones.npy");
/// nnbench::npy::write(&path, &ndarray::Array1::<f64>::ones(5)).unwrap();
/// assert_eq!(nnbench::npy::read_header(&path).unwrap().shape, [5]);
/// ```
pub fn write<A, S, D>(path: impl AsRef<Path>, array: &ArrayBase<S, D>) -> Result<(), NpyError>
where
    A: WritableElement,
    S: Data<Elem = A>,
    D: Dimension,
{
    let path = path.as_ref();
    let written = atomic_file::write(path, |file| {
        let mut writer = BufWriter::new(file);
        array.write_npy(&mut writer)?;
        writer.flush().map_err(ndarray_npy::WriteNpyError::Io)
    });
    written.map_err(|e| match e {
        WriteError::Io(source) => NpyError::Io {
            path: path.to_owned(),
            source,
        },
        WriteError::Fill(source) => NpyError::Write {
            path: path.to_owned(),
            source,
        },
    })
}

/// An error unless the header has `D`'s number of dimensions.
fn check_ndim<D: Dimension>(path: &Path, header: &Header) -> Result<(), NpyError> {
    match D::NDIM.filter(|&n| n != header.shape.len()) {
        Some(expected) => Err(NpyError::WrongNdim {
            path: path.to_owned(),
            expected,
            found: header.shape.len(),
        }),
        None => Ok(()),
    }
}

fn open(path: &Path) -> Result<File, NpyError> {
    File::open(path).map_err(|source| NpyError::Io {
        path: path.to_owned(),
        source,
    })
}

fn file_len(path: &Path, file: &File) -> Result<u64, NpyError> {
    Ok(file
        .metadata()
        .map_err(|source| NpyError::Io {
            path: path.to_owned(),
            source,
        })?
        .len())
}

/// How deep a header may nest brackets: a dict holding a shape's tuple is
/// 2, a structured dtype's list of fields with their shapes 4. The Python
/// literal parser backtracks on unclosed brackets at a cost that grows
/// exponentially with their depth (the fuzzer found a header of 18 that
/// took seconds), so a deeper header is refused before it is parsed.
const MAX_NESTING: usize = 6;

/// The deepest nesting of `(`, `[` and `{` in `text`, outside its quoted
/// strings, whether or not they are closed.
fn nesting(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(_), '\\') => {
                chars.next();
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[' | '{') => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            (None, ')' | ']' | '}') => depth = depth.saturating_sub(1),
            (None, _) => {}
        }
    }
    deepest
}

/// Parses and checks the header of `.npy` bytes of length `file_len`.
pub(crate) fn header_of(
    path: &Path,
    file: &mut impl Read,
    file_len: u64,
) -> Result<Header, NpyError> {
    let corrupt = |reason: String| NpyError::Header {
        path: path.to_owned(),
        reason,
    };
    let mut prefix = [0u8; 8];
    read_exact(path, file, &mut prefix)?;
    if &prefix[..6] != MAGIC {
        return Err(NpyError::NotNpy {
            path: path.to_owned(),
        });
    }
    let (major, minor) = (prefix[6], prefix[7]);
    let (header_len, utf8) = match major {
        1 => {
            let mut len = [0u8; 2];
            read_exact(path, file, &mut len)?;
            (u16::from_le_bytes(len) as usize, false)
        }
        2 | 3 => {
            let mut len = [0u8; 4];
            read_exact(path, file, &mut len)?;
            (u32::from_le_bytes(len) as usize, major == 3)
        }
        _ => {
            return Err(NpyError::Version {
                path: path.to_owned(),
                major,
                minor,
            });
        }
    };
    let data_offset = if major == 1 { 10 } else { 12 } + header_len as u64;
    if header_len > MAX_HEADER_BYTES || data_offset > file_len {
        return Err(corrupt(format!(
            "header length {header_len} runs past the end of the {file_len}-byte file"
        )));
    }
    let mut text = vec![0u8; header_len];
    read_exact(path, file, &mut text)?;
    if !utf8 && !text.is_ascii() {
        return Err(corrupt("header is not ASCII".into()));
    }
    let text = String::from_utf8(text).map_err(|_| corrupt("header is not UTF-8".into()))?;
    let depth = nesting(&text);
    if depth > MAX_NESTING {
        return Err(corrupt(format!(
            "header nests brackets {depth} deep, where a .npy header nests {MAX_NESTING} at most"
        )));
    }
    let dict: PyValue = text
        .trim_end()
        .parse()
        .map_err(|e| corrupt(format!("header is not a Python literal: {e}")))?;
    let PyValue::Dict(entries) = dict else {
        return Err(corrupt("header is not a dict".into()));
    };
    let (mut descr, mut fortran_order, mut shape) = (None, None, None);
    for (key, value) in entries {
        match key.as_string().map(String::as_str) {
            Some("descr") => descr = Some(value),
            Some("fortran_order") => fortran_order = value.as_boolean(),
            Some("shape") => {
                shape = value.as_tuple().and_then(|dims| {
                    dims.iter()
                        .map(|d| usize::try_from(d.as_integer()?).ok())
                        .collect()
                });
                if shape.is_none() {
                    return Err(corrupt(format!("shape {value} is not a tuple of sizes")));
                }
            }
            _ => return Err(corrupt(format!("unknown key {key}"))),
        }
    }
    let descr = descr.ok_or_else(|| corrupt("no 'descr' key".into()))?;
    let fortran_order =
        fortran_order.ok_or_else(|| corrupt("no boolean 'fortran_order' key".into()))?;
    let shape: Vec<usize> = shape.ok_or_else(|| corrupt("no 'shape' key".into()))?;
    let descr = match descr {
        PyValue::String(s) => s,
        other => {
            return Err(NpyError::UnsupportedDtype {
                path: path.to_owned(),
                descr: format!("{other} (structured arrays are not supported)"),
            });
        }
    };
    let item_size = item_size(path, &descr)?;
    // ndarray takes a shape whose non-zero lengths multiply to at most
    // isize::MAX, however many zero lengths make it empty: (2^64-1, 0)
    // holds no element and is still no shape.
    let fits = |n: usize| isize::try_from(n).is_ok();
    let overflow = || NpyError::Overflow {
        path: path.to_owned(),
        shape: shape.clone(),
        item_size,
    };
    shape
        .iter()
        .filter(|&&d| d != 0)
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .and_then(|n| n.checked_mul(item_size))
        .filter(|&bytes| fits(bytes))
        .ok_or_else(overflow)?;
    let expected = shape
        .iter()
        .product::<usize>()
        .checked_mul(item_size)
        .ok_or_else(overflow)? as u64;
    let actual = file_len - data_offset;
    if expected != actual {
        return Err(NpyError::SizeMismatch {
            path: path.to_owned(),
            shape,
            descr,
            expected,
            actual,
        });
    }
    Ok(Header {
        descr,
        fortran_order,
        shape,
        item_size,
        data_offset,
    })
}

/// Bytes of one element of a simple descriptor such as `<f8` or `|b1`.
fn item_size(path: &Path, descr: &str) -> Result<usize, NpyError> {
    let body = descr.trim_start_matches(['<', '>', '|', '=']);
    let kind = body.chars().next();
    if kind == Some('O') {
        return Err(NpyError::ObjectDtype {
            path: path.to_owned(),
            descr: descr.to_owned(),
        });
    }
    let size = match kind {
        Some('b' | 'i' | 'u' | 'f' | 'c') => body[1..].parse::<usize>().ok(),
        _ => None,
    };
    size.filter(|&s| s > 0)
        .ok_or_else(|| NpyError::UnsupportedDtype {
            path: path.to_owned(),
            descr: descr.to_owned(),
        })
}

fn read_exact(path: &Path, file: &mut impl Read, buf: &mut [u8]) -> Result<(), NpyError> {
    file.read_exact(buf).map_err(|source| match source.kind() {
        io::ErrorKind::UnexpectedEof => NpyError::Header {
            path: path.to_owned(),
            reason: "file ends inside the header".into(),
        },
        _ => NpyError::Io {
            path: path.to_owned(),
            source,
        },
    })
}

#[cfg(test)]
mod tests {
    use ndarray::{Array2, Ix1, Ix2, array};

    use super::*;

    /// A version-1 file with `header` (padded as numpy pads it) and `data_len` zero bytes.
    fn craft(header: &str, data_len: usize) -> Vec<u8> {
        let mut text = header.to_owned();
        while !(10 + text.len() + 1).is_multiple_of(64) {
            text.push(' ');
        }
        text.push('\n');
        let mut bytes = MAGIC.to_vec();
        bytes.extend([1, 0]);
        bytes.extend((text.len() as u16).to_le_bytes());
        bytes.extend(text.as_bytes());
        bytes.extend(std::iter::repeat_n(0u8, data_len));
        bytes
    }

    fn file(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> PathBuf {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    fn read_f64(path: &Path) -> Result<Array2<f64>, NpyError> {
        read::<f64, Ix2>(path)
    }

    #[test]
    fn round_trips_c_and_fortran_order() {
        let dir = tempfile::tempdir().unwrap();
        let c = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let path = dir.path().join("c.npy");
        write(&path, &c).unwrap();
        assert_eq!(read_f64(&path).unwrap(), c);
        let f = c.t().to_owned();
        let path = dir.path().join("f.npy");
        write(&path, &f.t()).unwrap();
        assert_eq!(read_f64(&path).unwrap(), c);
    }

    #[test]
    fn every_plain_type_reads_straight_and_other_byte_orders_are_converted() {
        fn round_trip<A>(values: Vec<A>)
        where
            A: ReadableElement + WritableElement + PartialEq + std::fmt::Debug + Clone + 'static,
        {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("a.npy");
            let array = Array2::from_shape_vec((2, values.len() / 2), values).unwrap();
            write(&path, &array).unwrap();
            assert_eq!(read::<A, Ix2>(&path).unwrap(), array);
            assert!(direct::native_descr::<A>().is_some());
        }
        round_trip(vec![1.5f64, -2.0, 3.25, f64::MAX]);
        round_trip(vec![1.5f32, -2.0, 3.25, f32::MIN]);
        round_trip(vec![1i64, -2, i64::MAX, i64::MIN]);
        round_trip(vec![1i32, -2, 3, i32::MIN]);
        round_trip(vec![1i16, -2, 3, -4]);
        round_trip(vec![1i8, -2, 3, -4]);
        round_trip(vec![1u64, 2, 3, u64::MAX]);
        round_trip(vec![1u32, 2, 3, 4]);
        round_trip(vec![1u16, 2, 3, 4]);
        round_trip(vec![1u8, 2, 3, 255]);

        // Big-endian data, which numpy writes on request: converted, not
        // taken as is.
        let dir = tempfile::tempdir().unwrap();
        let header = "{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }";
        let mut bytes = craft(header, 0);
        bytes.extend(1.5f64.to_be_bytes());
        bytes.extend((-2.0f64).to_be_bytes());
        let path = file(&dir, "big.npy", &bytes);
        assert_eq!(read::<f64, Ix1>(&path).unwrap(), array![1.5, -2.0]);
    }

    #[test]
    fn a_mapped_file_is_checked_like_a_read_one_and_reads_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let c = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let path = dir.path().join("f.npy");
        write(&path, &c.t()).unwrap();
        let mapped = map::<f64, Ix2>(&path).unwrap();
        assert!(mapped.is_mapped());
        assert_eq!(mapped.view(), c.t());
        assert!(matches!(
            map::<f64, Ix1>(&path),
            Err(NpyError::WrongNdim { found: 2, .. })
        ));
        let header = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }";
        let short = file(&dir, "short.npy", &craft(header, 31));
        assert!(matches!(
            map::<f64, Ix2>(&short),
            Err(NpyError::SizeMismatch { .. })
        ));
    }

    #[test]
    fn a_header_declaring_2_pow_40_elements_is_an_error_not_an_abort() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = craft(
            "{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776,), }",
            8,
        );
        assert_eq!(bytes.len(), 136);
        let path = file(&dir, "huge.npy", &bytes);
        let err = read::<f64, Ix1>(&path).unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with(&path.display().to_string()), "{text}");
        assert!(
            text.contains("8796093022208 bytes of data") && text.contains("truncated"),
            "{text}"
        );
    }

    #[test]
    fn an_empty_shape_with_a_length_past_isize_is_refused() {
        // Found by tests/hostile_files.rs: zero elements, but no shape
        // ndarray can make, and ndarray-npy unwraps it.
        let dir = tempfile::tempdir().unwrap();
        let header =
            "{'descr': '<f8', 'fortran_order': True, 'shape': (18446744073709551615, 0,), }";
        let path = file(&dir, "empty.npy", &craft(header, 0));
        for outcome in [
            read::<f64, Ix2>(&path).map(drop),
            map::<f64, Ix2>(&path).map(drop),
            read_header(&path).map(drop),
        ] {
            assert!(
                matches!(outcome, Err(NpyError::Overflow { .. })),
                "{outcome:?}"
            );
        }
    }

    #[test]
    fn truncated_and_overlong_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let header = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }";
        let short = file(&dir, "short.npy", &craft(header, 31));
        assert!(matches!(
            read_f64(&short),
            Err(NpyError::SizeMismatch {
                expected: 32,
                actual: 31,
                ..
            })
        ));
        let long = file(&dir, "long.npy", &craft(header, 40));
        let err = read_f64(&long).unwrap_err();
        assert!(err.to_string().contains("trailing bytes"), "{err}");
        let exact = file(&dir, "exact.npy", &craft(header, 32));
        assert_eq!(read_f64(&exact).unwrap(), Array2::<f64>::zeros((2, 2)));
    }

    #[test]
    fn shapes_that_overflow_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let header =
            "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }";
        let path = file(&dir, "overflow.npy", &craft(header, 0));
        assert!(matches!(read_f64(&path), Err(NpyError::Overflow { .. })));
    }

    #[test]
    fn object_and_structured_dtypes_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let object = file(
            &dir,
            "object.npy",
            &craft(
                "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }",
                16,
            ),
        );
        let err = read::<f64, Ix1>(&object).unwrap_err();
        assert!(matches!(err, NpyError::ObjectDtype { .. }));
        assert!(err.to_string().contains("pickled code"), "{err}");
        let structured = file(
            &dir,
            "structured.npy",
            &craft(
                "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2,), }",
                16,
            ),
        );
        assert!(matches!(
            read::<f64, Ix1>(&structured),
            Err(NpyError::UnsupportedDtype { .. })
        ));
    }

    #[test]
    fn another_element_type_or_dimension_count_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f4.npy");
        write(&path, &array![[1.0f32, 2.0]]).unwrap();
        let err = read_f64(&path).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{}: elements are <f4, which cannot be read as f64",
                path.display()
            )
        );
        let err = read::<f32, Ix1>(&path).unwrap_err();
        assert!(
            matches!(
                err,
                NpyError::WrongNdim {
                    expected: 1,
                    found: 2,
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn damaged_headers_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let cases: [(&str, Vec<u8>); 6] = [
            ("not npy", b"PK\x03\x04 this is a zip file".to_vec()),
            ("empty", Vec::new()),
            (
                "garbage dict",
                craft("{'descr': '<f8', 'fortran_order': Fal", 0),
            ),
            (
                "no shape",
                craft("{'descr': '<f8', 'fortran_order': False, }", 0),
            ),
            (
                "unknown key",
                craft(
                    "{'descr': '<f8', 'fortran_order': False, 'shape': (), 'x': 1}",
                    8,
                ),
            ),
            (
                "negative shape",
                craft(
                    "{'descr': '<f8', 'fortran_order': False, 'shape': (-1,), }",
                    8,
                ),
            ),
        ];
        for (name, bytes) in cases {
            let path = file(&dir, &format!("{name}.npy"), &bytes);
            let err = read::<f64, ndarray::IxDyn>(&path).expect_err(name);
            assert!(
                err.to_string().starts_with(&path.display().to_string()),
                "{name}: {err}"
            );
        }
        let mut long_header = craft(
            "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }",
            8,
        );
        long_header[8..10].copy_from_slice(&u16::MAX.to_le_bytes());
        let path = file(&dir, "header past end.npy", &long_header);
        let err = read_f64(&path).unwrap_err();
        assert!(err.to_string().contains("runs past the end"), "{err}");
        let mut version = craft(
            "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }",
            8,
        );
        version[6] = 9;
        let path = file(&dir, "v9.npy", &version);
        assert!(matches!(
            read_f64(&path),
            Err(NpyError::Version { major: 9, .. })
        ));
    }

    #[test]
    fn a_missing_file_is_named() {
        let err = read_f64(Path::new("/no/such/dir/model.npy")).unwrap_err();
        assert!(
            err.to_string().starts_with("/no/such/dir/model.npy: "),
            "{err}"
        );
        assert!(matches!(err, NpyError::Io { .. }));
    }
}
