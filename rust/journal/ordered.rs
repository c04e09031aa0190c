//! The ordered stage of the journal check (sequential, in line order): chain links, lifecycle
//! state, counts and the findings cap, fed each line's `CheckedLine` (`mod.rs` checks lines in
//! parallel, `chunks.rs` chunk by chunk, `stream.rs` as they arrive).
//! `_fallback/journal/ordered.py` is the same stage in Python.

#[allow(clippy::wildcard_imports)]
use super::*;
use serde::Serialize;

pub(super) struct FindingSink {
    pub(super) findings: Vec<Finding>,
    pub(super) limit: Option<usize>,
    pub(super) suppressed: u64,
    /// The suppressed findings by code and severity, so a report can give true totals and apply
    /// a project's severity overrides to the findings it does not list.
    pub(super) suppressed_codes: BTreeMap<&'static str, BTreeMap<&'static str, u64>>,
    /// Every error found, listed or suppressed: whether the journal is valid survives the cap.
    pub(super) errors: u64,
}

impl FindingSink {
    pub(super) fn push(&mut self, finding: Finding) {
        self.errors += u64::from(finding.is_error());
        if self.limit.is_some_and(|limit| self.findings.len() >= limit) {
            self.suppressed += 1;
            *self
                .suppressed_codes
                .entry(finding.code)
                .or_default()
                .entry(finding.severity.as_str())
                .or_insert(0) += 1;
        } else {
            self.findings.push(finding);
        }
    }
}

pub(super) const ACTION_TERMINAL: [&str; 5] = [
    "action_succeeded",
    "action_failed",
    "action_rejected",
    "action_skipped",
    "action_deduplicated",
];

/// `kind` as an entry of `ACTION_TERMINAL`, if it is one.
pub(super) fn terminal(kind: &str) -> Option<&'static &'static str> {
    ACTION_TERMINAL.iter().find(|&&terminal| terminal == kind)
}

/// Actions are keyed by (proposal_id, action_id): action ids such as `a0` repeat across
/// proposals. The pair is one string, the proposal's length in decimal, `:`, then both ids: one
/// allocation per key, looked up as `&str`, and two pairs are equal exactly when their strings are.
pub(super) fn action_key(proposal_id: &str, action_id: &str, key: &mut String) {
    key.clear();
    let mut digits = [0; 20];
    let start = crate::canonical::decimal(proposal_id.len() as u64, &mut digits);
    key.push_str(std::str::from_utf8(&digits[start..]).expect("decimal digits are ASCII"));
    key.push(':');
    key.push_str(proposal_id);
    key.push_str(action_id);
}

/// The (proposal_id, action_id) of an `action_key`; `None` if `key` is not one.
pub(super) fn action_ids(key: &str) -> Option<(&str, &str)> {
    let (length, ids) = key.split_once(':')?;
    let length = length.parse::<usize>().ok()?;
    Some((ids.get(..length)?, ids.get(length..)?))
}

/// One root cause, one finding: later events with the same cause (the same code and id) are
/// counted into the first finding's message at the end instead of listed.
#[derive(Default)]
pub(super) struct Repeats {
    /// (code, id) → (index of the first finding in the list, if listed; later events).
    pub(super) seen: HashMap<(&'static str, String), (Option<usize>, u64)>,
}

/// Events of runs and proposals whose start is not in the journal: it begins mid-run (CAR's
/// retention compaction keeps only the newest events; a rotated journal starts where the last
/// one ended). Reported once, at the end, on the first such event.
// Saved as it is in a resumable state (`state.rs`): the fields are the state file's.
#[derive(Default, Clone, PartialEq, Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MidRun {
    first_line: Option<u64>,
    /// Lines before the first such event that are not events: one may have held the start.
    unreadable_before: u64,
    last_line: Option<u64>,
    pub(super) runs: u64,
    pub(super) proposals: u64,
    pub(super) events: u64,
    examples: Vec<String>,
}

