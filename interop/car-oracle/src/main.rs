//! CAR's own journal code as a test oracle for pairling_fast (tests/test_journal_car_oracle.py).
//!
//! Everything here calls `car-eventlog` 0.58.0 as CAR itself does; nothing re-implements its rules:
//!
//! - `car-oracle write DIR` writes journals through CAR's `EventLog` (plain, chained, run-bound,
//!   partially chained, retention-compacted; every `EventKind`, with the `data` members its emit
//!   sites write (`emitted`) and awkward `data` values) and prints their names, one a line.
//! - `car-oracle load FILE...` loads each file with `EventLog::load_read_only` and prints CAR's
//!   verdict as one JSON object a line.
//! - `car-oracle parse FILE` splits FILE into lines as `load_from_journal` does and parses each
//!   one as CAR's `Event`, printing one JSON object a line: whether CAR accepts it and, if so, the
//!   parts CAR's `event_digest` hashes (the timestamp's `to_rfc3339()`, each `data` member as
//!   serde_json `Display` writes it) so a difference is shown byte for byte.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use car_eventlog::{Event, EventKind, EventLog, RetentionPolicy};
use serde_json::{json, Value};

/// Every `EventKind`, from CAR's own JSON schema of the enum (so a new kind cannot be missed).
fn every_kind() -> Vec<EventKind> {
    fn strings(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::Array(names)) = map.get("enum") {
                    out.extend(names.iter().filter_map(|n| n.as_str().map(str::to_string)));
                }
                map.values().for_each(|v| strings(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
            _ => {}
        }
    }
    let schema = serde_json::to_value(schemars::schema_for!(EventKind)).expect("schema");
    let mut names = Vec::new();
    strings(&schema, &mut names);
    names.sort();
    names.dedup();
    names
        .iter()
        .map(|name| serde_json::from_value(Value::String(name.clone())).expect("a kind"))
        .collect()
}

/// `data` members whose rendering decides byte equality of the digest: serde_json number text
/// (ryu), string escaping, key order at every depth.
fn awkward_data(i: usize) -> HashMap<String, Value> {
    let values = [
        json!(1e20),
        json!(1e21),
        json!(1e15),
        json!(1e16),
        json!(123456789012345680000.0),
        json!(0.1),
        json!(1e-5),
        json!(1e-6),
        json!(1e-7),
        json!(-0.0),
        json!(1.0),
        json!(-1.5),
        json!(5e-324),
        json!(f64::MAX),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(0),
        json!(null),
        json!(true),
        json!("quote \" backslash \\ slash / nl \n tab \t cr \r bell \u{7} del \u{7f}"),
        json!("unicode é ☃ 😀 \u{2028} \u{ff61} \u{0}"),
        json!({"z": 1, "a": {"y": [3, 2, 1], "b": 0.5}, "\u{1f600}": 1, "\u{ff61}": 2, "A": 3}),
        json!([{"b": 1, "a": 2}, [], {}, ""]),
    ];
    let mut data = HashMap::new();
    data.insert("index".to_string(), json!(i));
    data.insert(
        format!("v{:02}", i % values.len()),
        values[i % values.len()].clone(),
    );
    data.insert("é".to_string(), json!("key order is by UTF-8 bytes"));
    data.insert("Z".to_string(), values[(i * 7 + 3) % values.len()].clone());
    data
}

thread_local! {
    /// The `data` CAR writes for the other kinds with a contract, one example each
    /// (python/pairling_fast/car_payload_examples.json, which the generator writes too).
    static EXAMPLES: Value = serde_json::from_str::<Value>(include_str!(
        "../../../python/pairling_fast/car_payload_examples.json"
    ))
    .expect("JSON")["examples"]
        .clone();
}

