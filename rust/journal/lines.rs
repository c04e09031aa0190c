//! A journal's lines read into batches. The reader's bytes go straight into the buffer the
//! per-line stage reads, each line a span of it: the kernel's copy is the only one. (Reading
//! through a `BufReader` and copying each line out of it cost a second pass over every byte.)

use std::io::{self, Read};
use std::ops::Range;

/// A batch ends after this many lines or once its lines hold this many bytes, whichever comes
/// first: the unit of the per-line stage's parallel work and of the memory a check holds.
pub(super) const BATCH_LINES: usize = 4096;
pub(super) const BATCH_BYTES: usize = 4 << 20;
/// The buffer a batch keeps from one batch to the next (a longer line grows it for a while).
const USUAL_CAPACITY: usize = BATCH_BYTES + BATCH_BYTES / 8;
/// The most one read asks for. What was read past a batch's last line is copied to the start of
/// the next batch's buffer, so reads are sized to what the batch still wants, within these bounds.
const LARGEST_READ: usize = 256 << 10;
const SMALLEST_READ: usize = 16 << 10;

/// One line of a batch: where its bytes lie in the batch's buffer.
pub(super) enum RawLine {
    Text {
        number: u64,
        span: Range<usize>,
        terminated: bool,
    },
    TooLong {
        number: u64,
        length: u64,
    },
}

/// Lines read together: their bytes in one buffer (one allocation, reused from batch to batch),
/// handed to the workers as spans.
#[derive(Default)]
pub(super) struct Batch {
    /// Every byte initialised (zeroed once, as the buffer grows), so reads go straight into it;
    /// the batch's own bytes are the first `filled`.
    bytes: Vec<u8>,
    filled: usize,
    pub(super) lines: Vec<RawLine>,
}

impl Batch {
    pub(super) fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The bytes the lines' spans index.
    pub(super) fn text(&self) -> &[u8] {
        &self.bytes[..self.filled]
    }

    /// How many bytes the batch holds.
    pub(super) fn len(&self) -> usize {
        self.filled
    }

    /// Ends the line numbered `number`, `length` bytes long (without its newline): the span of
    /// the batch's bytes from `start`, or only its length if it is over `max_line_length` (its
    /// bytes, then, were not all kept). The one place a line is judged too long, for the reader
    /// and for the stream checker.
    pub(super) fn end_line(
        &mut self,
        number: u64,
        start: usize,
        length: u64,
        terminated: bool,
        max_line_length: usize,
    ) {
        self.lines.push(if length > max_line_length as u64 {
            RawLine::TooLong { number, length }
        } else {
            RawLine::Text {
                number,
                span: start..start + length as usize,
                terminated,
            }
        });
    }

    /// Appends `piece` to the batch's bytes.
    pub(super) fn extend(&mut self, piece: &[u8]) {
        self.room(piece.len()).copy_from_slice(piece);
        self.filled += piece.len();
    }

    /// Keeps the first `length` bytes.
    pub(super) fn truncate(&mut self, length: usize) {
        self.filled = self.filled.min(length);
    }

    /// Moves the bytes from `from` on to the front, dropping those before it (an unfinished line
    /// becomes the next batch's first), and gives back what a long line grew the buffer by.
    pub(super) fn keep_from(&mut self, from: usize) {
        self.bytes.copy_within(from..self.filled, 0);
        self.filled -= from;
        self.shrink_to_usual();
    }

    fn shrink_to_usual(&mut self) {
        let usual = USUAL_CAPACITY.max(self.filled);
        if self.bytes.len() > usual {
            self.bytes.truncate(usual);
            self.bytes.shrink_to_fit();
        }
    }

    /// Room for `wanted` more bytes after `filled`, initialised.
    fn room(&mut self, wanted: usize) -> &mut [u8] {
        let end = self.filled + wanted;
        if self.bytes.len() < end {
            if self.bytes.capacity() < USUAL_CAPACITY {
                self.bytes.reserve_exact(USUAL_CAPACITY - self.bytes.len());
            }
            self.bytes.resize(end, 0);
        }
        &mut self.bytes[self.filled..end]
    }
}

pub(super) struct LineReader<R> {
    reader: R,
    max_line_length: usize,
    /// The number of the last line handed out.
    pub(super) number: u64,
    finished: bool,
    /// The input ended inside a line: its last line has no newline.
    pub(super) torn: bool,
    /// Where the next line begins, in bytes from the reader's start.
    pub(super) consumed: u64,
    /// What was read past the last line of a batch: the first bytes of the next.
    carry: Vec<u8>,
}

impl<R: Read> LineReader<R> {
    /// Lines of `reader` numbered on from `number`; a line over `max_line_length` bytes is
    /// consumed but not kept.
    pub(super) fn new(reader: R, max_line_length: usize, number: u64) -> Self {
        LineReader {
            reader,
            max_line_length,
            number,
            finished: false,
            torn: false,
            consumed: 0,
            carry: Vec::new(),
        }
    }