pub(super) struct Checker {
    pub(super) options: Options,
    pub(super) sink: FindingSink,
    pub(super) repeats: Repeats,
    pub(super) mid_run: MidRun,
    pub(super) lines: u64,
    pub(super) events: u64,
    pub(super) blank_lines: u64,
    pub(super) invalid_lines: u64,
    /// The event count of each of the schema's kinds, by its index (`EventSchema::kinds`).
    kind_counts: Vec<u64>,
    /// The counts by kind of a resumed check's state: `kinds` adds the counts since.
    pub(super) restored_kinds: BTreeMap<String, u64>,
    pub(super) schema: &'static EventSchema,
    pub(super) chain_started: bool,
    pub(super) last_hash: Option<(ChainHash, u64)>,
    pub(super) chained: u64,
    pub(super) unchained: u64,
    pub(super) verified: u64,
    pub(super) tampered_at: Option<u64>,
    pub(super) require_reported: bool,
    /// Open runs: the line of each one's `run_started`.
    pub(super) runs: HashMap<String, u64>,
    pub(super) completed_runs: ClosedWindow<()>,
    /// Runs and proposals seen without their start (the journal begins mid-run).
    pub(super) orphans: ClosedWindow<()>,
    pub(super) proposals: HashMap<String, u64>,
    pub(super) completed_proposals: ClosedWindow<()>,
    /// Open actions by `action_key`: the kind of their last event (inline: no lookup of the kind
    /// to borrow the schema's string, no allocation).
    pub(super) actions: HashMap<Box<str>, Id>,
    /// Ended actions by `action_key`: the kind that ended them (one of `ACTION_TERMINAL`).
    /// (An entry of `ACTION_TERMINAL` by reference: a thin pointer keeps a window's slot small.)
    pub(super) ended_actions: ClosedWindow<&'static &'static str>,
    /// The `action_key` of the event in hand, built in place: no allocation per action event.
    pub(super) action_key: String,
    pub(super) last_timestamp: Option<Instant>,
}

impl Checker {
    pub(super) fn new(options: &Options) -> Self {
        let schema = event_schema(options.car_version);
        Checker {
            options: options.clone(),
            sink: FindingSink {
                findings: Vec::new(),
                limit: options.max_findings,
                suppressed: 0,
                suppressed_codes: BTreeMap::new(),
                errors: 0,
            },
            repeats: Repeats::default(),
            mid_run: MidRun::default(),
            lines: 0,
            events: 0,
            blank_lines: 0,
            invalid_lines: 0,
            kind_counts: vec![0; schema.kind_names.len()],
            restored_kinds: BTreeMap::new(),
            schema,
            chain_started: false,
            last_hash: None,
            chained: 0,
            unchained: 0,
            verified: 0,
            tampered_at: None,
            require_reported: false,
            runs: HashMap::default(),
            completed_runs: ClosedWindow::new(),
            orphans: ClosedWindow::new(),
            proposals: HashMap::default(),
            completed_proposals: ClosedWindow::new(),
            actions: HashMap::default(),
            ended_actions: ClosedWindow::new(),
            action_key: String::new(),
            last_timestamp: None,
        }
    }

    /// Lists the first finding of a root cause (`code` for `id`); counts the later ones.
    fn push_once(&mut self, id: &str, finding: Finding) {
        let key = (finding.code, id.to_string());
        if let Some((_, later)) = self.repeats.seen.get_mut(&key) {
            *later += 1;
            return;
        }
        let listed = self.sink.findings.len();
        let before = self.sink.suppressed;
        self.sink.push(finding);
        // Bounded: past the window, every later cause is listed on its own.
        if self.repeats.seen.len() < CLOSED_WINDOW {
            let index = (self.sink.suppressed == before).then_some(listed);
            self.repeats.seen.insert(key, (index, 0));
        }
    }

    /// An event of a run or proposal whose start is not in the journal.
    fn mid_run_event(&mut self, number: u64, id: &str, is_run: bool) {
        let key = format!("{}{id}", if is_run { "r:" } else { "p:" });
        // An event can name both an orphan run and an orphan proposal: count it once.
        if self.mid_run.last_line != Some(number) {
            self.mid_run.events += 1;
            self.mid_run.last_line = Some(number);
        }
        if self.mid_run.first_line.is_none() {
            self.mid_run.first_line = Some(number);
            self.mid_run.unreadable_before = self.invalid_lines;
        }
        if self.orphans.get(&key).is_none() {
            self.orphans.insert(&key, ());
            if is_run {
                self.mid_run.runs += 1;
            } else {
                self.mid_run.proposals += 1;
            }
            if self.mid_run.examples.len() < 3 {
                self.mid_run.examples.push(format!("\"{id}\""));
            }
        }
    }

