//! The ordered stage's state as data: what `check_journal` has learned from a journal's lines so
//! far (counters, the chain's last link, open runs / proposals / actions, the windows of closed
//! ids, the findings listed and counted), written out where a verified prefix ends and read back
//! to check only the lines appended after it (`pairling-fast check --state`, docs/journals.md).
//!
//! The format is plain JSON, the same from both backends (`_fallback/journal.py` writes and
//! reads it alike), with every map written in sorted order so equal states are equal text. It
//! carries no options: the Python layer keeps the options' fingerprint beside it and only
//! resumes under the same options.

use serde_json::{json, Map, Value};

use super::{ActionKey, Checker, ClosedWindow, FindingSink, MidRun, OpenRun, Options};
use crate::codes::{self, Code};
use crate::report::Finding;

type Parsed<T> = Result<T, String>;

impl Checker {
    /// The ordered stage's state after the lines taken so far (before `finish`).
    pub(super) fn snapshot(&self) -> Value {
        let mut runs: Vec<(&String, &OpenRun)> = self.runs.iter().collect();
        runs.sort_by_key(|(id, _)| *id);
        let mut proposals: Vec<(&String, &u64)> = self.proposals.iter().collect();
        proposals.sort();
        let mut actions: Vec<(&ActionKey, &String)> = self.actions.iter().collect();
        actions.sort();
        let mut repeats: Vec<_> = self.repeats.seen.iter().collect();
        repeats.sort_by(|a, b| a.0.cmp(b.0));
        let sink = &self.sink;
        json!({
            "lines": self.lines,
            "events": self.events,
            "blank_lines": self.blank_lines,
            "invalid_lines": self.invalid_lines,
            "kinds": self.kinds,
            "last_hash": self.last_hash,
            "chained": self.chained,
            "unchained": self.unchained,
            "verified": self.verified,
            "tampered_at": self.tampered_at,
            "require_reported": self.require_reported,
            "findings": sink.findings.iter().map(finding_value).collect::<Vec<_>>(),
            "suppressed": sink.suppressed,
            "suppressed_codes": sink.suppressed_codes,
            "errors": sink.errors,
            "repeats": repeats
                .iter()
                .map(|((code, id), (index, later))| json!([code, id, index, later]))
                .collect::<Vec<_>>(),
            "mid_run": {
                "first_line": self.mid_run.first_line,
                "unreadable_before": self.mid_run.unreadable_before,
                "last_line": self.mid_run.last_line,
                "runs": self.mid_run.runs,
                "proposals": self.mid_run.proposals,
                "events": self.mid_run.events,
                "examples": self.mid_run.examples,
            },
            "runs": runs
                .iter()
                .map(|(id, run)| json!([id, run.line, run.cancellation_requested]))
                .collect::<Vec<_>>(),
            "completed_runs": window_value(&self.completed_runs, |k| json!(k), |_| Value::Null),
            "orphans": window_value(&self.orphans, |k| json!(k), |_| Value::Null),
            "proposals": proposals.iter().map(|(id, line)| json!([id, line])).collect::<Vec<_>>(),
            "completed_proposals":
                window_value(&self.completed_proposals, |k| json!(k), |_| Value::Null),
            "actions": actions
                .iter()
                .map(|((proposal, action), kind)| json!([[proposal, action], kind]))
                .collect::<Vec<_>>(),
            "ended_actions": window_value(&self.ended_actions, |k| json!([k.0, k.1]), |v| json!(v)),
            "last_timestamp": self.last_timestamp,
        })
    }

