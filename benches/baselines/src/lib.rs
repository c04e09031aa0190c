//! What the two baselines share: the journal mapped into memory and cut into pieces at line ends,
//! each piece's lines handed to one rayon task, and a summary line on stdout that
//! benches/compare.py reads (events, chain links verified, seconds inside the process).
//!
//! Threads: `RAYON_NUM_THREADS`, as for the core.

use std::fs::File;
use std::ops::Range;
use std::time::Instant;

use rayon::prelude::*;

/// Pieces a journal is cut into: many more than threads, so work-stealing evens them out, and
/// few enough that a piece's fixed cost is nothing (~4 MB each on a 400 MB journal).
const PIECES: usize = 128;

/// What one piece found: its lines (events), how many lines after its first it verified, its
/// first line's link (what it names as the hash before it, and whether its own digest holds) and
/// its last line's hash: the first line is judged once the piece before it is known.
pub struct Piece<H> {
    pub events: u64,
    pub verified: u64,
    pub first: Option<(H, bool)>,
    pub last_hash: Option<H>,
}

impl<H> Default for Piece<H> {
    fn default() -> Self {
        Self {
            events: 0,
            verified: 0,
            first: None,
            last_hash: None,
        }
    }
}

/// Maps the file named by the first argument and runs `check` on its pieces in parallel, then
/// judges each piece's first line by the piece before it (`linked`), and prints `events verified seconds`.
pub fn run<H: Send>(
    check: impl Fn(&[u8]) -> Piece<H> + Sync,
    linked: impl Fn(&H, &H) -> bool,
) -> Result<(), String> {
    let path = std::env::args_os()
        .nth(1)
        .ok_or("usage: BASELINE JOURNAL.jsonl")?;
    let started = Instant::now();
    let file = File::open(&path).map_err(|error| format!("{path:?}: {error}"))?;
    // SAFETY: the benchmark's journal is not written while it is read.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|error| error.to_string())?;
    let pieces: Vec<Piece<H>> = pieces(&map)
        .into_par_iter()
        .map(|range| check(&map[range]))
        .collect();
    let mut events = 0;
    let mut verified = 0;
    let mut previous: Option<&H> = None;
    for piece in &pieces {
        events += piece.events;
        verified += piece.verified;
        if let Some((named, holds)) = &piece.first {
            // The journal's first line starts the chain: it links to nothing.
            verified += u64::from(*holds && previous.is_none_or(|before| linked(before, named)));
        }
        previous = piece.last_hash.as_ref().or(previous);
    }
    let seconds = started.elapsed().as_secs_f64();
    println!("{events} {verified} {seconds:.6}");
    Ok(())
}

/// `PIECES` ranges of `text`, each ending after a newline (the last at the end).
fn pieces(text: &[u8]) -> Vec<Range<usize>> {
    let step = text.len() / PIECES + 1;
    let mut ranges = Vec::with_capacity(PIECES);
    let mut start = 0;
    while start < text.len() {
        let guess = (start + step).min(text.len());
        let end = memchr::memchr(b'\n', &text[guess..]).map_or(text.len(), |at| guess + at + 1);
        ranges.push(start..end);
        start = end;
    }
    ranges
}

/// The lines of `text` without their newlines (a last line without one included).
pub fn lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let text = text.strip_suffix(b"\n").unwrap_or(text);
    text.split(|&byte| byte == b'\n')
        .filter(|line| !line.is_empty())
}
