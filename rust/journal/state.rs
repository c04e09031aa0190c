//! The ordered stage's state as data: what `check_journal` has learned from a journal's lines so
//! far (counters, the chain's last link, open runs / proposals / actions, the windows of closed
//! ids, the findings listed and counted), written out where a verified prefix ends and read back
//! to check only the lines appended after it (`pairling-fast check --state`, docs/journals.md).
//!
//! The format is plain JSON, the same from both backends (`_fallback/journal/state.py` writes
//! and reads it alike), with every map written in sorted order so equal states are equal text.
//! It is read straight into the typed `State` below (no `serde_json::Value` tree: the windows of
//! closed ids make a state of ~65,536 ids each, and a tree of them cost more than checking a few
//! MB appended). A window is written once, as its last inserts' keys in order: which of them are
//! still in it and their values are rebuilt from that on reading. It carries no options: the
//! Python layer keeps the options' fingerprint beside it and only resumes under the same options.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{
    action_ids, action_key, terminal, ChainHash, Checker, ClosedWindow, FindingSink, MidRun,
    Options, Text, CLOSED_WINDOW,
};
use crate::codes::{self, Code};
use crate::report::Finding;
use crate::validate::BestMatch;

type Parsed<T> = Result<T, String>;

/// An action's (proposal_id, action_id), as the state writes it.
type ActionKey = (String, String);

/// A finding, by the names of the record it crosses into Python as (`rust/python/findings.rs`),
/// so the Python layer rebuilds a restored finding as it builds any other (`engine.RawFinding`).
#[derive(Serialize, Deserialize, PartialEq, Debug)]
#[serde(deny_unknown_fields)]
struct FindingState {
    code: String,
    severity: String,
    message: String,
    line: Option<u64>,
    pointer: Option<String>,
    schema_pointer: Option<String>,
    /// (pointer, schema pointer, message) of a failing composite's closest branch error.
    best_match: Option<(String, String, String)>,
}

#[derive(Serialize, Deserialize, PartialEq, Debug)]
#[serde(deny_unknown_fields)]
struct State {
    lines: u64,
    events: u64,
    blank_lines: u64,
    invalid_lines: u64,
    kinds: BTreeMap<String, u64>,
    last_hash: Option<(String, u64)>,
    chained: u64,
    unchained: u64,
    verified: u64,
    tampered_at: Option<u64>,
    require_reported: bool,
    findings: Vec<FindingState>,
    suppressed: u64,
    suppressed_codes: BTreeMap<String, BTreeMap<String, u64>>,
    errors: u64,
    /// (code, id, index of its finding if listed, later events), sorted.
    repeats: Vec<(String, String, Option<u64>, u64)>,
    mid_run: MidRun,
    /// (id, line), sorted.
    runs: Vec<(String, u64)>,
    completed_runs: WindowState<String, ()>,
    orphans: WindowState<String, ()>,
    /// (id, line), sorted.
    proposals: Vec<(String, u64)>,
    completed_proposals: WindowState<String, ()>,
    /// ((proposal, action), kind), sorted.
    actions: Vec<(ActionKey, String)>,
    ended_actions: WindowState<ActionKey, String>,
    last_timestamp: Option<(i64, u32)>,
}

/// A `ClosedWindow` written once: its last inserts are generations `generation - keys.len() + 1`
/// to `generation` (one a key, oldest first), and an insert is still in the window unless
/// listed in `gone` (its key was removed, or inserted again later). `values` are the values of
/// those still in, in order; a set (unit values) has none.
#[derive(Serialize, Deserialize, PartialEq, Debug)]
#[serde(deny_unknown_fields)]
struct WindowState<K, V> {
    generation: u64,
    keys: Vec<K>,
    gone: Vec<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    values: Option<Vec<V>>,
}

impl Checker {
    /// The ordered stage's state after the lines taken so far (before `finish`), as JSON text.
    pub(super) fn snapshot(&self) -> String {
        let state = self.state();
        serde_json::to_string(&state).expect("a state of strings and numbers serializes")
    }

