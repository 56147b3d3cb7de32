//! Memory bandwidth from STREAM's triad, `a[i] = b[i] + s · c[i]`, over
//! arrays well beyond the last-level cache (McCalpin, "Memory Bandwidth
//! and Machine Balance in Current High Performance Computers", 1995):
//! each pass moves three arrays of doubles, counted as STREAM counts them
//! (the write's read for ownership left out).

use std::hint::black_box;

/// The triad's arrays, one chunk per thread, each first written by the
/// thread that will use it (so that its pages lie near that thread's
/// core where memory is split between sockets).
pub(crate) struct Arrays {
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
}

/// The scalar of the triad.
const SCALAR: f64 = 3.0;

impl Arrays {
    /// Three arrays of `len` doubles.
    pub(crate) fn new(len: usize) -> Self {
        Self {
            a: vec![0.0; len],
            b: vec![1.0; len],
            c: vec![2.0; len],
        }
    }

    /// The bytes one pass over `threads` chunks counts: three arrays.
    pub(crate) fn bytes_per_pass(&self) -> f64 {
        3.0 * (self.a.len() * std::mem::size_of::<f64>()) as f64
    }

    /// The arrays cut into `parts` chunks, one for each thread.
    pub(crate) fn chunks(&mut self, parts: usize) -> Vec<Chunk<'_>> {
        let size = self.a.len().div_ceil(parts.max(1)).max(1);
        self.a
            .chunks_mut(size)
            .zip(self.b.chunks(size))
            .zip(self.c.chunks(size))
            .map(|((a, b), c)| Chunk { a, b, c })
            .collect()
    }
}

/// One thread's part of the arrays.
pub(crate) struct Chunk<'a> {
    a: &'a mut [f64],
    b: &'a [f64],
    c: &'a [f64],
}

impl Chunk<'_> {
    /// One pass of the triad over the chunk.
    pub(crate) fn pass(&mut self) {
        let scalar = black_box(SCALAR);
        for ((a, b), c) in self.a.iter_mut().zip(self.b).zip(self.c) {
            *a = b + scalar * c;
        }
        black_box(&mut *self.a);
    }

    /// Writes every page of the chunk from this thread.
    pub(crate) fn touch(&mut self) {
        self.a.fill(0.0);
    }

    /// Whether the last pass computed the triad.
    #[cfg(test)]
    fn holds_the_triad(&self) -> bool {
        self.a.iter().all(|&a| a == 1.0 + SCALAR * 2.0)
    }
}

/// The size of the largest cache this machine reports, in bytes.
pub(crate) fn last_level_cache() -> Option<u64> {
    let caches = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    caches
        .filter_map(|entry| {
            let size = std::fs::read_to_string(entry.ok()?.path().join("size")).ok()?;
            parse_size(size.trim())
        })
        .max()
}

/// A sysfs cache size: `32768K`, `2M`, or bytes.
fn parse_size(text: &str) -> Option<u64> {
    let (digits, scale) = match text.as_bytes().last()? {
        b'K' => (&text[..text.len() - 1], 1 << 10),
        b'M' => (&text[..text.len() - 1], 1 << 20),
        b'G' => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    digits.parse::<u64>().ok()?.checked_mul(scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_computes_the_triad_over_every_chunk() {
        let mut arrays = Arrays::new(1001);
        assert_eq!(arrays.bytes_per_pass(), 3.0 * 8.0 * 1001.0);
        let mut chunks = arrays.chunks(4);
        assert_eq!(chunks.len(), 4);
        for chunk in &mut chunks {
            chunk.touch();
            chunk.pass();
            assert!(chunk.holds_the_triad());
        }
    }

    #[test]
    fn cache_sizes_read_as_sysfs_writes_them() {
        assert_eq!(parse_size("32768K"), Some(32 << 20));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("lots"), None);
    }
}
