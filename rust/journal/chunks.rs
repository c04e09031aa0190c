//! Byte-range chunks of a journal, for checking one journal on many machines (docs/cluster.md).
//!
//! `check_journal` splits its work in two: the per-line stage (read, parse, validate, hash; order
//! free, run in parallel) and the ordered stage (`Checker`: chain links, lifecycle state,
//! timestamps, counts). This module cuts the same seam across machines instead of threads:
//! `check_chunk` runs the per-line stage over the lines that *begin* in a byte range and encodes
//! the results compactly; `ChunkedChecker` decodes chunks in file order, renumbers their lines and
//! feeds them to the very `Checker` `check_journal` uses. So a journal checked chunk by chunk gives
//! the report `check_journal` gives, finding for finding, whatever the chunk size.

use std::collections::HashSet;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::ops::Range;
use std::sync::{Mutex, OnceLock};

use super::{
    Batch, ChainHash, CheckedLine, Checker, EventFacts, JournalReport, LineReader, Options,
    Outcome, Text, Uncomputable,
};
use crate::report::{Finding, Severity};
use crate::validate::BestMatch;

/// The offset of the first line that begins at or after `start`: `start` itself when the byte
/// before it is a newline (or `start` is 0), else just after the next newline. `None` at EOF.
fn first_line_start<R: BufRead + Seek>(reader: &mut R, start: u64) -> io::Result<Option<u64>> {
    if start == 0 {
        return Ok(Some(0));
    }
    let mut position = reader.seek(SeekFrom::Start(start - 1))?;
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if available.is_empty() {
            return Ok(None);
        }
        if let Some(newline) = available.iter().position(|&byte| byte == b'\n') {
            reader.consume(newline + 1);
            return Ok(Some(position + newline as u64 + 1));
        }
        let skipped = available.len();
        reader.consume(skipped);
        position += skipped as u64;
    }
}

/// Runs the per-line stage over the lines whose first byte lies in `range`, reading past its end
/// to finish the last one (the chunk holding EOF also reports a truncated final line). Lines are
/// numbered from 1 within the chunk; `ChunkedChecker::feed` renumbers them. Returns the encoded
/// `CheckedLine`s (`ChunkedChecker::feed` decodes them).
pub fn check_chunk<R: Read + Seek>(
    reader: R,
    range: Range<u64>,
    options: &Options,
) -> io::Result<Vec<u8>> {
    let mut buffered = BufReader::with_capacity(1 << 16, reader);
    let mut encoded = Vec::new();
    let Some(first) = first_line_start(&mut buffered, range.start)? else {
        return Ok(encoded);
    };
    // The lines are read straight into their batches, not through the buffer that found the
    // first one.
    let mut reader = buffered.into_inner();
    reader.seek(SeekFrom::Start(first))?;
    let mut lines = LineReader::new(reader, options.max_line_length, 0);
    let mut batch = Batch::default();
    let mut checked = Vec::new();
    let mut chain = ChunkChain::default();
    loop {
        batch = lines.next_batch(batch, |lines| first + lines.consumed < range.end)?;
        if batch.is_empty() {
            if let Some(last) = &chain.previous {
                encoded.push(LAST_HASH);
                put_str(&last.to_string(), &mut encoded);
            }
            return Ok(encoded);
        }
        batch.check_into(options, &mut checked);
        for line in &checked {
            encode_line(line, &mut chain, &mut encoded);
        }
    }
}

/// The chain links a chunk verifies itself: the hash of its previous chained event. An event's
/// own `hash` never travels (only its equality with the next `prev_hash` matters to the ordered
/// stage, and that is known here); a `prev_hash` that links to it is one byte. What does travel:
/// the first `prev_hash` of the chunk (its link is to the chunk before), a `prev_hash` that
/// does not link together with the hash it fails to link to (the finding quotes both), and the
/// chunk's last hash (`LAST_HASH`, for the next chunk's first link).
#[derive(Default)]
struct ChunkChain {
    previous: Option<ChainHash>,
}

/// The ordered stage over chunks: `feed` them in file order, then `finish`.
pub struct ChunkedChecker {
    checker: Checker,
}

impl ChunkedChecker {
    pub fn new(options: &Options) -> Self {
        ChunkedChecker {
            checker: Checker::new(options),
        }
    }

