//! Rust benchmark of journal checking, without Python: the per-line stage (parse, schema, CAR's
//! chain digest) and the ordered stage (chain links, lifecycle) timed apart, then together.
//!
//!     cargo bench --profile fastdev --bench journal
//!     PAIRLING_FAST_BENCH_JOURNAL=j.jsonl cargo bench --profile fastdev --bench journal
//!
//! The per-line stage is timed on both of its paths (`Options::fast_path`). Without a file it
//! checks a synthetic chained journal of runs, proposals and actions built with
//! CAR's digest. The stages are timed through the public seam `check_journal` itself is built on
//! (`chunks::check_chunk` is the per-line stage, `ChunkedChecker::feed` the ordered stage), so the
//! figures cover the code a check runs. Plain `std::time` with a best-of: no criterion to compile.
//! Threads: `RAYON_NUM_THREADS`. `PAIRLING_FAST_BENCH_ONLY=check_journal` times the whole check
//! alone (for a profiler: `perf record` then sees only the code a check runs).

// A benchmark reports on stdout: the crate's print_stdout lint is for the library.
#![allow(clippy::print_stdout)]

use std::io::Cursor;
use std::time::{Duration, Instant};

use pairling_fast::journal::car_event;
use pairling_fast::journal::{self, chunks, Options};

const SYNTHETIC_RUNS: usize = 20_000;
const ROUNDS: usize = 5;

/// A chained journal: each run opens a proposal with two actions, then closes everything.
fn synthetic_journal() -> Vec<u8> {
    let mut text = String::new();
    let mut previous = String::new();
    let mut second = 0u64;
    for run in 0..SYNTHETIC_RUNS {
        let steps: [(&str, &str); 8] = [
            ("run_started", ""),
            ("proposal_received", r#","proposal_id":"p"#),
            ("action_executing", r#","proposal_id":"p","action_id":"a0"#),
            ("action_succeeded", r#","proposal_id":"p","action_id":"a0"#),
            ("action_executing", r#","proposal_id":"p","action_id":"a1"#),
            ("action_failed", r#","proposal_id":"p","action_id":"a1"#),
            ("proposal_completed", r#","proposal_id":"p"#),
            ("run_completed", ""),
        ];
        for (kind, ids) in steps {
            second += 1;
            let ids = if ids.is_empty() {
                String::new()
            } else {
                format!("{ids}{run}\"")
            };
            let body = format!(
                r#"{{"kind":"{kind}","run_id":"run-{run}"{ids},"data":{{"note":"step {second}","tokens":{second},"nested":{{"b":[1,2.5,"x"],"a":null}}}},"timestamp":"2026-01-01T00:00:00.{:06}Z"}}"#,
                second % 1_000_000
            );
            let (line, hash) =
                car_event::chain_line(&body, &previous).expect("a synthetic event CAR reads");
            text.push_str(&line);
            text.push('\n');
            previous = hash;
        }
    }
    text.into_bytes()
}

fn best_of(mut work: impl FnMut()) -> Duration {
    (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            work();
            start.elapsed()
        })
        .min()
        .expect("at least one round")
}

fn report(stage: &str, bytes: usize, lines: u64, took: Duration) {
    let seconds = took.as_secs_f64();
    println!(
        "{stage:<28} {:>9.1} MB/s {:>11.0} lines/s  (best of {ROUNDS}: {:.3} s)",
        bytes as f64 / seconds / 1e6,
        lines as f64 / seconds,
        seconds
    );
}

fn main() {
    let journal = match std::env::var_os("PAIRLING_FAST_BENCH_JOURNAL") {
        Some(path) => std::fs::read(&path).expect("PAIRLING_FAST_BENCH_JOURNAL is readable"),
        None => synthetic_journal(),
    };
    let options = Options::default();
    let whole = journal::check_journal(journal.as_slice(), &options, || false).expect("read");
    let lines = whole.stats["lines"].as_u64().unwrap_or(0);
    assert_eq!(
        whole.stats["errors"],
        0,
        "the benchmark journal is valid: {:?}",
        whole.findings.first()
    );
    println!(
        "{} bytes, {lines} lines, {} threads",
        journal.len(),
        rayon::current_num_threads()
    );

    if std::env::var_os("PAIRLING_FAST_BENCH_ONLY").is_some_and(|only| only == "check_journal") {
        let took = best_of(|| {
            journal::check_journal(journal.as_slice(), &options, || false).expect("read");
        });
        report("check_journal", journal.len(), lines, took);
        return;
    }
    let range = 0..journal.len() as u64;
    let mut encoded = Vec::new();
    // The full path (strict parse into a Value, schema, CAR's serde reading) is what every line
    // costs without the fast path; both encode the same results.
    for (stage, fast_path) in [
        ("per-line stage, full path", false),
        ("per-line stage, fast path", true),
    ] {
        let options = Options {
            fast_path,
            ..options.clone()
        };
        let mut this = Vec::new();
        let took = best_of(|| {
            this = chunks::check_chunk(Cursor::new(&journal), range.clone(), &options)
                .expect("in-memory read");
        });
        report(stage, journal.len(), lines, took);
        assert!(encoded.is_empty() || encoded == this, "both paths agree");
        encoded = this;
    }

    let ordered = best_of(|| {
        let mut checker = chunks::ChunkedChecker::new(&options);
        checker.feed(&encoded).expect("decodes");
        let report = checker.finish(false);
        assert_eq!(report.stats["lines"], whole.stats["lines"]);
    });
    report("ordered stage (+ decoding)", journal.len(), lines, ordered);

    let full = best_of(|| {
        let report = journal::check_journal(journal.as_slice(), &options, || false).expect("read");
        assert_eq!(report.stats["lines"], whole.stats["lines"]);
    });
    report("check_journal", journal.len(), lines, full);
}