    /// The next batch, bounded by `BATCH_LINES` and `BATCH_BYTES` (and by `more`, asked before
    /// each line), read into `batch`'s buffers: a check reuses two batches' memory throughout.
    /// A fresh buffer per batch cost more than the reading itself (the kernel faulted in and
    /// zeroed its pages every time, once the allocator had handed the last one back).
    pub(super) fn next_batch(
        &mut self,
        mut batch: Batch,
        mut more: impl FnMut(&Self) -> bool,
    ) -> io::Result<Batch> {
        batch.lines.clear();
        batch.lines.reserve(BATCH_LINES);
        batch.filled = 0;
        batch.shrink_to_usual();
        batch.extend(&self.carry);
        self.carry.clear();
        // Where the line being read begins, and how many of its bytes hold no newline.
        let mut start = 0;
        let mut scanned = 0;
        while batch.lines.len() < BATCH_LINES && start < BATCH_BYTES && more(self) {
            let unscanned = &batch.bytes[start + scanned..batch.filled];
            if let Some(at) = memchr::memchr(b'\n', unscanned) {
                let end = start + scanned + at;
                self.take(&mut batch, start, (end - start) as u64, true);
                start = end + 1;
                scanned = 0;
            } else if self.finished {
                let end = batch.filled;
                if end > start {
                    self.torn = true;
                    self.take(&mut batch, start, (end - start) as u64, false);
                    start = end;
                }
                break;
            } else {
                scanned = batch.filled - start;
                if scanned > self.max_line_length {
                    self.skip_long_line(&mut batch, start)?;
                    scanned = 0;
                } else {
                    let wanted = self.read_size(&batch, start);
                    self.fill(&mut batch, wanted)?;
                }
            }
        }
        self.carry
            .extend_from_slice(&batch.bytes[start..batch.filled]);
        batch.filled = start;
        Ok(batch)
    }

    /// Hands out the line of `length` bytes at `start` (without its newline), or only its
    /// length if it is too long.
    fn take(&mut self, batch: &mut Batch, start: usize, length: u64, terminated: bool) {
        self.number += 1;
        self.consumed += length + u64::from(terminated);
        batch.end_line(self.number, start, length, terminated, self.max_line_length);
    }

    /// The line at `start` has no newline in the buffer and is already too long: reads on to its
    /// end keeping none of it, and hands out its length. What follows its newline is left at
    /// `start`.
    fn skip_long_line(&mut self, batch: &mut Batch, start: usize) -> io::Result<()> {
        let mut length = (batch.filled - start) as u64;
        batch.filled = start;
        let terminated = loop {
            if self.finished {
                self.torn = true;
                break false;
            }
            self.fill(batch, LARGEST_READ)?;
            let read = &batch.bytes[start..batch.filled];
            if let Some(at) = memchr::memchr(b'\n', read) {
                length += at as u64;
                batch.bytes.copy_within(start + at + 1..batch.filled, start);
                batch.filled -= at + 1;
                break true;
            }
            length += read.len() as u64;
            batch.filled = start;
        };
        // Over the limit: `take` keeps only its length.
        self.take(batch, start, length, terminated);
        Ok(())
    }

    /// How much to read next: about what the batch still wants (it has fewer than `BATCH_LINES`
    /// lines and `start` is below `BATCH_BYTES`), judged by its lines so far.
    fn read_size(&self, batch: &Batch, start: usize) -> usize {
        let lines = batch.lines.len();
        if lines == 0 {
            return LARGEST_READ;
        }
        let per_line = start.div_ceil(lines);
        let wanted = (per_line * (BATCH_LINES - lines)).min(BATCH_BYTES - start);
        wanted.clamp(SMALLEST_READ, LARGEST_READ)
    }