    /// Feeds the next chunk's encoded lines: they are numbered after the lines fed so far.
    pub fn feed(&mut self, mut encoded: &[u8]) -> Result<(), DecodeError> {
        let offset = self.checker.lines;
        let mut number = offset;
        let mut chained = false;
        while !encoded.is_empty() {
            if encoded[0] == LAST_HASH {
                encoded = &encoded[1..];
                let last = ChainHash::new(&get_str(&mut encoded)?);
                if !encoded.is_empty() || !chained {
                    return Err(DecodeError("misplaced last hash"));
                }
                self.restore_last_hash(last);
                break;
            }
            number += 1;
            let (mut line, unlinked) = decode_line(&mut encoded, number, chained)?;
            if let Some(previous) = unlinked {
                // The finding on this line quotes the hash it fails to link to.
                self.restore_last_hash(previous);
            }
            chained |= matches!(&line.outcome, Outcome::Event(facts) if facts.hash.is_some());
            for finding in &mut line.findings {
                finding.line = finding.line.map(|local| local + offset);
            }
            self.checker.take(&mut line);
        }
        Ok(())
    }

    /// The real text of the last chained event's hash, where the decoded lines held `ELIDED`.
    fn restore_last_hash(&mut self, hash: ChainHash) {
        if let Some((last, _)) = &mut self.checker.last_hash {
            *last = hash;
        }
    }

    pub fn finish(mut self, interrupted: bool) -> JournalReport {
        let stats = self.checker.finish(interrupted);
        JournalReport {
            findings: self.checker.sink.findings,
            stats,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The encoding of checked lines: what crosses from a worker to the driver. Line numbers are
// implicit (a chunk's lines are consecutive); strings are a varint length and UTF-8 bytes; an
// optional value is prefixed by 0 (absent) or 1, an optional string or number by its length or
// value plus one (0: absent). The recomputed hash, in the usual case equal to `hash`, is one byte.

#[derive(Debug, PartialEq, Eq)]
pub struct DecodeError(pub &'static str);

impl std::fmt::Display for DecodeError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "malformed journal chunk: {}", self.0)
    }
}

const BLANK: u8 = 0;
const INVALID: u8 = 1;
const EVENT: u8 = 2;
/// Not a line: the chunk's last `hash`, after its last line.
const LAST_HASH: u8 = 3;
const NO_PREV_HASH: u8 = 0;
const PREV_HASH_LINKS: u8 = 1;
const PREV_HASH_TEXT: u8 = 2;
const NOT_RECOMPUTED: u8 = 0;
const RECOMPUTED_SAME: u8 = 1;
const RECOMPUTED_OTHER: u8 = 2;
const NOT_RECOMPUTABLE: u8 = 3;
const NO_TIMESTAMP: u8 = 4;

fn put_varint(mut value: u64, out: &mut Vec<u8>) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn put_str(text: &str, out: &mut Vec<u8>) {
    put_varint(text.len() as u64, out);
    out.extend_from_slice(text.as_bytes());
}

fn put_optional_str(text: Option<&str>, out: &mut Vec<u8>) {
    match text {
        None => out.push(0),
        Some(text) => {
            put_varint(text.len() as u64 + 1, out);
            out.extend_from_slice(text.as_bytes());
        }
    }
}

fn encode_line(line: &CheckedLine, chain: &mut ChunkChain, out: &mut Vec<u8>) {
    match &line.outcome {
        Outcome::Blank => out.push(BLANK),
        Outcome::Invalid => out.push(INVALID),
        Outcome::Event(_) => out.push(EVENT),
    }
    put_varint(line.findings.len() as u64, out);
    for finding in &line.findings {
        put_str(finding.code, out);
        out.push(finding.severity as u8);
        put_str(&finding.message, out);
        put_varint(finding.line.map_or(0, |line| line + 1), out);
        put_optional_str(finding.pointer.as_deref(), out);
        put_optional_str(finding.schema_pointer.as_deref(), out);
        match finding.best_match.as_deref() {
            None => out.push(0),
            Some(best) => {
                out.push(1);
                put_str(&best.pointer, out);
                put_str(&best.schema_pointer, out);
                put_str(&best.message, out);
            }
        }
    }
    if let Outcome::Event(facts) = &line.outcome {
        for member in [
            facts.kind.as_deref(),
            facts.run_id.as_deref(),
            facts.proposal_id.as_deref(),
            facts.action_id.as_deref(),
        ] {
            put_optional_str(member, out);
        }
        out.push(u8::from(facts.hash.is_some()));
        // Texts are shipped as the line's text: the encoding does not depend on how a hash is
        // held.
        let links = chain.previous.is_some() && facts.prev_hash == chain.previous;
        match &facts.prev_hash {
            None => out.push(NO_PREV_HASH),
            Some(_) if links => out.push(PREV_HASH_LINKS),
            Some(prev_hash) => {
                out.push(PREV_HASH_TEXT);
                put_str(&prev_hash.to_string(), out);
            }
        }
        if let (Some(hash), false) = (&facts.hash, links) {
            if let Some(previous) = chain.previous.replace(hash.clone()) {
                put_str(&previous.to_string(), out);
            }
        } else if let Some(hash) = &facts.hash {
            chain.previous = Some(hash.clone());
        }
        match &facts.recomputed {
            None => out.push(NOT_RECOMPUTED),
            Some(Ok(recomputed)) if Some(recomputed) == facts.hash.as_ref() => {
                out.push(RECOMPUTED_SAME);
            }
            Some(Ok(recomputed)) => {
                out.push(RECOMPUTED_OTHER);
                put_str(&recomputed.to_string(), out);
            }
            Some(Err(Uncomputable::CarRejects(reason))) => {
                out.push(NOT_RECOMPUTABLE);
                put_str(reason, out);
            }
            Some(Err(Uncomputable::NoTimestamp)) => out.push(NO_TIMESTAMP),
        }
        match facts.timestamp {
            None => out.push(0),
            Some((seconds, nanos)) => {
                out.push(1);
                out.extend_from_slice(&seconds.to_le_bytes());
                out.extend_from_slice(&nanos.to_le_bytes());
            }
        }
    }
}

fn take<'a>(input: &mut &'a [u8], count: usize) -> Result<&'a [u8], DecodeError> {
    if input.len() < count {
        return Err(DecodeError("cut short"));
    }
    let (head, rest) = input.split_at(count);
    *input = rest;
    Ok(head)
}