    /// Takes the next line's results; its findings are moved out, the rest is read in place (a
    /// line's facts are a few hundred bytes: moving each out of its batch cost a copy per line).
    pub(super) fn take(&mut self, line: &mut CheckedLine) {
        self.lines += 1;
        for finding in line.findings.drain(..) {
            self.sink.push(finding);
        }
        match &line.outcome {
            Outcome::Blank => self.blank_lines += 1,
            Outcome::Invalid => self.invalid_lines += 1,
            Outcome::Event(facts) => {
                let index = self.events;
                self.events += 1;
                if let Some(kind) = facts.kind.as_deref() {
                    // The schema's kinds are counted by index (looked up by the per-line stage,
                    // or here); a kind it does not know counts only if a resumed state counted it.
                    let known = facts
                        .kind_index
                        .map(usize::from)
                        .or_else(|| self.schema.kinds.get(kind).copied());
                    if let Some(index) = known {
                        self.kind_counts[index] += 1;
                    } else if let Some(count) = self.restored_kinds.get_mut(kind) {
                        *count += 1;
                    }
                }
                self.check_chain(line.number, index, facts);
                if self.options.lifecycle {
                    self.check_lifecycle(line.number, facts);
                }
            }
        }
    }

    /// The events by kind, for the report and the state.
    pub(super) fn kinds(&self) -> BTreeMap<String, u64> {
        let mut kinds = self.restored_kinds.clone();
        for (name, &count) in self.schema.kind_names.iter().zip(&self.kind_counts) {
            if count > 0 {
                *kinds.entry(name.clone()).or_insert(0) += count;
            }
        }
        kinds
    }

    fn tampered(&mut self, index: u64) {
        self.tampered_at.get_or_insert(index);
    }

    fn check_chain(&mut self, number: u64, index: u64, facts: &EventFacts) {
        let mode = self.options.chain;
        let Some(hash) = &facts.hash else {
            if mode == ChainMode::Off {
                return;
            }
            if let Some((_, previous_line)) = &self.last_hash {
                let message = format!(
                    "event has no \"hash\" inside the hash chain (the previous chained event is on \
                     line {previous_line}): an unchained event was inserted"
                );
                self.sink.push(
                    Finding::new(codes::CHAIN_GAP, message)
                        .at("")
                        .on_line(number),
                );
                self.tampered(index);
            } else {
                self.unchained += 1;
                if mode == ChainMode::Require && !self.require_reported {
                    self.require_reported = true;
                    let message =
                        "chain=\"require\" but the journal starts with an event without \"hash\"";
                    self.sink.push(
                        Finding::new(codes::CHAIN_REQUIRED, message)
                            .at("")
                            .on_line(number),
                    );
                    self.tampered(index);
                }
            }
            return;
        };
        self.chained += 1;
        if mode == ChainMode::Off {
            return;
        }
        let mut intact = true;
        match &facts.recomputed {
            Some(Ok(recomputed)) if recomputed == hash => {}
            Some(Ok(recomputed)) => {
                intact = false;
                let message = format!(
                    "\"hash\" does not match the event's content (recomputed {recomputed}): the event \
                     was edited"
                );
                self.sink.push(
                    Finding::new(codes::HASH_MISMATCH, message)
                        .at("/hash")
                        .on_line(number),
                );
            }
            Some(Err(Uncomputable::CarRejects(reason))) => {
                intact = false;
                // CAR's reason is serde_json's message, which the fallback does not reproduce
                // word for word: the finding says what happened, both backends alike.
                let _ = reason;
                let message = "the hash cannot be computed as CAR computes it: CAR's event \
                               parser rejects the event, so car-eventlog refuses the journal here";
                self.sink.push(
                    Finding::new(codes::DIGEST_UNCOMPUTABLE, message)
                        .at("/hash")
                        .on_line(number),
                );
            }
            Some(Err(Uncomputable::NoTimestamp)) => {
                intact = false;
                let message = "a chained event without \"timestamp\": CAR hashes the time it \
                               loads the journal instead, so this hash can never verify";
                self.sink.push(
                    Finding::new(codes::CHAINED_WITHOUT_TIMESTAMP, message)
                        .at("")
                        .on_line(number),
                );
            }
            None => {}
        }
        if let Some((previous, previous_line)) = &self.last_hash {
            if facts.prev_hash.as_ref() != Some(previous) {
                intact = false;
                let found = facts
                    .prev_hash
                    .as_ref()
                    .map_or("none".to_string(), |p| format!("\"{p}\""));
                let message = format!(
                    "\"prev_hash\" {found} does not link to the previous chained event (line \
                     {previous_line}, hash \"{previous}\"): events were deleted or reordered"
                );
                self.sink.push(
                    Finding::new(codes::LINK_MISMATCH, message)
                        .at("/prev_hash")
                        .on_line(number),
                );
            }
        }
        self.chain_started = true;
        self.last_hash = Some((hash.clone(), number));
        if intact {
            self.verified += 1;
        } else {
            self.tampered(index);
        }
    }