    fn state(&self) -> State {
        let sink = &self.sink;
        let mut repeats: Vec<_> = self
            .repeats
            .seen
            .iter()
            .map(|((code, id), (index, later))| {
                (
                    (*code).to_string(),
                    id.clone(),
                    index.map(|i| i as u64),
                    *later,
                )
            })
            .collect();
        repeats.sort();
        State {
            lines: self.lines,
            events: self.events,
            blank_lines: self.blank_lines,
            invalid_lines: self.invalid_lines,
            kinds: self.kinds(),
            last_hash: self
                .last_hash
                .as_ref()
                .map(|(hash, line)| (hash.to_string(), *line)),
            chained: self.chained,
            unchained: self.unchained,
            verified: self.verified,
            tampered_at: self.tampered_at,
            require_reported: self.require_reported,
            findings: sink.findings.iter().map(finding_state).collect(),
            suppressed: sink.suppressed,
            suppressed_codes: sink
                .suppressed_codes
                .iter()
                .map(|(code, counts)| {
                    let counts = counts.iter().map(|(s, n)| ((*s).to_string(), *n)).collect();
                    ((*code).to_string(), counts)
                })
                .collect(),
            errors: sink.errors,
            repeats,
            mid_run: self.mid_run.clone(),
            runs: sorted(self.runs.iter().map(|(id, line)| (id.clone(), *line))),
            completed_runs: window_state(&self.completed_runs, false, str::to_string, |()| ()),
            orphans: window_state(&self.orphans, false, str::to_string, |()| ()),
            proposals: sorted(self.proposals.iter().map(|(id, line)| (id.clone(), *line))),
            completed_proposals: window_state(
                &self.completed_proposals,
                false,
                str::to_string,
                |()| (),
            ),
            actions: sorted(
                self.actions
                    .iter()
                    .map(|(key, kind)| (action_pair(key), kind.to_string())),
            ),
            ended_actions: window_state(&self.ended_actions, true, action_pair, |kind| {
                (**kind).to_string()
            }),
            last_timestamp: self.last_timestamp,
        }
    }

    /// A checker that goes on from `text` (a `snapshot`) under `options`; a message saying
    /// what is malformed when `text` is not one.
    pub(super) fn restore(options: &Options, text: &str) -> Parsed<Self> {
        let state: State = serde_json::from_str(text).map_err(|error| error.to_string())?;
        let mut checker = Checker::new(options);
        checker.lines = state.lines;
        checker.events = state.events;
        checker.blank_lines = state.blank_lines;
        checker.invalid_lines = state.invalid_lines;
        checker.restored_kinds = state.kinds;
        checker.chain_started = state.last_hash.is_some();
        checker.last_hash = state
            .last_hash
            .map(|(hash, line)| (ChainHash::new(&hash), line));
        checker.chained = state.chained;
        checker.unchained = state.unchained;
        checker.verified = state.verified;
        checker.tampered_at = state.tampered_at;
        checker.require_reported = state.require_reported;
        checker.sink = FindingSink {
            findings: state
                .findings
                .into_iter()
                .map(finding)
                .collect::<Parsed<_>>()?,
            limit: options.max_findings,
            suppressed: state.suppressed,
            suppressed_codes: suppressed_codes(state.suppressed_codes)?,
            errors: state.errors,
        };
        for (code, id, index, later) in state.repeats {
            let index = index.map(|i| i as usize);
            if index.is_some_and(|i| i >= checker.sink.findings.len()) {
                return Err("a repeat points past the findings".to_string());
            }
            let code = known_code(&code)?.id;
            checker.repeats.seen.insert((code, id), (index, later));
        }
        checker.mid_run = state.mid_run;
        checker.runs = state.runs.into_iter().collect();
        checker.completed_runs = window(state.completed_runs, false, String::into, Ok)?;
        checker.orphans = window(state.orphans, false, String::into, Ok)?;
        checker.proposals = state.proposals.into_iter().collect();
        checker.completed_proposals = window(state.completed_proposals, false, String::into, Ok)?;
        let mut key = String::new();
        for ((proposal_id, action_id), kind) in state.actions {
            action_key(&proposal_id, &action_id, &mut key);
            checker
                .actions
                .insert(key.as_str().into(), Text::new(&kind));
        }
        checker.ended_actions = window(
            state.ended_actions,
            true,
            |(proposal_id, action_id): ActionKey| {
                action_key(&proposal_id, &action_id, &mut key);
                key.as_str().into()
            },
            |kind: String| {
                terminal(&kind).ok_or_else(|| format!("{kind:?} does not end an action"))
            },
        )?;
        checker.last_timestamp = state.last_timestamp;
        Ok(checker)
    }
}

fn sorted<T: Ord>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut items: Vec<T> = items.collect();
    items.sort();
    items
}

fn finding_state(finding: &Finding) -> FindingState {
    FindingState {
        code: finding.code.to_string(),
        severity: finding.severity.as_str().to_string(),
        message: finding.message.clone(),
        line: finding.line,
        pointer: finding.pointer.clone(),
        schema_pointer: finding.schema_pointer.clone(),
        best_match: finding.best_match.as_deref().map(|best| {
            (
                best.pointer.clone(),
                best.schema_pointer.clone(),
                best.message.clone(),
            )
        }),
    }
}

