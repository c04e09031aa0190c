//! Batches of Python documents (`Validator.is_valid_many`, `iter_errors_many`,
//! `digest_hex_many`; docs/pipelines.md): reading a Python object needs the GIL, the work on what
//! was read does not. So this thread reads a chunk of the list (converting each document, or
//! writing its canonical bytes) while a worker, without the GIL, finishes the chunk before it on
//! the rayon pool: reading and finishing overlap, and the finishing uses every core.
//!
//! That pays only when reading is cheaper than doing the whole job on this thread: a plain
//! document is validated in place (pynode.rs) for less than converting it costs, unless the
//! schema is a large one. So a large batch first times both on a few documents and takes the
//! pipelined route only where it wins.

use super::*;
use rayon::prelude::*;
use std::sync::mpsc::sync_channel;

/// Documents read before a chunk is handed to the worker.
const CHUNK: usize = 256;
/// Below this many documents a batch runs on this thread alone: a thread's start and the
/// handing over would cost more than they save.
const PARALLEL_FROM: usize = 1024;

/// Documents timed each way before a large batch picks its route.
const PROBE: usize = 32;

/// `whole(item)` for every item of `items`, in order, or the same answers as
/// `finish(read(item))` through [`pipelined`] when timing a few items says reading costs at most
/// three quarters of `whole`. The first error ends the batch and is returned.
pub(super) fn batch<T: Send, R: Send>(
    py: Python<'_>,
    items: &Bound<'_, PyList>,
    mut whole: impl FnMut(&Bound<'_, PyAny>) -> PyResult<R>,
    mut read: impl FnMut(&Bound<'_, PyAny>) -> PyResult<T>,
    finish: impl Fn(T) -> R + Sync,
) -> PyResult<Vec<R>> {
    use std::time::Instant;
    let len = items.len();
    if len < PARALLEL_FROM {
        return items.iter().map(|item| whole(&item)).collect();
    }
    let mut out = Vec::with_capacity(len);
    let started = Instant::now();
    for item in items.iter().take(PROBE) {
        out.push(whole(&item)?);
    }
    let whole_time = started.elapsed();
    let started = Instant::now();
    let mut probed = Vec::with_capacity(PROBE);
    for item in items.iter().skip(PROBE).take(PROBE) {
        probed.push(read(&item)?);
    }
    let read_time = started.elapsed();
    out.extend(probed.into_iter().map(&finish));
    let rest = items.get_slice(2 * PROBE, len);
    if read_time * 4 <= whole_time * 3 {
        out.extend(pipelined(py, &rest, read, finish)?);
    } else {
        for item in rest.iter() {
            out.push(whole(&item)?);
        }
    }
    Ok(out)
}

/// `finish(read(item))` for every item of `items`, in order: `read` on this thread with the GIL,
/// `finish` on the rayon pool without it. The first error `read` returns ends the batch (after
/// the worker has stopped) and is returned; Ctrl-C is noticed between chunks.
fn pipelined<T: Send, R: Send>(
    py: Python<'_>,
    items: &Bound<'_, PyList>,
    mut read: impl FnMut(&Bound<'_, PyAny>) -> PyResult<T>,
    finish: impl Fn(T) -> R + Sync,
) -> PyResult<Vec<R>> {
    let len = items.len();
    let (sender, receiver) = sync_channel::<Vec<T>>(2);
    std::thread::scope(|scope| {
        let finish = &finish;
        let worker = scope.spawn(move || {
            let mut out = Vec::with_capacity(len);
            for chunk in receiver {
                out.par_extend(chunk.into_par_iter().map(finish));
            }
            out
        });
        let mut outcome = Ok(());
        let mut chunk = Vec::with_capacity(CHUNK);
        for item in items.iter() {
            match read(&item) {
                Ok(read) => chunk.push(read),
                Err(error) => {
                    outcome = Err(error);
                    break;
                }
            }
            if chunk.len() == CHUNK {
                if let Err(error) = py.check_signals() {
                    outcome = Err(error);
                    break;
                }
                let full = std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK));
                // The worker only stops early by panicking; the join below reports that.
                if sender.send(full).is_err() {
                    break;
                }
            }
        }
        if outcome.is_ok() && !chunk.is_empty() {
            // As above: a send fails only when the worker panicked.
            let _ = sender.send(chunk);
        }
        drop(sender);
        let results = py.allow_threads(move || worker.join());
        match results {
            Ok(results) => outcome.map(|()| results),
            Err(payload) => std::panic::resume_unwind(payload),
        }
    })
}