/// The `data` members CAR's emit sites write for `kind` (python/pairling_fast/car_payloads.toml
/// cites them): a run's lifecycle from car-server-core's session.rs (`car_proto`'s structs
/// serialized whole), `proposal_received`, `transaction_conflict`, the state boundaries and the
/// replan loop from car-engine's executor, `proposal_completed` from car-server-core's
/// run_store.rs, the metric keys from car-eventlog's `Metrics`, and so on for every kind with a
/// contract. Kinds CAR's code gives no fixed shape: nothing beyond what the caller adds.
fn emitted(kind: &EventKind, i: usize) -> HashMap<String, Value> {
    let digest = format!("{:064x}", 0x5eed_u64 * (i as u64 + 1));
    let proposal = json!({"id": format!("p{i}"), "source": "oracle", "actions": [], "context": {}});
    let cancellation = json!({
        "receipt_version": 1,
        "run_id": "run-1",
        "idempotency_key": format!("cancel-{i}"),
        "reason_digest": digest,
        "principal": "operator",
        "action_id": null,
        "request_id": format!("request-{i}"),
    });
    let data = match serde_json::to_value(kind).expect("a kind").as_str().unwrap_or_default() {
        "run_started" => json!({
            "agent_id": "agent-1",
            "intent": "check the oracle",
            "started_at": "2026-01-01T00:00:00Z",
            "outcome_description": "a journal CAR wrote",
        }),
        "run_completed" => json!({
            "termination_kind": "cancelled",
            "completion_digest": digest,
            "termination": {"kind": "cancelled"},
        }),
        "run_cancellation_requested" => cancellation,
        "run_cancellation_result" => {
            let mut result = cancellation;
            result["status"] = json!("cancelled_confirmed");
            result["terminal_digest"] = json!(null);
            result["receipt_digest"] = json!(digest);
            result
        }
        "proposal_received" => json!({
            "source": "oracle",
            "action_count": 4,
            "proposal": proposal,
            "proposal_digest": digest,
        }),
        "proposal_completed" => json!({
            "original_submission_id": format!("p{i}"),
            "final_proposal_id": format!("p{i}"),
            "original_proposal": proposal,
            "final_proposal": proposal,
            "original_submission": {"proposal": proposal},
            "replan_lineage": [],
            "all_succeeded": true,
            "action_count": 4,
            "proposal_result": {"proposal_id": format!("p{i}"), "results": []},
            "result_digest": digest,
        }),
        "transaction_conflict" => json!({
            "kind": "write_write",
            "key": "counter",
            "actions": ["a0", "a1"],
            "explanation": "both actions write counter",
            "resolution": "serialize the actions",
        }),
        "inference_metered" => json!({
            "tokens_in": 100 + i,
            "tokens_out": 40,
            "cost_usd": 0.01,
            "agent": "agent-1",
        }),
        "action_succeeded" => json!({"duration_ms": 12.5}),
        // CAR 0.60.0 only: car-server-core handler.rs worker_started_event and its bridge.
        "worker_started" => json!({
            "handle": format!("worker-{i}"),
            "at": "2026-01-01T00:00:00+00:00",
            "seq": i,
            "network_fence": "none",
            "warning": "no network fence",
        }),
        "worker_starts_omitted" => json!({
            "handle": format!("worker-{i}"),
            "omitted": 2,
            "path": "workers/starts.jsonl",
        }),
        // Every other kind with a contract: the example pairling_fast's generator writes too.
        kind => EXAMPLES.with(|examples| examples.get(kind).cloned().unwrap_or(json!({}))),
    };
    serde_json::from_value(data).expect("an object")
}

fn write_all_kinds(log: &mut EventLog, kinds: &[EventKind], offset: usize) {
    for (i, kind) in kinds.iter().enumerate() {
        let action = format!("a{}", i % 3);
        let proposal = format!("p{}", i % 2);
        let action_id = (i % 4 != 0).then_some(action.as_str());
        let proposal_id = (i % 5 != 0).then_some(proposal.as_str());
        let mut data = emitted(kind, offset + i);
        data.extend(awkward_data(offset + i));
        log.append(kind.clone(), action_id, proposal_id, data);
    }
}