fn finding(state: FindingState) -> Parsed<Finding> {
    let code = known_code(&state.code)?;
    same_severity(code, &state.severity)?;
    let mut finding = Finding::new(code, state.message);
    finding.line = state.line;
    finding.pointer = state.pointer;
    finding.schema_pointer = state.schema_pointer;
    finding.best_match = state.best_match.map(|(pointer, schema_pointer, message)| {
        Box::new(BestMatch {
            pointer,
            schema_pointer,
            message,
        })
    });
    Ok(finding)
}

fn suppressed_codes(
    state: BTreeMap<String, BTreeMap<String, u64>>,
) -> Parsed<BTreeMap<&'static str, BTreeMap<&'static str, u64>>> {
    let mut suppressed = BTreeMap::new();
    for (code, by_severity) in state {
        let code = known_code(&code)?;
        let counts: &mut BTreeMap<&'static str, u64> = suppressed.entry(code.id).or_default();
        for (name, n) in by_severity {
            same_severity(code, &name)?;
            counts.insert(code.severity.as_str(), n);
        }
    }
    Ok(suppressed)
}

/// The (proposal_id, action_id) of a key of the checker's actions (`action_key`).
fn action_pair(key: &str) -> ActionKey {
    let (proposal_id, action_id) = action_ids(key).expect("the checker's keys are action keys");
    (proposal_id.to_string(), action_id.to_string())
}

/// `window` as written: its inserts in order, `gone` those no longer in it.
fn window_state<K, V, W>(
    window: &ClosedWindow<W>,
    with_values: bool,
    key: impl Fn(&str) -> K,
    value: impl Fn(&W) -> V,
) -> WindowState<K, V> {
    let mut keys = Vec::new();
    let mut gone = Vec::new();
    let mut values = Vec::new();
    for (index, (id, current)) in window.inserts().enumerate() {
        match current {
            Some(current) => values.push(value(current)),
            None => gone.push(index as u64),
        }
        keys.push(key(id));
    }
    WindowState {
        generation: window.generation(),
        keys,
        gone,
        values: with_values.then_some(values),
    }
}

fn window<K, V: Default, W>(
    state: WindowState<K, V>,
    with_values: bool,
    mut key: impl FnMut(K) -> Box<str>,
    value: impl Fn(V) -> Parsed<W>,
) -> Parsed<ClosedWindow<W>> {
    let WindowState {
        generation,
        keys,
        gone,
        values,
    } = state;
    let length = keys.len() as u64;
    if keys.len() > CLOSED_WINDOW || length > generation {
        return Err("a window of more keys than it holds".to_string());
    }
    if values.is_some() != with_values {
        return Err("a window's values, given for a set or missing for a map".to_string());
    }
    if gone.windows(2).any(|pair| pair[0] >= pair[1]) || gone.last().is_some_and(|&i| i >= length) {
        return Err("a window's gone inserts out of order or range".to_string());
    }
    let live = keys.len() - gone.len();
    let mut values = values.map(Vec::into_iter);
    if values.as_ref().is_some_and(|values| values.len() != live) {
        return Err("a window's values do not match its inserts".to_string());
    }
    let mut gone = gone.into_iter().peekable();
    let mut inserts = Vec::with_capacity(keys.len());
    for (index, id) in (0u64..).zip(keys) {
        let still_in = gone.next_if_eq(&index).is_none();
        let current = if still_in {
            let current = values.as_mut().and_then(Iterator::next).unwrap_or_default();
            Some(value(current)?)
        } else {
            None
        };
        inserts.push((key(id), current));
    }
    ClosedWindow::restore(generation, inserts).map_err(str::to_string)
}

/// A code's severity is the table's; a state that names another one is not of this table.
fn same_severity(code: Code, name: &str) -> Parsed<()> {
    if code.severity.as_str() == name {
        Ok(())
    } else {
        Err(format!("{} is not a {name:?} in the code table", code.id))
    }
}

fn known_code(name: &str) -> Parsed<Code> {
    codes::known(name).ok_or_else(|| format!("unknown finding code {name:?}"))
}

// A state restored is the state snapshotted: checked by `mod.rs`'s resume tests, which
// compare a resumed check with a whole one; this module's own tests cover windows and
// malformed states.
#[cfg(test)]
mod tests {
    use super::super::ordered::ACTION_TERMINAL;
    use super::*;
    use serde_json::{json, Value};

