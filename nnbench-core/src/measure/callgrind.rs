//! Exact instruction counts from Callgrind, valgrind's simulator of the
//! CPU: a bench binary under it asks, by valgrind's client requests, to
//! collect around the function's calls alone, then to write what was
//! collected to a file of its own, which it reads back. Valgrind decodes
//! every instruction the program runs, so the count of a call does not
//! depend on what else the machine is doing, and two runs of one build
//! give the same count.
//!
//! A client request is a sequence of instructions that does nothing on a
//! real CPU (it rotates a register by 128 bits, then exchanges a register
//! with itself) and that valgrind recognises: the request's arguments
//! are in memory that one register points to, and its answer lands in
//! another. Natively the answer register keeps the default it was given.

use std::path::{Path, PathBuf};

/// The environment variable that names the folder a worker under
/// Callgrind finds its dumps in (valgrind's `--callgrind-out-file` there).
pub(crate) const OUT_DIR_ENV: &str = "NNBENCH_CALLGRIND_OUT";

/// The file name of a worker's dumps, before valgrind's `.<pid>.<part>`.
pub(crate) const OUT_FILE: &str = "callgrind.out";

/// valgrind's own requests: `RUNNING_ON_VALGRIND`.
const RUNNING_ON_VALGRIND: u64 = 0x1001;

/// Callgrind's requests start at `('C' << 24) | ('T' << 16)`, in the order
/// callgrind.h lists them.
const CALLGRIND_BASE: u64 = ((b'C' as u64) << 24) | ((b'T' as u64) << 16);
const TOGGLE_COLLECT: u64 = CALLGRIND_BASE + 2;
const DUMP_STATS_AT: u64 = CALLGRIND_BASE + 3;

/// Makes client request `request` with one argument; natively (or on a
/// CPU this has no sequence for) the answer is `default`.
#[inline(always)]
fn request(default: u64, request: u64, arg: u64) -> u64 {
    let args: [u64; 6] = [request, arg, 0, 0, 0, 0];
    #[cfg(target_arch = "x86_64")]
    {
        let mut answer = default;
        // SAFETY: natively the sequence rotates rdi by 3 + 13 + 61 + 51 =
        // 128 bits (its value unchanged, declared clobbered all the same)
        // and exchanges rbx with itself; valgrind reads the six words at
        // rax, which live until the sequence ends, and writes rdx.
        unsafe {
            std::arch::asm!(
                "rol rdi, 3",
                "rol rdi, 13",
                "rol rdi, 61",
                "rol rdi, 51",
                "xchg rbx, rbx",
                inout("rdx") answer,
                in("rax") args.as_ptr(),
                out("rdi") _,
                options(nostack),
            );
        }
        answer
    }
    #[cfg(target_arch = "aarch64")]
    {
        let mut answer = default;
        // SAFETY: natively x12 is rotated by 128 bits and x10 or-ed with
        // itself; valgrind reads the six words at x4 and writes x3.
        unsafe {
            std::arch::asm!(
                "ror x12, x12, #3",
                "ror x12, x12, #13",
                "ror x12, x12, #51",
                "ror x12, x12, #61",
                "orr x10, x10, x10",
                inout("x3") answer,
                in("x4") args.as_ptr(),
                out("x12") _,
                options(nostack),
            );
        }
        answer
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = (request, arg, args);
        default
    }
}

/// Whether this process runs under valgrind.
pub(crate) fn running() -> bool {
    request(0, RUNNING_ON_VALGRIND, 0) > 0
}

/// Turns Callgrind's collection on where it was off, and off where it was
/// on; nothing natively. Valgrind starts the program with collection off
/// (`--collect-atstart=no`), so what runs between two toggles is counted.
#[inline(always)]
pub(crate) fn toggle_collect() {
    request(0, TOGGLE_COLLECT, 0);
}

/// Writes what was collected since the last dump to a new file labelled
/// `label`, and starts again from zero.
fn dump_at(label: &std::ffi::CStr) {
    request(0, DUMP_STATS_AT, label.as_ptr() as u64);
}

/// What Callgrind counted for one call, and the cache hits its simulated
/// caches make of it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Instructions executed (`Ir`).
    pub instructions: u64,
    /// Data reads and writes (`Dr`, `Dw`).
    pub data_accesses: u64,
    /// Reads and writes that missed the first-level caches (`I1mr`,
    /// `D1mr`, `D1mw`).
    pub l1_misses: u64,
    /// Those that missed the last-level cache too (`ILmr`, `DLmr`, `DLmw`).
    pub ll_misses: u64,
}

impl Counts {
    /// Accesses the first-level caches served.
    pub(crate) fn l1_hits(&self) -> u64 {
        (self.instructions + self.data_accesses).saturating_sub(self.l1_misses)
    }

    /// Accesses the last-level cache served.
    pub(crate) fn ll_hits(&self) -> u64 {
        self.l1_misses.saturating_sub(self.ll_misses)
    }

    /// Accesses that went to memory.
    pub(crate) fn ram_hits(&self) -> u64 {
        self.ll_misses
    }