    fn check_lifecycle(&mut self, number: u64, facts: &EventFacts) {
        let kind = facts.kind.as_deref().unwrap_or("");
        if let Some(timestamp) = facts.timestamp {
            if self.last_timestamp.is_some_and(|last| timestamp < last) {
                self.sink.push(
                    Finding::new(
                        codes::TIMESTAMP_BACKWARDS,
                        "timestamp is earlier than the previous event's",
                    )
                    .at("/timestamp")
                    .on_line(number),
                );
            }
            self.last_timestamp = Some(timestamp);
        }
        if let Some(run_id) = &facts.run_id {
            self.check_run(number, kind, run_id);
        }
        if let Some(proposal_id) = &facts.proposal_id {
            if !self.check_proposal(number, kind, proposal_id, facts.run_id.as_deref()) {
                return;
            }
        }
        // Action rules hold for actions of a proposal only: CAR's coder sessions journal tool
        // calls with the tool's name as `action_id` and no proposal (car-server-core's fixture
        // native-car-doctor.events.jsonl), and the executor journals proposal-level failures as
        // `action_failed` without an `action_id` (car-engine executor.rs, persist_trajectory).
        if let (true, Some(proposal_id), Some(action_id)) = (
            kind.starts_with("action_"),
            &facts.proposal_id,
            &facts.action_id,
        ) {
            self.check_action(number, kind, proposal_id, action_id);
        }
    }

    fn check_run(&mut self, number: u64, kind: &str, run_id: &str) {
        if kind == "run_started" {
            // A run started again while open is not reported: CAR's startup reconciliation
            // appends every stored run's `run_started` to the journal it loads, whether or not
            // the journal has it (car-server-core 0.58.0 session.rs,
            // reconcile_durable_run_journals). The run stays open from its first start.
            self.runs.entry(run_id.to_string()).or_insert(number);
            return;
        }
        if self.runs.contains_key(run_id) {
            // A cancellation result without its request in the journal is not reported either:
            // CAR writes a recovered result whether or not the request is there (car-server-core
            // 0.58.0 session.rs, append_recovered_cancellation_result_journal).
            if kind == "run_completed" {
                self.runs.remove(run_id);
                self.completed_runs.insert(run_id, ());
            }
        } else if self.completed_runs.get(run_id).is_some() {
            if kind == "run_cancellation_result" {
                // CAR writes a cancellation's receipt after the run's terminal, still bound to
                // the run (car-server-core 0.58.0 session.rs, reconcile_durable_run_journals).
                return;
            }
            let message = format!("{kind} event for run \"{run_id}\" after its run_completed");
            self.push_once(
                run_id,
                Finding::new(codes::RUN_NOT_OPEN, message)
                    .at("/run_id")
                    .on_line(number),
            );
        } else {
            self.mid_run_event(number, run_id, true);
        }
    }

    /// False when the proposal has already completed (reported here, nothing more to check).
    fn check_proposal(
        &mut self,
        number: u64,
        kind: &str,
        proposal_id: &str,
        run_id: Option<&str>,
    ) -> bool {
        // An open proposal is never in the window of completed ones (it enters the window as it
        // leaves `proposals`, and is received again only once out of it): the small map of open
        // ones answers most events without a lookup in the large window (perf: the windows'
        // lookups were the ordered stage's largest part).
        if self.proposals.contains_key(proposal_id) {
            if kind == "proposal_completed" {
                self.proposals.remove(proposal_id);
                self.completed_proposals.insert(proposal_id, ());
            }
            return true;
        }
        if self.completed_proposals.get(proposal_id).is_some() {
            let message =
                format!("{kind} event for proposal \"{proposal_id}\" after its proposal_completed");
            self.push_once(
                proposal_id,
                Finding::new(codes::AFTER_PROPOSAL_COMPLETED, message)
                    .at("/proposal_id")
                    .on_line(number),
            );
            return false;
        }
        // Not open (answered above), nor completed: this event is the proposal's first here.
        match kind {
            // The first proposal_received is the one remembered.
            "proposal_received" => {
                self.proposals.insert(proposal_id.to_string(), number);
            }
            "proposal_completed" | "state_committed" => {
                // Inside a run this journal saw start, the proposal's start is missing; else
                // the journal begins after it (compaction, rotation).
                if run_id.is_some_and(|run| self.runs.contains_key(run)) {
                    let message = format!(
                        "{kind} for proposal \"{proposal_id}\" without an earlier proposal_received"
                    );
                    self.push_once(
                        proposal_id,
                        Finding::new(codes::PROPOSAL_NOT_RECEIVED, message)
                            .at("/proposal_id")
                            .on_line(number),
                    );
                } else {
                    self.mid_run_event(number, proposal_id, false);
                }
                if kind == "proposal_completed" {
                    self.completed_proposals.insert(proposal_id, ());
                }
            }
            _ => {}
        }
        true
    }

