//! One clear line, not a silent crash, when a mapped capture file shrinks while it is read.
//!
//! The mapped reader ([`super::mapped`]) reads records in place. If another process truncates
//! the file meanwhile (a rotation by `copytruncate`, a capture restarted into the same name),
//! the next read of a page past the file's new end raises `SIGBUS` (POSIX `mmap`: references to
//! whole pages past the end of the object deliver `SIGBUS`), which ended the process without a
//! word, status 135. libpcap, reading with `fread`, reports a truncated file instead. A mapping
//! wrapped in [`Watched`] turns that signal, when it strikes inside the mapping, into one line on
//! standard error and exit status 1 (the report is not written: the frames read are not the
//! whole file any more); a `SIGBUS` anywhere else goes to the handler that was there before
//! (Rust's runtime's, or the default one).

use std::ops::Deref;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use memmap2::Mmap;

/// Mappings watched at once (a `correlate` run maps one file per capture); past that a mapping
/// is not watched, and a `SIGBUS` in it ends the process as it would without this module.
const SLOTS: usize = 64;

/// Start address of each watched mapping; 0: a free slot.
static STARTS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
/// End address (exclusive) of each watched mapping; 0 while its start is being set.
static ENDS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];

/// The `SIGBUS` disposition before ours, restored for a signal that is not ours; set once, when
/// the handler is installed.
static PREVIOUS: OnceLock<Option<libc::sigaction>> = OnceLock::new();

/// What the handler writes (it may only call async-signal-safe functions: no formatting).
const MESSAGE: &[u8] = b"roce-inspect: the capture file shrank while it was being read (SIGBUS on its mapped pages past the new end); stopped\n";

/// A file mapping watched for `SIGBUS` while it lives; derefs to the [`Mmap`].
pub struct Watched {
    map: Mmap,
    slot: Option<usize>,
}

impl Watched {
    /// Watch `map` (installing the handler on first use). Never fails: when the handler cannot
    /// be installed or every slot is taken, the mapping is simply not watched.
    pub fn new(map: Mmap) -> Watched {
        let slot = watch(map.as_ptr() as usize, map.len());
        Watched { map, slot }
    }

    /// Whether a `SIGBUS` inside this mapping is reported.
    #[cfg(test)]
    fn is_watched(&self) -> bool {
        self.slot.is_some()
    }
}

impl Deref for Watched {
    type Target = Mmap;

    fn deref(&self) -> &Mmap {
        &self.map
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            ENDS[i].store(0, Ordering::SeqCst);
            STARTS[i].store(0, Ordering::SeqCst);
        }
    }
}

/// Register `[start, start + len)`; its slot, if one was free and the handler is installed.
fn watch(start: usize, len: usize) -> Option<usize> {
    if start == 0 || len == 0 || PREVIOUS.get_or_init(install).is_none() {
        return None;
    }
    let i = (0..SLOTS).find(|&i| {
        STARTS[i]
            .compare_exchange(0, start, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    })?;
    ENDS[i].store(start + len, Ordering::SeqCst);
    Some(i)
}

/// Install the handler; the previous disposition, `None` if `sigaction` failed.
fn install() -> Option<libc::sigaction> {
    // SAFETY: plain `sigaction` calls with a zeroed, then filled, struct; the handler only
    // reads atomics and calls async-signal-safe functions (`write`, `_exit`, `sigaction`).
    unsafe {
        let mut new: libc::sigaction = std::mem::zeroed();
        new.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
        new.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut new.sa_mask);
        let mut old: libc::sigaction = std::mem::zeroed();
        (libc::sigaction(libc::SIGBUS, &new, &mut old) == 0).then_some(old)
    }
}

/// Whether `addr` lies in a watched mapping.
fn watched(addr: usize) -> bool {
    (0..SLOTS).any(|i| {
        let start = STARTS[i].load(Ordering::SeqCst);
        start != 0 && addr >= start && addr < ENDS[i].load(Ordering::SeqCst)
    })
}

extern "C" fn on_sigbus(_sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid `siginfo_t` to an `SA_SIGINFO` handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    if watched(addr) {
        // SAFETY: async-signal-safe calls on a static buffer.
        unsafe {
            libc::write(2, MESSAGE.as_ptr().cast(), MESSAGE.len());
            libc::_exit(1);
        }
    }
    // Not ours: put the previous disposition back and return; the faulting access runs again
    // and raises the signal under it.
    let previous = PREVIOUS.get().copied().flatten();
    // SAFETY: `sigaction` is async-signal-safe; `previous` came from `sigaction` itself.
    unsafe {
        match previous {
            Some(p) => libc::sigaction(libc::SIGBUS, &p, std::ptr::null_mut()),
            None => {
                libc::signal(libc::SIGBUS, libc::SIG_DFL);
                0
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ranges are found while watched and forgotten when dropped.
    #[test]
    fn a_mapping_is_watched_while_it_lives() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 10_000]).expect("write");
        let file = std::fs::File::open(&path).expect("open");
        // SAFETY: a private temporary file nobody else writes.
        let w = Watched::new(unsafe { Mmap::map(&file) }.expect("map"));
        assert!(w.is_watched());
        let start = w.as_ptr() as usize;
        assert!(watched(start) && watched(start + 9_999));
        assert!(!watched(start + 10_000) && !watched(start - 1));
        drop(w);
        assert!(!watched(start));
    }

    /// The test below run in a child process: read the first record of the capture named by
    /// `ROCE_SIGBUS_CHILD`, cut the file to its first page, read on.
    fn truncate_while_reading(path: &str) -> ! {
        let mut src = crate::source::FileSource::open(path).expect("open");
        assert!(src.is_mapped());
        assert!(src.next_record().expect("first record").is_some());
        std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|f| f.set_len(4096))
            .expect("truncate");
        while let Ok(Some(_)) = src.next_record() {}
        // Not reached: the walk reads record headers past the new end.
        std::process::exit(3)
    }

    /// A capture truncated while it is mapped and read ends the process with one line on
    /// standard error and status 1 (was: killed by SIGBUS, status 135, nothing said).
    #[test]
    fn a_capture_truncated_while_read_ends_with_one_line() {
        if let Some(path) = std::env::var_os("ROCE_SIGBUS_CHILD") {
            truncate_while_reading(path.to_str().expect("utf-8 path"));
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("cut.pcap");
        // 1,000 Ethernet records of 1,000 bytes: about 1 MB, most of it past the first page.
        let records: Vec<_> = (0..1000u64)
            .map(|i| crate::synth::capfile::Record::new(i * 1000, vec![0x5a; 1000]))
            .collect();
        std::fs::write(
            &path,
            crate::synth::capfile::pcap_bytes(1, 65_535, &records),
        )
        .expect("write");
        let out = std::process::Command::new(std::env::current_exe().expect("test binary"))
            .args([
                "--exact",
                "source::sigbus::tests::a_capture_truncated_while_read_ends_with_one_line",
                "--test-threads=1",
            ])
            .env("ROCE_SIGBUS_CHILD", &path)
            .output()
            .expect("run the child");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert_eq!(
            err.lines()
                .filter(|l| l.contains("capture file shrank"))
                .count(),
            1,
            "{err}"
        );
    }
}