    /// The cycles these accesses would take at 1 per first-level hit, 5 per
    /// last-level hit and 35 per memory access: the estimate that
    /// iai-callgrind and CodSpeed report.
    pub(crate) fn estimated_cycles(&self) -> u64 {
        self.l1_hits() + 5 * self.ll_hits() + 35 * self.ram_hits()
    }

    /// Reads the counts of a Callgrind dump: its `events:` line names the
    /// columns of its `summary:` line (trailing zeros left out).
    pub(crate) fn parse(dump: &str) -> Result<Self, String> {
        let field = |name: &str| {
            dump.lines()
                .find_map(|line| line.strip_prefix(name))
                .map(str::split_whitespace)
        };
        let events: Vec<&str> = field("events:").ok_or("no `events:` line")?.collect();
        let totals: Vec<u64> = field("summary:")
            .or_else(|| field("totals:"))
            .ok_or("no `summary:` line")?
            .map(|n| n.parse::<u64>().map_err(|e| format!("summary `{n}`: {e}")))
            .collect::<Result<_, _>>()?;
        let of = |event: &str| {
            events
                .iter()
                .position(|e| *e == event)
                .map(|at| totals.get(at).copied().unwrap_or(0))
        };
        let sum = |names: &[&str]| names.iter().filter_map(|n| of(n)).sum::<u64>();
        Ok(Self {
            instructions: of("Ir").ok_or("no `Ir` event: not an instruction count")?,
            data_accesses: sum(&["Dr", "Dw"]),
            l1_misses: sum(&["I1mr", "D1mr", "D1mw"]),
            ll_misses: sum(&["ILmr", "DLmr", "DLmw"]),
        })
    }
}

/// The dumps of this process, under Callgrind: valgrind writes the `n`th
/// to `<dir>/callgrind.out.<pid>.<n>`.
#[derive(Debug)]
pub(crate) struct Dumps {
    dir: PathBuf,
    taken: u64,
}

impl Dumps {
    /// This worker's dumps, where its supervisor told valgrind to write
    /// them; `None` outside such a worker.
    pub(crate) fn from_env() -> Option<Self> {
        let dir = std::env::var_os(OUT_DIR_ENV)?;
        Some(Self {
            dir: PathBuf::from(dir),
            taken: 0,
        })
    }

    /// Writes what was collected since the last dump, reads it back and
    /// removes the file.
    pub(crate) fn take(&mut self, label: &str) -> Result<Counts, String> {
        let label = std::ffi::CString::new(label.replace('\0', " "))
            .map_err(|e| format!("the dump's label: {e}"))?;
        dump_at(&label);
        self.taken += 1;
        let path = self.path(self.taken);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("Callgrind's dump {}: {e}", path.display()))?;
        // The file is Callgrind's; what it says is judged, not trusted.
        let _ = std::fs::remove_file(&path);
        Counts::parse(&text).map_err(|e| format!("Callgrind's dump {}: {e}", path.display()))
    }

    fn path(&self, part: u64) -> PathBuf {
        dump_path(&self.dir, std::process::id(), part)
    }
}

/// Where valgrind writes dump `part` of process `pid`.
fn dump_path(dir: &Path, pid: u32, part: u64) -> PathBuf {
    dir.join(format!("{OUT_FILE}.{pid}.{part}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = "\
version: 1
creator: callgrind-3.19.0
cmd:  ./bench
part: 2
desc: Trigger: Client Request: kernel/n=2
events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
summary: 18019 2005 2005 2 7 1 2
totals: 18007 2001 2000 1 0 0 1
";

    #[test]
    fn a_dump_gives_its_counts_and_the_cycles_they_would_take() {
        let c = Counts::parse(DUMP).unwrap();
        assert_eq!(c.instructions, 18019);
        assert_eq!(c.data_accesses, 4010);
        assert_eq!(c.l1_misses, 10);
        assert_eq!(c.ll_misses, 2, "the columns left out are zero");
        assert_eq!(c.l1_hits(), 18019 + 4010 - 10);
        assert_eq!(c.ll_hits(), 8);
        assert_eq!(c.estimated_cycles(), 22019 + 5 * 8 + 35 * 2);
    }

    #[test]
    fn a_dump_without_instructions_is_refused_with_what_it_lacks() {
        assert!(
            Counts::parse("summary: 1\n")
                .unwrap_err()
                .contains("events")
        );
        let no_ir = "events: Dr Dw\nsummary: 4 5\n";
        assert!(Counts::parse(no_ir).unwrap_err().contains("Ir"));
        let broken = "events: Ir\nsummary: many\n";
        assert!(Counts::parse(broken).unwrap_err().contains("many"));
    }

    #[test]
    fn natively_the_requests_answer_their_default_and_do_nothing() {
        assert!(!running(), "the tests do not run under valgrind");
        toggle_collect();
        toggle_collect();
        assert_eq!(request(7, RUNNING_ON_VALGRIND, 0), 7);
    }

    #[test]
    fn dumps_are_found_where_valgrind_writes_them() {
        assert_eq!(
            dump_path(Path::new("/tmp/x"), 42, 3),
            Path::new("/tmp/x/callgrind.out.42.3")
        );
    }
}