    /// A checker that goes on from `state` (a `snapshot`) under `options`; a message saying
    /// what is malformed when `state` is not one.
    pub(super) fn restore(options: &Options, state: &Value) -> Parsed<Self> {
        let field = |name: &str| state.get(name).ok_or_else(|| format!("no \"{name}\""));
        let mut checker = Checker::new(options);
        checker.lines = count(field("lines")?)?;
        checker.events = count(field("events")?)?;
        checker.blank_lines = count(field("blank_lines")?)?;
        checker.invalid_lines = count(field("invalid_lines")?)?;
        for (kind, n) in object(field("kinds")?)? {
            checker.kinds.insert(kind.clone(), count(n)?);
        }
        checker.last_hash = optional(field("last_hash")?, |v| {
            let [hash, line] = tuple(v)?;
            Ok((text(hash)?, count(line)?))
        })?;
        checker.chain_started = checker.last_hash.is_some();
        checker.chained = count(field("chained")?)?;
        checker.unchained = count(field("unchained")?)?;
        checker.verified = count(field("verified")?)?;
        checker.tampered_at = optional(field("tampered_at")?, count)?;
        checker.require_reported = flag(field("require_reported")?)?;
        checker.sink = sink(options, state)?;
        for entry in list(field("repeats")?)? {
            let [code, id, index, later] = tuple(entry)?;
            let index = optional(index, count)?.map(|i| i as usize);
            if index.is_some_and(|i| i >= checker.sink.findings.len()) {
                return Err("a repeat points past the findings".to_string());
            }
            checker
                .repeats
                .seen
                .insert((known_code(code)?.id, text(id)?), (index, count(later)?));
        }
        checker.mid_run = mid_run(field("mid_run")?)?;
        for entry in list(field("runs")?)? {
            let [id, line, cancellation_requested] = tuple(entry)?;
            let run = OpenRun {
                line: count(line)?,
                cancellation_requested: flag(cancellation_requested)?,
            };
            checker.runs.insert(text(id)?, run);
        }
        checker.completed_runs = window(field("completed_runs")?, text, |_| Ok(()))?;
        checker.orphans = window(field("orphans")?, text, |_| Ok(()))?;
        for entry in list(field("proposals")?)? {
            let [id, line] = tuple(entry)?;
            checker.proposals.insert(text(id)?, count(line)?);
        }
        checker.completed_proposals = window(field("completed_proposals")?, text, |_| Ok(()))?;
        for entry in list(field("actions")?)? {
            let [key, kind] = tuple(entry)?;
            checker.actions.insert(action_key(key)?, text(kind)?);
        }
        checker.ended_actions = window(field("ended_actions")?, action_key, text)?;
        checker.last_timestamp = optional(field("last_timestamp")?, |v| {
            let [seconds, nanos] = tuple(v)?;
            let seconds = seconds.as_i64().ok_or("a timestamp's seconds")?;
            let nanos = u32::try_from(count(nanos)?).map_err(|_| "a timestamp's nanoseconds")?;
            Ok((seconds, nanos))
        })?;
        Ok(checker)
    }
}

fn finding_value(finding: &Finding) -> Value {
    json!([
        finding.code,
        finding.severity.as_str(),
        finding.message,
        finding.line,
        finding.pointer,
        finding.schema_pointer
    ])
}

fn window_value<K, V>(
    window: &ClosedWindow<K, V>,
    key: impl Fn(&K) -> Value,
    value: impl Fn(&V) -> Value,
) -> Value {
    let mut entries: Vec<(&K, &(V, u64))> = window.entries.iter().collect();
    entries.sort_by_key(|(_, (_, generation))| *generation);
    json!({
        "generation": window.generation,
        "order": window
            .order
            .iter()
            .map(|(k, generation)| json!([key(k), generation]))
            .collect::<Vec<_>>(),
        "entries": entries
            .iter()
            .map(|(k, (v, generation))| json!([key(k), generation, value(v)]))
            .collect::<Vec<_>>(),
    })
}

fn window<K: Eq + std::hash::Hash + Clone, V>(
    state: &Value,
    key: impl Fn(&Value) -> Parsed<K>,
    value: impl Fn(&Value) -> Parsed<V>,
) -> Parsed<ClosedWindow<K, V>> {
    let mut window = ClosedWindow::new();
    window.generation = count(state.get("generation").ok_or("a window's generation")?)?;
    for entry in list(state.get("order").ok_or("a window's order")?)? {
        let [k, generation] = tuple(entry)?;
        window.order.push_back((key(k)?, count(generation)?));
    }
    for entry in list(state.get("entries").ok_or("a window's entries")?)? {
        let [k, generation, v] = tuple(entry)?;
        window
            .entries
            .insert(key(k)?, (value(v)?, count(generation)?));
    }
    Ok(window)
}

fn sink(options: &Options, state: &Value) -> Parsed<FindingSink> {
    let findings = list(state.get("findings").ok_or("no \"findings\"")?)?
        .iter()
        .map(finding)
        .collect::<Parsed<Vec<_>>>()?;
    let mut suppressed_codes = std::collections::BTreeMap::new();
    for (code, by_severity) in object(state.get("suppressed_codes").ok_or("suppressed_codes")?)? {
        let code = known_code(&json!(code))?;
        let counts: &mut std::collections::BTreeMap<&'static str, u64> =
            suppressed_codes.entry(code.id).or_default();
        for (name, n) in object(by_severity)? {
            same_severity(code, name)?;
            counts.insert(code.severity.as_str(), count(n)?);
        }
    }
    Ok(FindingSink {
        findings,
        limit: options.max_findings,
        suppressed: count(state.get("suppressed").ok_or("no \"suppressed\"")?)?,
        suppressed_codes,
        errors: count(state.get("errors").ok_or("no \"errors\"")?)?,
    })
}