fn get_byte(input: &mut &[u8]) -> Result<u8, DecodeError> {
    Ok(take(input, 1)?[0])
}

fn get_varint(input: &mut &[u8]) -> Result<u64, DecodeError> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = get_byte(input)?;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(DecodeError("varint too long"))
}

fn get_string(input: &mut &[u8], length: u64) -> Result<String, DecodeError> {
    let length = usize::try_from(length).map_err(|_| DecodeError("string too long"))?;
    let bytes = take(input, length)?;
    String::from_utf8(bytes.to_vec()).map_err(|_| DecodeError("string not UTF-8"))
}

fn get_str(input: &mut &[u8]) -> Result<String, DecodeError> {
    let length = get_varint(input)?;
    get_string(input, length)
}

fn get_optional_str(input: &mut &[u8]) -> Result<Option<String>, DecodeError> {
    match get_varint(input)? {
        0 => Ok(None),
        length => get_string(input, length - 1).map(Some),
    }
}

/// An optional string of an event's facts.
fn get_optional_text<const N: usize>(input: &mut &[u8]) -> Result<Option<Text<N>>, DecodeError> {
    Ok(get_optional_str(input)?.as_deref().map(Text::new))
}

/// What an elided `hash` decodes to, and a `prev_hash` that links to it: within a chunk these
/// are only ever compared with each other (a `prev_hash` that does not link travels with the
/// real hash it fails to link to, restored before the ordered stage compares them, and the
/// chunk's last hash is restored after its last line). A recomputed digest is hex, never this.
fn elided() -> ChainHash {
    ChainHash::new("\0")
}

/// Finding codes are `&'static str`; a decoded one is interned. Only `PFnnn` codes are accepted,
/// so at most a thousand are ever kept.
fn interned_code(code: &str) -> Result<&'static str, DecodeError> {
    let well_formed = code.len() == 5
        && code.starts_with("PF")
        && code[2..].bytes().all(|byte| byte.is_ascii_digit());
    if !well_formed {
        return Err(DecodeError("not a finding code"));
    }
    static CODES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut codes = CODES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(known) = codes.get(code) {
        return Ok(known);
    }
    let leaked: &'static str = Box::leak(code.to_string().into_boxed_str());
    codes.insert(leaked);
    Ok(leaked)
}

fn decode_finding(input: &mut &[u8]) -> Result<Finding, DecodeError> {
    let code = interned_code(&get_str(input)?)?;
    let severity = match get_byte(input)? {
        byte if byte == Severity::Info as u8 => Severity::Info,
        byte if byte == Severity::Warning as u8 => Severity::Warning,
        byte if byte == Severity::Error as u8 => Severity::Error,
        _ => return Err(DecodeError("unknown severity")),
    };
    let message = get_str(input)?;
    let line = get_varint(input)?.checked_sub(1);
    Ok(Finding {
        code,
        severity,
        message,
        line,
        pointer: get_optional_str(input)?,
        schema_pointer: get_optional_str(input)?,
        best_match: match get_byte(input)? {
            0 => None,
            1 => Some(Box::new(BestMatch {
                pointer: get_str(input)?,
                schema_pointer: get_str(input)?,
                message: get_str(input)?,
            })),
            _ => return Err(DecodeError("unknown best match marker")),
        },
    })
}