    fn check_action(&mut self, number: u64, kind: &str, proposal_id: &str, action_id: &str) {
        let mut key = std::mem::take(&mut self.action_key);
        action_key(proposal_id, action_id, &mut key);
        self.check_action_key(number, kind, &key, (proposal_id, action_id));
        self.action_key = key;
    }

    /// Records `kind` as the last event of the open action `key`; whether its event before was
    /// `action_executing` (one lookup of the key for both).
    fn set_action(&mut self, key: &str, kind: &str) -> bool {
        match self.actions.get_mut(key) {
            Some(last) => {
                let executing = &**last == "action_executing";
                *last = Text::new(kind);
                executing
            }
            None => {
                self.actions.insert(key.into(), Text::new(kind));
                false
            }
        }
    }

    fn check_action_key(&mut self, number: u64, kind: &str, key: &str, ids: (&str, &str)) {
        // An open action is never in the window of ended ones (it enters the window as it leaves
        // `actions`, and only a retry takes it out again and back in): as for proposals, the
        // small map answers before the large window is asked.
        let ended = if self.actions.contains_key(key) {
            None
        } else {
            self.ended_actions.get(key).copied()
        };
        if let Some(&ended) = ended {
            // car-engine's executor: a failed attempt is followed by `action_retrying` (retry) or,
            // once attempts are exhausted under `failure_behavior: skip`, by `action_skipped`.
            match (ended, kind) {
                ("action_failed", "action_retrying") => {
                    self.ended_actions.remove(key);
                    self.set_action(key, kind);
                }
                ("action_failed", "action_skipped") => {
                    self.ended_actions
                        .insert(key, terminal(kind).expect("a terminal kind"));
                }
                _ => {
                    let message = format!(
                        "{kind} for action \"{}\" after it ended with {ended}",
                        ids.1
                    );
                    let id = format!("{}\u{1f}{}", ids.0, ids.1);
                    self.push_once(
                        &id,
                        Finding::new(codes::AFTER_ACTION_ENDED, message)
                            .at("/kind")
                            .on_line(number),
                    );
                }
            }
            return;
        }
        let after_executing = match terminal(kind) {
            Some(terminal) => {
                let previous = self.actions.remove(key);
                self.ended_actions.insert(key, terminal);
                previous.is_some_and(|last| &*last == "action_executing")
            }
            None => self.set_action(key, kind),
        };
        if kind == "action_succeeded" && !after_executing {
            let message = format!(
                "action \"{}\" succeeded without an action_executing before it",
                ids.1
            );
            self.sink.push(
                Finding::new(codes::SUCCEEDED_WITHOUT_EXECUTING, message)
                    .at("/kind")
                    .on_line(number),
            );
        }
    }

