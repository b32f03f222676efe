//! Failed cycles, told once per streak.
//!
//! A drain whose store keeps failing (a full disk, a database that is down) retries with
//! backoff for as long as the outage lasts. One log line per retry would bury the cause
//! under thousands of identical lines, so a streak of failures of one kind (the step that
//! failed and the error's [`OutboxError::kind`], never its message text, which carries
//! ids and numbers) is told twice: a warning when it starts, and a summary with its count
//! when it ends, because the error changed, the store recovered or the drain stopped.
//! Every failed cycle is still counted in [`crate::metric_names::FAILED_CYCLES`].

use chrono::{DateTime, SecondsFormat, Utc};

use super::DrainSummary;
use crate::OutboxError;

/// The part of a cycle that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// Claiming a batch (this cycle's, or the next one's, claimed ahead).
    Claim,
    /// Recording a batch's outcomes.
    Complete,
}

impl Step {
    /// The metric label.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Self::Claim => "claim",
            Self::Complete => "complete",
        }
    }

    /// The word for a log line: "claims failing since …".
    fn plural(self) -> &'static str {
        match self {
            Self::Claim => "claims",
            Self::Complete => "completions",
        }
    }
}

/// A cycle that failed, and where.
#[derive(Debug)]
pub(super) struct CycleError {
    /// The step that failed.
    pub(super) step: Step,
    /// The store's error.
    pub(super) error: OutboxError,
    /// What the cycle did before it failed: entries claimed and emitted, and what the
    /// sub-batches recorded along the way are as done as those of a cycle that ended well.
    pub(super) done: DrainSummary,
}

/// Failures of one step and one kind in a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Streak {
    step: Step,
    kind: &'static str,
    since: DateTime<Utc>,
    count: u64,
    /// The latest error's text, for the summary.
    last: String,
}

impl Streak {
    fn summary(&self) -> String {
        format!(
            "{} failing since {}: {} times: {}",
            self.step.plural(),
            self.since.to_rfc3339_opts(SecondsFormat::Secs, true),
            self.count,
            self.last,
        )
    }
}

/// What a drain's loop tells about its failed cycles (see the module comment).
#[derive(Debug, Default)]
pub(super) struct FailedCycles {
    current: Option<Streak>,
}

/// What one failure changed.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Told {
    /// A new streak started (ending `ended`, of another kind, if there was one): warned.
    Started {
        /// The streak of another kind this failure ended.
        ended: Option<Streak>,
    },
    /// One more failure of the current streak: counted only.
    Repeated,
}

impl FailedCycles {
    /// Counts one failed cycle, and warns if it starts a new streak.
    pub(super) fn failed(
        &mut self,
        owner: &str,
        step: Step,
        error: &OutboxError,
        now: DateTime<Utc>,
    ) -> Told {
        let kind = error.kind();
        metrics::counter!(
            crate::metric_names::FAILED_CYCLES,
            "step" => step.as_str(),
            "kind" => kind,
        )
        .increment(1);
        if let Some(streak) = self
            .current
            .as_mut()
            .filter(|s| s.step == step && s.kind == kind)
        {
            streak.count += 1;
            streak.last = error.to_string();
            return Told::Repeated;
        }
        let ended = self.current.take();
        if let Some(ended) = &ended {
            tracing::warn!(
                owner,
                step = ended.step.as_str(),
                kind = ended.kind,
                failures = ended.count,
                "{}; now failing otherwise",
                ended.summary(),
            );
        }
        tracing::warn!(
            owner,
            step = step.as_str(),
            kind,
            error = %error,
            "{} failing: {error}; backing off (repeats are counted, not logged, until it changes or recovers)",
            step.plural(),
        );
        self.current = Some(Streak {
            step,
            kind,
            since: now,
            count: 1,
            last: error.to_string(),
        });
        Told::Started { ended }
    }