fn write(dir: &Path) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let kinds = every_kind();
    let mut written = Vec::new();
    let mut journal = |name: &str, fill: &dyn Fn(&mut EventLog)| {
        let path = dir.join(name);
        let _ = std::fs::remove_file(&path);
        {
            let mut log = EventLog::with_journal(path.clone());
            fill(&mut log);
        } // dropping the log joins its writer thread: every line is on disk
        written.push(path);
    };
    journal("plain.jsonl", &|log| write_all_kinds(log, &kinds, 0));
    journal("chained.jsonl", &|log| {
        log.enable_hash_chaining();
        write_all_kinds(log, &kinds, 0);
        write_all_kinds(log, &kinds, 11);
    });
    journal("partially-chained.jsonl", &|log| {
        write_all_kinds(log, &kinds[..5], 0);
        log.enable_hash_chaining();
        write_all_kinds(log, &kinds, 5);
    });
    journal("run-bound.jsonl", &|log| {
        log.enable_hash_chaining();
        log.append(EventKind::StateSnapshot, None, None, awkward_data(1));
        log.bind_run("run-1", "client-1").expect("bind");
        write_all_kinds(log, &kinds[..20], 2);
        log.bind_policy_session("ps-1")
            .expect("bind policy session");
        write_all_kinds(log, &kinds[20..], 3);
        log.clear_policy_session("ps-1").expect("clear");
        log.clear_run_binding("run-1", "client-1").expect("clear");
        write_all_kinds(log, &kinds[..3], 4);
    });
    journal("retention-compacted.jsonl", &|log| {
        // max_events 100: after 1,100 more appends than retained, append's throttled
        // compaction rewrites the journal to the retained tail (a chain with no genesis).
        log.enable_hash_chaining();
        log.set_retention(Some(RetentionPolicy {
            max_events: Some(100),
            max_age_secs: None,
        }));
        for round in 0..30 {
            write_all_kinds(log, &kinds, round);
        }
    });
    journal("lifecycle-compacted.jsonl", &|log| {
        // A run's proposals with the action transitions car-engine's executor appends (retry
        // after a failure, skip after failed attempts, dedup), then retention compaction cuts
        // the head: the journal begins mid-run.
        log.enable_hash_chaining();
        log.set_retention(Some(RetentionPolicy {
            max_events: Some(200),
            max_age_secs: None,
        }));
        log.bind_run("run-3", "client-3").expect("bind");
        log.append(
            EventKind::RunStarted,
            None,
            None,
            emitted(&EventKind::RunStarted, 0),
        );
        for p in 0..120 {
            let proposal = format!("proposal-{p}");
            let id = Some(proposal.as_str());
            let received = emitted(&EventKind::ProposalReceived, p);
            log.append(EventKind::ProposalReceived, None, id, received);
            let steps: &[(&str, &[EventKind])] = &[
                (
                    "a0",
                    &[
                        EventKind::ActionValidated,
                        EventKind::ActionExecuting,
                        EventKind::ActionSucceeded,
                    ],
                ),
                (
                    "a1",
                    &[
                        EventKind::ActionValidated,
                        EventKind::ActionExecuting,
                        EventKind::ActionFailed,
                        EventKind::ActionRetrying,
                        EventKind::ActionExecuting,
                        EventKind::ActionSucceeded,
                    ],
                ),
                (
                    "a2",
                    &[
                        EventKind::ActionValidated,
                        EventKind::ActionExecuting,
                        EventKind::ActionFailed,
                        EventKind::ActionSkipped,
                    ],
                ),
                (
                    "a3",
                    &[EventKind::ActionValidated, EventKind::ActionDeduplicated],
                ),
            ];
            for (action, kinds) in steps {
                for kind in *kinds {
                    log.append(kind.clone(), Some(action), id, awkward_data(p));
                }
            }
            log.append(EventKind::StateChanged, Some("a0"), id, HashMap::new());
            let completed = emitted(&EventKind::ProposalCompleted, p);
            log.append(EventKind::ProposalCompleted, None, id, completed);
        }
        log.append(
            EventKind::RunCompleted,
            None,
            None,
            emitted(&EventKind::RunCompleted, 0),
        );
    });
    journal("manually-compacted.jsonl", &|log| {
        log.enable_hash_chaining();
        log.bind_run("run-2", "client-2").expect("bind");
        write_all_kinds(log, &kinds, 0);
        log.truncate_events_keep_last(10);
        log.compact_journal();
        write_all_kinds(log, &kinds[..4], 9);
    });
    Ok(written)
}