    pub(super) fn finish(&mut self, interrupted: bool) -> Value {
        let mut open_runs: Vec<(u64, &String)> =
            self.runs.iter().map(|(id, line)| (*line, id)).collect();
        open_runs.sort();
        let mut open_proposals: Vec<(u64, &String)> = self
            .proposals
            .iter()
            .map(|(id, line)| (*line, id))
            .collect();
        open_proposals.sort();
        for ((_, _), (index, later)) in &self.repeats.seen {
            if let (Some(index), true) = (index, *later > 0) {
                let finding = &mut self.sink.findings[*index];
                finding.message = format!(
                    "{} (and {later} later event{} with the same cause)",
                    finding.message,
                    if *later == 1 { "" } else { "s" }
                );
            }
        }
        if self.options.lifecycle && !interrupted {
            let mut at_end = Vec::new();
            if let Some(line) = self.mid_run.first_line {
                let MidRun {
                    runs,
                    proposals,
                    events,
                    examples,
                    ..
                } = &self.mid_run;
                let cause = if self.mid_run.unreadable_before > 0 {
                    "an unreadable line before them may have held it"
                } else {
                    "as after CAR's retention compaction or a rotation"
                };
                let message = format!(
                    "the journal begins mid-run: {runs} run(s) and {proposals} proposal(s) (e.g. \
                     {}) have {events} event(s) here but their run_started / proposal_received \
                     is not in the journal; {cause}",
                    examples.join(", ")
                );
                at_end.push(
                    Finding::new(codes::BEGINS_MID_RUN, message)
                        .at("")
                        .on_line(line),
                );
            }
            for (line, run_id) in &open_runs {
                let message = format!("run \"{run_id}\" is still open at the end of the journal");
                at_end.push(
                    Finding::new(codes::RUN_OPEN_AT_END, message)
                        .at("/run_id")
                        .on_line(*line),
                );
            }
            // Only the CAR server writes proposal_completed (car-eventlog `EventKind` docs;
            // car-server-core finish_pending_proposal): without any, car-engine wrote the journal
            // alone and leaves every proposal open, which is said once.
            let server_completes = self.kinds().contains_key("proposal_completed");
            match open_proposals.first() {
                Some((line, proposal_id)) if !server_completes => {
                    let count = open_proposals.len();
                    let message = format!(
                        "no proposal_completed in the journal: {count} proposal(s) (e.g. \
                         \"{proposal_id}\") received and never completed, as car-engine writes \
                         a journal without a CAR server (only the server completes proposals)"
                    );
                    at_end.push(
                        Finding::new(codes::PROPOSALS_NEVER_COMPLETED, message)
                            .at("/proposal_id")
                            .on_line(*line),
                    );
                }
                _ => {
                    for (line, proposal_id) in &open_proposals {
                        let message = format!(
                            "proposal \"{proposal_id}\" is still open at the end of the journal"
                        );
                        at_end.push(
                            Finding::new(codes::PROPOSAL_OPEN_AT_END, message)
                                .at("/proposal_id")
                                .on_line(*line),
                        );
                    }
                }
            }
            for finding in at_end {
                self.sink.push(finding);
            }
        }
        let chain = match (self.options.chain, self.tampered_at) {
            (ChainMode::Off, _) => None,
            (_, Some(index)) => Some(ChainStats::TamperedAt { tampered_at: index }),
            (_, None) => Some(ChainStats::Verified {
                verified: self.verified,
            }),
        };
        let stats = JournalStats {
            lines: self.lines,
            events: self.events,
            blank_lines: self.blank_lines,
            invalid_lines: self.invalid_lines,
            kinds: self.kinds(),
            chained: self.chained,
            unchained: self.unchained,
            verified: self.verified,
            chain,
            suppressed_findings: self.sink.suppressed,
            suppressed_codes: &self.sink.suppressed_codes,
            errors: self.sink.errors,
            open_runs: open_runs.iter().map(|(_, id)| id.as_str()).collect(),
            open_proposals: open_proposals.iter().map(|(_, id)| id.as_str()).collect(),
            interrupted,
        };
        serde_json::to_value(stats).expect("the stats are numbers, strings and maps of them")
    }
}

/// A journal check's stats, the report's `stats` (docs/reports.md): declared once here, in this
/// order, and as `JournalStats` in the facade (`pairling_fast/journal/options.py`, which the
/// core's stub and the fallback name); a report's bytes follow this order.
#[derive(Serialize)]
struct JournalStats<'a> {
    lines: u64,
    events: u64,
    blank_lines: u64,
    invalid_lines: u64,
    kinds: BTreeMap<String, u64>,
    chained: u64,
    unchained: u64,
    verified: u64,
    /// `None` (JSON null) when the chain is not checked.
    chain: Option<ChainStats>,
    suppressed_findings: u64,
    suppressed_codes: &'a BTreeMap<&'static str, BTreeMap<&'static str, u64>>,
    errors: u64,
    open_runs: Vec<&'a str>,
    open_proposals: Vec<&'a str>,
    interrupted: bool,
}

/// The chain's outcome: every link verified, or the line of the first that is not.
#[derive(Serialize)]
#[serde(untagged)]
enum ChainStats {
    Verified { verified: u64 },
    TamperedAt { tampered_at: u64 },
}
