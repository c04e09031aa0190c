//! A journal checked as its bytes arrive (`pairling_fast.JournalStream`, `check --follow`).
//!
//! `feed` takes any piece of the journal, cut anywhere (inside a line, inside a UTF-8 character):
//! the lines it completes go through the very per-line stage and `Checker` `check_journal` uses,
//! and the partial line after the last newline is kept for the next piece, up to the line limit
//! (past it only its length is counted, as `LineReader` does). So the findings of the complete
//! lines are known after each piece, and `finish` gives `check_journal`'s report of the bytes fed.

use super::lines::{BATCH_BYTES, BATCH_LINES};
use super::{Batch, CheckedLine, Checker, JournalReport, Options, Resume, Snapshot};
use crate::report::Finding;

pub struct StreamChecker {
    checker: Checker,
    options: Options,
    /// The complete lines not yet checked, then from `partial_start` the partial line's bytes.
    batch: Batch,
    partial_start: usize,
    /// The partial line's length so far (its bytes are dropped once it is over the limit).
    partial_length: u64,
    /// How many of the checker's findings `feed` has returned.
    reported: usize,
    checked: Vec<CheckedLine>,
}

impl StreamChecker {
    /// A stream checked from its first byte, or going on from `resume` (its lines are numbered
    /// on from the snapshot's, and the bytes fed start where the snapshot's lines end).
    pub fn new(options: &Options, resume: Option<Resume>) -> Self {
        let checker = resume.map_or_else(|| Checker::new(options), |Resume(checker)| checker);
        StreamChecker {
            reported: checker.sink.findings.len(),
            checker,
            options: options.clone(),
            batch: Batch::default(),
            partial_start: 0,
            partial_length: 0,
            checked: Vec::new(),
        }
    }

    /// Takes the next piece of the journal; returns the findings the lines it completed decided.
    pub fn feed(&mut self, mut data: &[u8]) -> &[Finding] {
        while let Some(newline) = memchr::memchr(b'\n', data) {
            self.extend_partial(&data[..newline]);
            self.end_line(true);
            data = &data[newline + 1..];
            if self.batch.lines.len() >= BATCH_LINES || self.batch.len() >= BATCH_BYTES {
                self.check_batch();
            }
        }
        self.extend_partial(data);
        self.check_batch();
        let findings = &self.checker.sink.findings[self.reported..];
        self.reported = self.checker.sink.findings.len();
        findings
    }

    /// The lines completed so far.
    pub fn lines(&self) -> u64 {
        self.checker.lines
    }

    /// The events among the lines completed so far.
    pub fn events(&self) -> u64 {
        self.checker.events
    }

    /// The bytes of the partial line after the last newline.
    pub fn pending(&self) -> u64 {
        self.partial_length
    }

    /// The ordered stage's state at the end of the last complete line (`--state`'s `checker`).
    pub fn snapshot(&self) -> Snapshot {
        self.checker.snapshot()
    }

    /// Ends the stream: a partial line is the journal's last line, without a newline, unless
    /// the stream was `interrupted` (then it is dropped, as an interrupted check drops the batch
    /// being read, and the end-of-journal findings are left out).
    pub fn finish(mut self, interrupted: bool) -> JournalReport {
        if !interrupted && self.partial_length > 0 {
            self.end_line(false);
            self.check_batch();
        }
        let stats = self.checker.finish(interrupted);
        JournalReport {
            findings: self.checker.sink.findings,
            stats,
        }
    }

    fn extend_partial(&mut self, piece: &[u8]) {
        self.partial_length += piece.len() as u64;
        if self.partial_length > self.options.max_line_length as u64 {
            self.batch.truncate(self.partial_start);
        } else {
            self.batch.extend(piece);
        }
    }

    fn end_line(&mut self, terminated: bool) {
        let number = self.checker.lines + self.batch.lines.len() as u64 + 1;
        let length = std::mem::take(&mut self.partial_length);
        self.batch.end_line(
            number,
            self.partial_start,
            length,
            terminated,
            self.options.max_line_length,
        );
        self.partial_start = self.batch.len();
    }

    /// The complete lines through the per-line stage (in parallel) and the ordered checks; the
    /// partial line's bytes move to the front of the buffer.
    fn check_batch(&mut self) {
        if !self.batch.is_empty() {
            self.batch.check_into(&self.options, &mut self.checked);
            for line in &mut self.checked {
                self.checker.take(line);
            }
            self.checked.clear();
            self.batch.lines.clear();
        }
        if self.partial_start > 0 {
            self.batch.keep_from(self.partial_start);
            self.partial_start = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::check_journal;

    fn whole(text: &[u8], options: &Options) -> JournalReport {
        check_journal(text, options, || false).unwrap()
    }

    fn streamed(pieces: &[&[u8]], options: &Options) -> (Vec<Finding>, JournalReport) {
        let mut stream = StreamChecker::new(options, None);
        let mut early = Vec::new();
        for piece in pieces {
            early.extend_from_slice(stream.feed(piece));
        }
        (early, stream.finish(false))
    }

    fn journal() -> Vec<u8> {
        let mut text = Vec::new();
        let lines = [
            r#"{"kind":"run_started","data":{},"timestamp":"2026-01-01T00:00:00Z","run_id":"r1"}"#,
            "not json",
            "",
            r#"{"kind":"run_started","data":{"é":"ü"},"timestamp":"2026-01-01T00:00:01Z","run_id":"r1"}"#,
            "[1]",
            r#"{"kind":"run_completed","data":{},"timestamp":"2026-01-01T00:00:02Z","run_id":"r2"}"#,
        ];
        for line in lines {
            text.extend_from_slice(line.as_bytes());
            text.push(b'\n');
        }
        text.extend_from_slice(br#"{"kind":"run_started","da"#);
        text
    }

    #[test]
    fn any_cut_gives_the_whole_report() {
        let text = journal();
        let options = Options::default();
        let expected = whole(&text, &options);
        assert!(!expected.findings.is_empty());
        for cut in 0..=text.len() {
            for second in (cut..=text.len()).step_by(7) {
                let (early, report) = streamed(
                    &[&text[..cut], &text[cut..second], &text[second..]],
                    &options,
                );
                assert_eq!(report.findings, expected.findings, "cut at {cut}, {second}");
                assert_eq!(report.stats, expected.stats);
                assert_eq!(early[..], expected.findings[..early.len()]);
            }
        }
    }

    #[test]
    fn a_long_partial_line_is_not_held() {
        let options = Options {
            max_line_length: 10,
            ..Options::default()
        };
        let text = b"{\"a\": 1234567890}\n{}\n0123456789abcdef";
        let expected = whole(text, &options);
        let mut stream = StreamChecker::new(&options, None);
        for byte in text.chunks(1) {
            stream.feed(byte);
            assert!(stream.batch.len() <= 10);
        }
        assert_eq!(stream.pending(), 16);
        assert_eq!(stream.finish(false).findings, expected.findings);
    }

    #[test]
    fn an_interrupted_stream_drops_its_partial_line() {
        let mut stream = StreamChecker::new(&Options::default(), None);
        stream.feed(b"{}\n{\"kind\"");
        let report = stream.finish(true);
        assert_eq!(report.stats["lines"], 1);
        assert_eq!(report.stats["interrupted"], true);
    }
}