/// A line, and for an event whose `prev_hash` does not link to the chunk's previous chained
/// event, that event's real hash.
fn decode_line(
    input: &mut &[u8],
    number: u64,
    chained: bool,
) -> Result<(CheckedLine, Option<ChainHash>), DecodeError> {
    let tag = get_byte(input)?;
    let count = get_varint(input)?;
    let mut unlinked = None;
    let mut findings = Vec::new();
    for _ in 0..count {
        findings.push(decode_finding(input)?);
    }
    let outcome = match tag {
        BLANK => Outcome::Blank,
        INVALID => Outcome::Invalid,
        EVENT => {
            let kind = get_optional_text(input)?;
            let run_id = get_optional_text(input)?;
            let proposal_id = get_optional_text(input)?;
            let action_id = get_optional_text(input)?;
            let hash = match get_byte(input)? {
                0 => None,
                1 => Some(elided()),
                _ => return Err(DecodeError("unknown hash tag")),
            };
            let (prev_hash, links) = match get_byte(input)? {
                NO_PREV_HASH => (None, false),
                PREV_HASH_LINKS if chained => (Some(elided()), true),
                PREV_HASH_TEXT => (Some(ChainHash::new(&get_str(input)?)), false),
                _ => return Err(DecodeError("unknown prev_hash tag")),
            };
            if hash.is_some() && chained && !links {
                unlinked = Some(ChainHash::new(&get_str(input)?));
            }
            let recomputed = match get_byte(input)? {
                NOT_RECOMPUTED => None,
                RECOMPUTED_SAME => Some(Ok(hash.clone().ok_or(DecodeError("no hash"))?)),
                RECOMPUTED_OTHER => Some(Ok(ChainHash::new(&get_str(input)?))),
                NOT_RECOMPUTABLE => Some(Err(Uncomputable::CarRejects(get_str(input)?))),
                NO_TIMESTAMP => Some(Err(Uncomputable::NoTimestamp)),
                _ => return Err(DecodeError("unknown recomputed tag")),
            };
            let timestamp = match get_byte(input)? {
                0 => None,
                1 => {
                    let seconds = take(input, 8)?.try_into().expect("8 bytes");
                    let nanos = take(input, 4)?.try_into().expect("4 bytes");
                    Some((i64::from_le_bytes(seconds), u32::from_le_bytes(nanos)))
                }
                _ => return Err(DecodeError("unknown timestamp tag")),
            };
            Outcome::Event(EventFacts {
                kind,
                // Looked up by the ordered stage.
                kind_index: None,
                run_id,
                proposal_id,
                action_id,
                hash,
                prev_hash,
                recomputed,
                timestamp,
            })
        }
        _ => return Err(DecodeError("unknown line tag")),
    };
    Ok((
        CheckedLine {
            number,
            outcome,
            findings,
        },
        unlinked,
    ))
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::super::{check_journal, ChainMode};
    use super::*;

    fn event(kind: &str, run_id: &str, second: u32) -> String {
        format!(
            r#"{{"kind":"{kind}","run_id":"{run_id}","data":{{}},"timestamp":"2026-01-01T00:00:{second:02}Z"}}"#
        )
    }

    /// Every problem a boundary could hide: an edited hash, a run across chunks, a timestamp
    /// going back, invalid and blank lines, CRLF, a duplicate key, a truncated last line.
    fn journal() -> String {
        let chained = [
            r#"{"kind":"run_started","run_id":"r1","data":{},"timestamp":"2026-01-01T00:00:00Z","hash":"8e0e64ce4a1b8a0cd0d43c1fc44f9a5c0d0b4c6a7e9b5c1e2a5d3a1b0c9e8f7d"}"#,
            r#"{"kind":"state_changed","run_id":"r1","data":{},"timestamp":"2026-01-01T00:00:01Z","prev_hash":"x","hash":"y"}"#,
        ];
        [
            event("run_started", "r0", 1),
            String::new(),
            event("state_changed", "r0", 0),
            "not json".to_string(),
            format!("{}\r", event("run_completed", "r0", 2)),
            r#"{"a":1,"a":2}"#.to_string(),
            chained[0].to_string(),
            chained[1].to_string(),
            event("run_completed", "r9", 3),
            "[1]".to_string(),
            "x".repeat(300),
            r#"{"kind":"run_completed""#.to_string(),
        ]
        .join("\n")
    }

    fn chunked(text: &str, chunk: u64, options: &Options) -> JournalReport {
        let mut checker = ChunkedChecker::new(options);
        let size = text.len() as u64;
        let mut start = 0;
        loop {
            let end = (start + chunk).min(size);
            let encoded = check_chunk(Cursor::new(text.as_bytes()), start..end, options)
                .expect("in-memory read");
            checker.feed(&encoded).expect("decodes");
            start = end;
            if start >= size {
                return checker.finish(false);
            }
        }
    }

    #[test]
    fn every_chunk_size_gives_the_single_pass_report() {
        let text = journal();
        for chain in [ChainMode::Auto, ChainMode::Require, ChainMode::Off] {
            let options = Options {
                chain,
                max_line_length: 250,
                ..Options::default()
            };
            let whole = check_journal(text.as_bytes(), &options, || false).expect("read");
            let codes: HashSet<&str> = whole.findings.iter().map(|f| f.code).collect();
            let expected = match chain {
                // PF360 among them: `data` lacks what CAR writes for run_started / run_completed.
                ChainMode::Off => 9,
                ChainMode::Auto => 12,
                ChainMode::Require => 13,
            };
            assert_eq!(
                codes.len(),
                expected,
                "the journal exercises many rules: {codes:?}"
            );
            for chunk in 1..=text.len() as u64 + 1 {
                let report = chunked(&text, chunk, &options);
                assert_eq!(report.findings, whole.findings, "chunk size {chunk}");
                assert_eq!(report.stats, whole.stats, "chunk size {chunk}");
            }
        }
    }

    #[test]
    fn a_chunk_owns_the_lines_that_begin_in_it() {
        let text = "{}\n{}\n\n{}";
        let lines_of = |range: Range<u64>| {
            let encoded =
                check_chunk(Cursor::new(text.as_bytes()), range, &Options::default()).unwrap();
            let mut checker = ChunkedChecker::new(&Options::default());
            checker.feed(&encoded).unwrap();
            checker.checker.lines
        };
        assert_eq!(lines_of(0..1), 1);
        assert_eq!(lines_of(1..3), 0);
        assert_eq!(lines_of(1..4), 1);
        assert_eq!(lines_of(3..7), 2);
        assert_eq!(lines_of(7..9), 1);
        assert_eq!(lines_of(9..20), 0);
    }

    #[test]
    fn a_findings_closest_branch_crosses_with_it() {
        let finding = Finding {
            best_match: Some(Box::new(BestMatch {
                pointer: "/data/limit/max".into(),
                schema_pointer: "/anyOf/0/properties/max/type".into(),
                message: "\"ten\" is not of type \"integer\"".into(),
            })),
            ..Finding::new(crate::codes::SCHEMA_VIOLATION, "m")
                .at("/data/limit")
                .on_line(1)
        };
        let line = CheckedLine {
            number: 1,
            outcome: Outcome::Invalid,
            findings: vec![finding.clone()],
        };
        let mut encoded = Vec::new();
        encode_line(&line, &mut ChunkChain::default(), &mut encoded);
        let (decoded, _) = decode_line(&mut &encoded[..], 1, false).expect("decodes");
        assert_eq!(decoded.findings, [finding]);
        // The marker before the three strings (each a one-byte length and its bytes).
        let best = line.findings[0].best_match.as_deref().unwrap();
        let strings = [&best.pointer, &best.schema_pointer, &best.message];
        let marker = encoded.len() - strings.iter().map(|s| 1 + s.len()).sum::<usize>() - 1;
        assert_eq!(encoded[marker], 1);
        encoded[marker] = 2;
        assert_eq!(
            decode_line(&mut &encoded[..], 1, false).err(),
            Some(DecodeError("unknown best match marker"))
        );
    }

    #[test]
    fn malformed_chunks_are_refused() {
        let mut checker = ChunkedChecker::new(&Options::default());
        assert_eq!(checker.feed(&[7, 0]), Err(DecodeError("unknown line tag")));
        assert_eq!(checker.feed(&[1, 1, 2]), Err(DecodeError("cut short")));
        assert_eq!(
            checker.feed(&[1, 1, 2, b'x', b'y']),
            Err(DecodeError("not a finding code"))
        );
        // A last hash in a chunk with no chained event, or before its last line.
        assert_eq!(
            checker.feed(&[LAST_HASH, 1, b'h']),
            Err(DecodeError("misplaced last hash"))
        );
        // A prev_hash "linking" to a previous chained event the chunk does not have.
        let unchained_link = [EVENT, 0, 0, 0, 0, 0, 0, PREV_HASH_LINKS, 0, 0];
        assert_eq!(
            checker.feed(&unchained_link),
            Err(DecodeError("unknown prev_hash tag"))
        );
    }
}