fn load(path: &Path) -> Value {
    match EventLog::load_read_only(path) {
        Ok(log) => json!({
            "path": path,
            "ok": true,
            "events": log.len(),
            "hash_chaining": log.hash_chaining_enabled(),
            "chain": match log.verify_chain() {
                Ok(verified) => json!({"verified": verified}),
                Err(index) => json!({"tampered_at": index}),
            },
        }),
        Err(error) => {
            let message = error.to_string();
            // CAR's messages name the 1-based source line as `line=N`.
            let line = message
                .split("line=")
                .nth(1)
                .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
                .and_then(|digits| digits.parse::<u64>().ok());
            json!({
                "path": path,
                "ok": false,
                "error_kind": format!("{:?}", error.kind()),
                "error": message,
                "line": line,
            })
        }
    }
}

/// The lines of a file as `load_from_journal` reads them, parsed as CAR's `Event`.
fn parse(path: &Path, out: &mut impl Write) -> std::io::Result<()> {
    let mut reader = BufReader::new(std::fs::File::open(path)?);
    let mut bytes = Vec::new();
    let mut number = 0u64;
    loop {
        bytes.clear();
        if reader.read_until(b'\n', &mut bytes)? == 0 {
            return Ok(());
        }
        number += 1;
        let terminated = bytes.ends_with(b"\n");
        let verdict = if bytes.iter().all(u8::is_ascii_whitespace) {
            json!({"line": number, "blank": true, "ok": true, "terminated": terminated})
        } else {
            match serde_json::from_slice::<Event>(&bytes) {
                Ok(event) => {
                    let mut members: Vec<(&String, &Value)> = event.data.iter().collect();
                    members.sort_by(|a, b| a.0.cmp(b.0));
                    json!({
                        "line": number,
                        "blank": false,
                        "ok": true,
                        "terminated": terminated,
                        "kind": event.kind,
                        "timestamp": event.timestamp.to_rfc3339(),
                        "data": members
                            .iter()
                            .map(|(k, v)| json!([k, v.to_string()]))
                            .collect::<Vec<_>>(),
                        "reserialized": serde_json::to_string(&event).ok(),
                    })
                }
                Err(error) => json!({
                    "line": number,
                    "blank": false,
                    "ok": false,
                    "terminated": terminated,
                    "error": error.to_string(),
                }),
            }
        };
        writeln!(out, "{verdict}")?;
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let result = match args.first().map(String::as_str) {
        Some("write") if args.len() == 2 => write(Path::new(&args[1])).and_then(|paths| {
            paths
                .iter()
                .try_for_each(|p| writeln!(out, "{}", p.display()))
                .map_err(|e| e.to_string())
        }),
        Some("load") if args.len() >= 2 => args[1..]
            .iter()
            .try_for_each(|p| writeln!(out, "{}", load(Path::new(p))))
            .map_err(|e| e.to_string()),
        Some("parse") if args.len() == 2 => {
            parse(Path::new(&args[1]), &mut out).map_err(|e| e.to_string())
        }
        _ => Err("usage: car-oracle write DIR | load FILE... | parse FILE".to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("car-oracle: {error}");
            ExitCode::FAILURE
        }
    }
}