fn finding(value: &Value) -> Parsed<Finding> {
    let [code, level, message, line, pointer, schema_pointer] = tuple(value)?;
    let code = known_code(code)?;
    same_severity(code, level.as_str().unwrap_or(""))?;
    let mut finding = Finding::new(code, text(message)?);
    finding.line = optional(line, count)?;
    finding.pointer = optional(pointer, text)?;
    finding.schema_pointer = optional(schema_pointer, text)?;
    Ok(finding)
}

fn mid_run(state: &Value) -> Parsed<MidRun> {
    let field = |name: &str| {
        state
            .get(name)
            .ok_or_else(|| format!("no mid_run \"{name}\""))
    };
    Ok(MidRun {
        first_line: optional(field("first_line")?, count)?,
        unreadable_before: count(field("unreadable_before")?)?,
        last_line: optional(field("last_line")?, count)?,
        runs: count(field("runs")?)?,
        proposals: count(field("proposals")?)?,
        events: count(field("events")?)?,
        examples: list(field("examples")?)?
            .iter()
            .map(text)
            .collect::<Parsed<_>>()?,
    })
}

/// A code's severity is the table's; a state that names another one is not of this table.
fn same_severity(code: Code, name: &str) -> Parsed<()> {
    if code.severity.as_str() == name {
        Ok(())
    } else {
        Err(format!("{} is not a {name:?} in the code table", code.id))
    }
}

fn known_code(value: &Value) -> Parsed<Code> {
    let name = value.as_str().ok_or("a finding code")?;
    codes::known(name).ok_or_else(|| format!("unknown finding code {name:?}"))
}

fn action_key(value: &Value) -> Parsed<ActionKey> {
    let [proposal, action] = tuple(value)?;
    Ok((text(proposal)?, text(action)?))
}

fn count(value: &Value) -> Parsed<u64> {
    value
        .as_u64()
        .ok_or_else(|| format!("{value} is not a count"))
}

fn flag(value: &Value) -> Parsed<bool> {
    value
        .as_bool()
        .ok_or_else(|| format!("{value} is not a boolean"))
}

fn text(value: &Value) -> Parsed<String> {
    value
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("{value} is not a string"))
}

fn list(value: &Value) -> Parsed<&Vec<Value>> {
    value
        .as_array()
        .ok_or_else(|| "a list expected".to_string())
}

fn object(value: &Value) -> Parsed<&Map<String, Value>> {
    value
        .as_object()
        .ok_or_else(|| "an object expected".to_string())
}

fn tuple<const N: usize>(value: &Value) -> Parsed<[&Value; N]> {
    let items = list(value)?;
    <[&Value; N]>::try_from(items.iter().collect::<Vec<_>>())
        .map_err(|_| format!("a list of {N} items expected"))
}

fn optional<T>(value: &Value, parse: impl Fn(&Value) -> Parsed<T>) -> Parsed<Option<T>> {
    if value.is_null() {
        Ok(None)
    } else {
        parse(value).map(Some)
    }
}

// A state restored is the state snapshotted: checked by `journal.rs`'s resume tests, which
// compare a resumed check with a whole one; this module's own tests cover malformed states.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_reads_back_as_the_same_snapshot() {
        let options = Options::default();
        let mut checker = Checker::new(&options);
        checker.lines = 3;
        checker.runs.insert(
            "r".into(),
            OpenRun {
                line: 2,
                cancellation_requested: true,
            },
        );
        checker.completed_runs.insert("done".into(), ());
        checker.completed_runs.remove(&"done".to_string());
        checker
            .ended_actions
            .insert(("p".into(), "a".into()), "action_failed".into());
        checker.sink.push(
            Finding::new(codes::RUN_OPEN_AT_END, "x")
                .at("/run_id")
                .on_line(2),
        );
        let snapshot = checker.snapshot();
        let restored = Checker::restore(&options, &snapshot).expect("restores");
        assert_eq!(restored.snapshot(), snapshot);
    }

    #[test]
    fn a_malformed_state_is_refused_with_a_reason() {
        let options = Options::default();
        let mut snapshot = Checker::new(&options).snapshot();
        snapshot["findings"] = json!([["PF999999", "error", "m", 1, "", null]]);
        let error = Checker::restore(&options, &snapshot)
            .err()
            .expect("refused");
        assert!(error.contains("unknown finding code"), "{error}");
        snapshot["findings"] = json!([]);
        snapshot["lines"] = json!(-1);
        assert!(Checker::restore(&options, &snapshot).is_err());
        assert!(Checker::restore(&options, &json!({})).is_err());
    }
}
