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
/// `PAIRLING_FAST_BATCH_ROUTE=pipelined` or `per-document` (read at every large batch) takes that
/// route instead of timing: for a workload whose better route is known, and for the tests, which
/// hold both routes to the per-document answers.
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
    let mut whole_times = Vec::with_capacity(PROBE);
    for item in items.iter().take(PROBE) {
        let started = Instant::now();
        out.push(whole(&item)?);
        whole_times.push(started.elapsed());
    }
    // Each read is finished (and dropped) before the next, as in the pipeline, where a finished
    // read's memory is reused. Medians, not sums: the first calls pay for cold code and fresh
    // memory (a first read took 20-30 µs against a usual 0.9 in one trial, #29).
    let mut read_times = Vec::with_capacity(PROBE);
    for item in items.iter().skip(PROBE).take(PROBE) {
        let started = Instant::now();
        let read = read(&item)?;
        read_times.push(started.elapsed());
        out.push(finish(read));
    }
    let (whole_time, read_time) = (median(whole_times), median(read_times));
    let rest = items.get_slice(2 * PROBE, len);
    let pipeline = match std::env::var_os("PAIRLING_FAST_BATCH_ROUTE") {
        Some(route) if route == "pipelined" => true,
        Some(route) if route == "per-document" => false,
        _ => read_time * 4 <= whole_time * 3,
    };
    if pipeline {
        out.extend(pipelined(py, &rest, read, finish)?);
    } else {
        for item in rest.iter() {
            out.push(whole(&item)?);
        }
    }
    Ok(out)
}

fn median(mut times: Vec<std::time::Duration>) -> std::time::Duration {
    times.sort_unstable();
    times.get(times.len() / 2).copied().unwrap_or_default()
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