    /// A cycle went through: ends the streak, if any, with a summary.
    pub(super) fn succeeded(&mut self, owner: &str) -> Option<Streak> {
        let ended = self.current.take()?;
        tracing::warn!(
            owner,
            step = ended.step.as_str(),
            kind = ended.kind,
            failures = ended.count,
            "recovered after {} failed cycles ({})",
            ended.count,
            ended.summary(),
        );
        Some(ended)
    }

    /// The drain stops: a streak still running is summed up.
    pub(super) fn stopped(&mut self, owner: &str) -> Option<Streak> {
        let ended = self.current.take()?;
        tracing::warn!(
            owner,
            step = ended.step.as_str(),
            kind = ended.kind,
            failures = ended.count,
            "{}; still failing when the drain stopped",
            ended.summary(),
        );
        Some(ended)
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};

    use super::*;

    fn at(second: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, second).unwrap()
    }

    fn database(message: &str) -> OutboxError {
        OutboxError::Database {
            message: message.into(),
            source: None,
        }
    }

    #[test]
    fn a_streak_of_one_kind_is_told_when_it_starts_and_summed_up_when_it_recovers() {
        let mut failures = FailedCycles::default();
        let first = failures.failed("w", Step::Claim, &database("disk full (1)"), at(0));
        assert_eq!(first, Told::Started { ended: None });
        // Other message text, same kind: the same streak.
        for i in 2..=7 {
            let e = database(&format!("disk full ({i})"));
            assert_eq!(failures.failed("w", Step::Claim, &e, at(i)), Told::Repeated);
        }
        let ended = failures.succeeded("w").expect("a streak to end");
        assert_eq!(ended.count, 7);
        assert_eq!(
            ended.summary(),
            "claims failing since 2026-01-02T03:04:00Z: 7 times: database error: disk full (7)"
        );
        assert_eq!(failures.succeeded("w"), None, "recovered once, told once");
    }

    #[test]
    fn another_kind_or_another_step_starts_a_new_streak_and_ends_the_old_one() {
        let mut failures = FailedCycles::default();
        failures.failed("w", Step::Claim, &database("full"), at(0));
        failures.failed("w", Step::Claim, &database("full"), at(1));
        let conflict = OutboxError::Conflict {
            message: "busy".into(),
            source: None,
        };
        let Told::Started { ended: Some(ended) } =
            failures.failed("w", Step::Claim, &conflict, at(2))
        else {
            panic!("a new kind starts a new streak");
        };
        assert_eq!((ended.kind, ended.count), ("database", 2));
        let Told::Started { ended: Some(ended) } =
            failures.failed("w", Step::Complete, &conflict, at(3))
        else {
            panic!("a new step starts a new streak");
        };
        assert_eq!(
            (ended.step, ended.kind, ended.count),
            (Step::Claim, "conflict", 1)
        );
        assert_eq!(failures.stopped("w").map(|s| s.count), Some(1));
    }

    #[test]
    fn every_failed_cycle_is_counted_by_step_and_kind() {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        metrics::with_local_recorder(&recorder, || {
            let mut failures = FailedCycles::default();
            for i in 0..3 {
                failures.failed("w", Step::Claim, &database("full"), at(i));
            }
            failures.failed("w", Step::Complete, &database("full"), at(4));
        });
        let mut seen: Vec<(String, u64)> = snapshotter
            .snapshot()
            .into_vec()
            .into_iter()
            .filter(|(key, ..)| key.key().name() == crate::metric_names::FAILED_CYCLES)
            .map(|(key, _, _, value)| {
                let labels: Vec<String> = key
                    .key()
                    .labels()
                    .map(|l| format!("{}={}", l.key(), l.value()))
                    .collect();
                let DebugValue::Counter(n) = value else {
                    panic!("not a counter")
                };
                (labels.join(","), n)
            })
            .collect();
        seen.sort();
        assert_eq!(
            seen,
            vec![
                ("step=claim,kind=database".to_owned(), 3),
                ("step=complete,kind=database".to_owned(), 1),
            ]
        );
    }
}
