//! BLAKE3 for Python: the hash `check --state` proves a journal's verified prefix unchanged with
//! (python/pairling_fast/journal/state_file.py, docs/journals.md). A cryptographic hash, so no edit of
//! the prefix can be made to pass, at several times SHA-256's speed on one core (SIMD over many
//! 1 KiB chunks at once). The state's blocks are hashed on every core by Python's threads, each
//! reading and hashing its block here without the GIL. hashlib's interface plus two methods, so
//! the pure-Python path can use the `blake3` package's hasher in its place.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;

/// Bytes read at once by `update_from_fd`: within the CPU's caches, and one buffer a thread.
const PIECE: usize = 1 << 20;

std::thread_local! {
    /// Each thread's read buffer, kept from one block to the next (freed with the thread). A
    /// new one for each block was a fresh megabyte that the kernel mapped and zeroed page by
    /// page and the allocator gave back at once (`MIMALLOC_PURGE_DELAY=0`): at 1 GB, 0.06 s
    /// of a `check --state` re-run's CPU (benches/RESULTS.md).
    static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

#[pyclass(name = "Blake3", module = "pairling_fast._core")]
#[derive(Clone)]
pub(super) struct Blake3 {
    hasher: blake3::Hasher,
}

#[pymethods]
impl Blake3 {
    #[new]
    fn new() -> Self {
        Self {
            hasher: blake3::Hasher::new(),
        }
    }

    /// Feeds `data[start:end]` (no copy is made of it).
    #[pyo3(signature = (data, start=0, end=None))]
    fn update(
        &mut self,
        py: Python<'_>,
        data: PyBackedBytes,
        start: usize,
        end: Option<usize>,
    ) -> PyResult<()> {
        let end = end.unwrap_or(data.len());
        let bytes = data
            .get(start..end)
            .ok_or_else(|| PyValueError::new_err("a range outside the bytes"))?;
        let hasher = &mut self.hasher;
        py.allow_threads(|| {
            hasher.update(bytes);
        });
        Ok(())
    }

    /// Feeds the `length` bytes of the open file `fd` from `offset` (positional reads: the
    /// file's offset does not move, so threads may share it). OSError if the file ends first.
    #[cfg(unix)]
    fn update_from_fd(
        &mut self,
        py: Python<'_>,
        fd: i32,
        offset: u64,
        length: u64,
    ) -> PyResult<()> {
        use std::io;
        use std::os::fd::BorrowedFd;
        use std::os::unix::fs::FileExt;
        // SAFETY: the caller's open file, borrowed for this call and not closed here.
        let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
        let file = std::fs::File::from(borrowed.try_clone_to_owned()?);
        let hasher = &mut self.hasher;
        py.allow_threads(|| {
            BUFFER.with_borrow_mut(|buffer| {
                let wanted = PIECE.min(usize::try_from(length).unwrap_or(PIECE));
                if buffer.len() < wanted {
                    buffer.resize(wanted, 0);
                }
                let mut done = 0;
                while done < length {
                    let want = wanted.min(usize::try_from(length - done).unwrap_or(PIECE));
                    let read = file.read_at(&mut buffer[..want], offset + done)?;
                    if read == 0 {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "the journal ended while its verified prefix was re-hashed",
                        ));
                    }
                    hasher.update(&buffer[..read]);
                    done += read as u64;
                }
                Ok(())
            })
        })?;
        Ok(())
    }

    fn copy(&self) -> Self {
        self.clone()
    }

    fn hexdigest(&self) -> String {
        self.hasher.finalize().to_hex().to_string()
    }
}
