//! Progress of a long check: how many bytes of the input have been read so far.
//!
//! A checker reads its input through `CountingReader`; whoever reports progress (the Python glue
//! between journal batches) reads the shared counter. Counting at the reader, not in the checker,
//! keeps the checkers free of progress plumbing: the count runs ahead of the checked lines by at
//! most the read buffer and one batch.

use std::io::{self, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A `Read` that adds every byte it reads to a counter shared with the progress reporter.
pub struct CountingReader<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R> CountingReader<R> {
    pub fn new(inner: R) -> Self {
        CountingReader {
            inner,
            count: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The counter: read it from any thread while the reader is in use.
    pub fn counter(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.count)
    }
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        let read = self.inner.read(buffer)?;
        // Relaxed: the count is a display figure, ordered with nothing else.
        self.count.fetch_add(read as u64, Ordering::Relaxed);
        Ok(read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;

    #[test]
    fn counts_every_byte_read_through_a_buffer() {
        let text = b"{\"a\":1}\n".repeat(10_000);
        let reader = CountingReader::new(&text[..]);
        let counter = reader.counter();
        let mut buffered = BufReader::with_capacity(4096, reader);
        let mut first = [0u8; 10];
        buffered.read_exact(&mut first).unwrap();
        assert_eq!(counter.load(Ordering::Relaxed), 4096);
        io::copy(&mut buffered, &mut io::sink()).unwrap();
        assert_eq!(counter.load(Ordering::Relaxed), text.len() as u64);
    }
}