    /// Reads up to `wanted` bytes after the batch's `filled` ones; at the end of the input, notes
    /// that it is finished.
    fn fill(&mut self, batch: &mut Batch, wanted: usize) -> io::Result<()> {
        loop {
            match self.reader.read(batch.room(wanted)) {
                Ok(0) => {
                    self.finished = true;
                    return Ok(());
                }
                Ok(read) => {
                    batch.filled += read;
                    return Ok(());
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a batch handed out, comparable: number, then the text or the too-long length, and
    /// whether a newline ended it.
    #[derive(Clone, Debug, PartialEq)]
    enum Got {
        Text(u64, Vec<u8>, bool),
        TooLong(u64, u64),
    }

    /// Hands out its input in pieces of the sizes given in turn (as a pipe or a socket does),
    /// with an `Interrupted` error before each.
    struct Pieces<'a> {
        input: &'a [u8],
        sizes: Vec<usize>,
        turn: usize,
        interrupt: bool,
    }

    impl Read for Pieces<'_> {
        fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
            self.interrupt = !self.interrupt;
            if self.interrupt {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let size = self.sizes[self.turn % self.sizes.len()];
            self.turn += 1;
            let count = size.min(buffer.len()).min(self.input.len());
            buffer[..count].copy_from_slice(&self.input[..count]);
            self.input = &self.input[count..];
            Ok(count)
        }
    }

    /// Every line of `input` the way the reader must hand it out, from a plain split.
    fn expected(input: &[u8], max: usize) -> (Vec<Got>, bool) {
        let mut got = Vec::new();
        let mut rest = input;
        let mut number = 0;
        while !rest.is_empty() {
            number += 1;
            let (line, terminated, next) = match memchr::memchr(b'\n', rest) {
                Some(at) => (&rest[..at], true, &rest[at + 1..]),
                None => (rest, false, &rest[rest.len()..]),
            };
            got.push(if line.len() > max {
                Got::TooLong(number, line.len() as u64)
            } else {
                Got::Text(number, line.to_vec(), terminated)
            });
            rest = next;
        }
        (got, !input.is_empty() && !input.ends_with(b"\n"))
    }

    fn read_all(reader: impl Read, max: usize) -> (Vec<Got>, bool, u64) {
        let mut lines = LineReader::new(reader, max, 0);
        let mut got = Vec::new();
        let mut batch = Batch::default();
        loop {
            batch = lines.next_batch(batch, |_| true).expect("in memory");
            if batch.is_empty() {
                return (got, lines.torn, lines.consumed);
            }
            for line in &batch.lines {
                got.push(match line {
                    RawLine::Text {
                        number,
                        span,
                        terminated,
                    } => Got::Text(*number, batch.text()[span.clone()].to_vec(), *terminated),
                    RawLine::TooLong { number, length } => Got::TooLong(*number, *length),
                });
            }
        }
    }

    /// A journal-like text from `seed`: lines of many lengths (with `huge`, a few past
    /// `BATCH_BYTES`), blank lines, `\r\n`, and for an odd seed no final newline.
    fn text(seed: u64, lines: usize, huge: bool) -> Vec<u8> {
        let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let mut next = |bound: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % bound
        };
        let mut out = Vec::new();
        for index in 0..lines {
            let length = match next(10) {
                0 => 0,
                1 => next(5_000) as usize,
                2 if huge && index % 997 == 0 => (5 << 20) + next(1 << 20) as usize,
                _ => 20 + next(600) as usize,
            };
            out.extend((0..length).map(|at| b'a' + (at % 26) as u8));
            if next(7) == 0 {
                out.push(b'\r');
            }
            out.push(b'\n');
        }
        if seed % 2 == 1 {
            out.extend_from_slice(b"{\"torn\":");
        }
        out
    }

    #[test]
    fn every_line_is_handed_out_whatever_the_reads() {
        for seed in 0..6 {
            let input = text(seed, 9_000, seed < 2);
            for max in [64, 4_096, 64 << 20] {
                let (want, want_torn) = expected(&input, max);
                for sizes in [vec![1 << 20], vec![1, 7, 4_096, 100_000], vec![3]] {
                    let input = if sizes == [3] {
                        &input[..20_000]
                    } else {
                        &input[..]
                    };
                    let (want, want_torn) = if sizes == [3] {
                        expected(input, max)
                    } else {
                        (want.clone(), want_torn)
                    };
                    let reader = Pieces {
                        input,
                        sizes,
                        turn: 0,
                        interrupt: false,
                    };
                    let (got, torn, consumed) = read_all(reader, max);
                    assert_eq!(got.len(), want.len(), "seed {seed} max {max}");
                    assert!(got == want, "seed {seed} max {max}");
                    assert_eq!(torn, want_torn);
                    assert_eq!(consumed, input.len() as u64);
                }
            }
        }
    }

    #[test]
    fn more_is_asked_before_each_line_with_where_it_begins() {
        let input = text(2, 3_000, false);
        let (want, _) = expected(&input, 64 << 20);
        let stop = input.len() as u64 / 3;
        let mut lines = LineReader::new(input.as_slice(), 64 << 20, 0);
        let mut taken = 0;
        let mut batch = Batch::default();
        loop {
            batch = lines
                .next_batch(batch, |lines| lines.consumed < stop)
                .expect("in memory");
            if batch.is_empty() {
                break;
            }
            taken += batch.lines.len();
        }
        // Exactly the lines that begin before `stop`.
        let mut begins = 0u64;
        let mut before = 0;
        for line in &want {
            if begins >= stop {
                break;
            }
            before += 1;
            begins += match line {
                Got::Text(_, text, terminated) => text.len() as u64 + u64::from(*terminated),
                Got::TooLong(_, length) => length + 1,
            };
        }
        assert_eq!(taken, before);
        assert!(lines.consumed >= stop);
    }

    #[test]
    fn a_batch_keeps_its_usual_buffer_after_a_long_line() {
        let mut input = vec![b'x'; 9 << 20];
        input.push(b'\n');
        input.extend_from_slice(&b"{}\n".repeat(10));
        let mut lines = LineReader::new(input.as_slice(), 64 << 20, 0);
        let batch = lines.next_batch(Batch::default(), |_| true).expect("read");
        assert!(batch.bytes.len() > 9 << 20);
        let batch = lines.next_batch(batch, |_| true).expect("read");
        assert!(batch.bytes.capacity() <= USUAL_CAPACITY);
    }
}