    fn round_trip(checker: &Checker, options: &Options) -> String {
        let snapshot = checker.snapshot();
        let restored = Checker::restore(options, &snapshot).expect("restores");
        assert_eq!(restored.snapshot(), snapshot);
        snapshot
    }

    #[test]
    fn a_snapshot_reads_back_as_the_same_snapshot() {
        let options = Options::default();
        let mut checker = Checker::new(&options);
        checker.lines = 3;
        checker.runs.insert("r".into(), 2);
        checker.completed_runs.insert("done", ());
        checker.completed_runs.remove("done");
        let mut key = String::new();
        action_key("p", "a", &mut key);
        checker.ended_actions.insert(&key, &ACTION_TERMINAL[1]);
        action_key("p:1", "a", &mut key);
        checker
            .actions
            .insert(key.as_str().into(), Text::new("action_executing"));
        checker.sink.push(
            Finding::new(codes::RUN_OPEN_AT_END, "x")
                .at("/run_id")
                .on_line(2),
        );
        checker.sink.push(Finding {
            best_match: Some(Box::new(BestMatch {
                pointer: "/kind".into(),
                schema_pointer: "/oneOf/0/const".into(),
                message: "m".into(),
            })),
            ..Finding::new(codes::SCHEMA_VIOLATION, "y")
                .at("/kind")
                .on_line(3)
        });
        let snapshot: Value = serde_json::from_str(&round_trip(&checker, &options)).unwrap();
        assert_eq!(
            snapshot["findings"][1]["best_match"],
            json!(["/kind", "/oneOf/0/const", "m"])
        );
    }

    #[test]
    fn a_full_window_is_written_once_and_rebuilt() {
        let options = Options::default();
        let mut checker = Checker::new(&options);
        let mut key = String::new();
        for n in 0..CLOSED_WINDOW + 10 {
            action_key(&format!("p{}", n % (CLOSED_WINDOW - 6)), "a", &mut key);
            checker
                .ended_actions
                .insert(&key, &ACTION_TERMINAL[n % ACTION_TERMINAL.len()]);
        }
        action_key("p20", "a", &mut key);
        checker.ended_actions.remove(&key);
        let snapshot: Value = serde_json::from_str(&round_trip(&checker, &options)).unwrap();
        let window = &snapshot["ended_actions"];
        assert_eq!(window["keys"].as_array().unwrap().len(), CLOSED_WINDOW);
        // The window holds inserts 10..=65,545; 65,530.. put p0..p15 in again, so the first
        // inserts of p10..p15 are gone, as is p20's (removed).
        let gone = window["gone"].as_array().unwrap().len();
        assert_eq!(gone, 6 + 1);
        let values = window["values"].as_array().unwrap();
        assert_eq!(values.len(), CLOSED_WINDOW - gone);
        assert_eq!(
            values.last(),
            Some(&json!(
                ACTION_TERMINAL[(CLOSED_WINDOW + 9) % ACTION_TERMINAL.len()]
            ))
        );
    }

    #[test]
    fn a_malformed_state_is_refused_with_a_reason() {
        let options = Options::default();
        let snapshot: Value = serde_json::from_str(&Checker::new(&options).snapshot()).unwrap();
        let refused = |edit: &dyn Fn(&mut Value)| {
            let mut state = snapshot.clone();
            edit(&mut state);
            Checker::restore(&options, &state.to_string())
                .err()
                .expect("refused")
        };
        let finding = json!({
            "code": "PF999999", "severity": "error", "message": "m", "line": 1, "pointer": "",
            "schema_pointer": null, "best_match": null
        });
        let error = refused(&|s| s["findings"] = json!([finding]));
        assert!(error.contains("unknown finding code"), "{error}");
        // The six-field array of state format 5 is not read: the Python layer checks such a
        // state in full (docs/journals.md).
        let error = refused(&|s| s["findings"] = json!([["PF301", "error", "m", 1, "", null]]));
        assert!(error.contains("expected struct FindingState"), "{error}");
        assert!(refused(&|s| s["lines"] = json!(-1)).contains("-1"));
        assert!(refused(&|s| s["surplus"] = json!(1)).contains("surplus"));
        let error = refused(&|s| s["orphans"]["gone"] = json!([0]));
        assert!(error.contains("out of order or range"), "{error}");
        let error = refused(&|s| {
            s["orphans"] = json!({"generation": 2, "keys": ["a", "a"], "gone": []});
        });
        assert!(error.contains("twice"), "{error}");
        let error = refused(&|s| s["ended_actions"]["values"] = json!(["x"]));
        assert!(error.contains("values"), "{error}");
        assert!(Checker::restore(&options, "{}").is_err());
    }
}
