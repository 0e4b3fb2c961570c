//! The one stderr budget of everything the guest can make the shim write.
//!
//! Guest stdout and stderr, `log` import records, trap reports and any
//! record carrying guest text draw on one budget for the whole process (not
//! per instance: a guest that traps in a loop gets fresh instances, not
//! fresh budget). Two bounds, both fixed:
//!
//! - a rate: a token bucket of [`RATE_BYTES_PER_SECOND`] with a
//!   [`BURST_BYTES`] burst, so a flood costs at most 64 KiB/s;
//! - a lifetime total of [`LIFETIME_BYTES`], so a process that floods for
//!   hours still writes at most 4 MiB of guest-driven text.
//!
//! What does not fit is dropped and counted; the counts reach stderr as
//! summary records (the shim's own, outside the budget): when dropping
//! starts, then at most every [`SUMMARY_INTERVAL`] while it goes on, and
//! once at exit.

use super::bucket::TokenBucket;
use std::time::{Duration, Instant};

/// Sustained rate of guest-driven stderr.
pub const RATE_BYTES_PER_SECOND: u64 = 64 * 1024;
/// Guest-driven stderr a quiet guest may write at once.
pub const BURST_BYTES: u64 = 256 * 1024;
/// Guest-driven stderr over the life of the process.
pub const LIFETIME_BYTES: u64 = 4 * 1024 * 1024;
/// Shortest time between two summaries of dropped records.
pub const SUMMARY_INTERVAL: Duration = Duration::from_secs(10);

/// Which bound a record was dropped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// The per-instance guest output cap (`Limits::output_bytes`).
    Instance,
    Rate,
    Lifetime,
}

impl Limit {
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::Instance => "instance_output",
            Limit::Rate => "rate",
            Limit::Lifetime => "lifetime",
        }
    }
}

/// Dropped records and their bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Drops {
    pub records: u64,
    pub bytes: u64,
}

impl Drops {
    fn add(&mut self, bytes: u64) {
        self.records += 1;
        self.bytes += bytes;
    }
}

/// What a summary record reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// `started`, `continuing` or `exit`.
    pub phase: &'static str,
    /// Since the previous summary.
    pub dropped: Drops,
    /// Over the life of the process.
    pub total: Drops,
    /// The bound the latest drop hit.
    pub limit: Limit,
}

/// What to do with one guest-driven record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub write: bool,
    /// A summary to write first.
    pub summary: Option<Summary>,
}

#[derive(Debug)]
pub struct GuestBudget {
    bucket: TokenBucket,
    written: u64,
    pending: Drops,
    total: Drops,
    last_limit: Limit,
    last_summary: Option<Instant>,
    exit_written: bool,
}

impl GuestBudget {
    pub fn new(now: Instant) -> GuestBudget {
        GuestBudget {
            bucket: TokenBucket::new(BURST_BYTES, RATE_BYTES_PER_SECOND, now),
            written: 0,
            pending: Drops::default(),
            total: Drops::default(),
            last_limit: Limit::Rate,
            last_summary: None,
            exit_written: false,
        }
    }

    /// Charges a line of `bytes` (newline included) or drops it.
    pub fn admit(&mut self, bytes: u64, now: Instant) -> Decision {
        let limit = if self.written.saturating_add(bytes) > LIFETIME_BYTES {
            Some(Limit::Lifetime)
        } else if !self.bucket.take(bytes, now) {
            Some(Limit::Rate)
        } else {
            None
        };
        match limit {
            Some(limit) => Decision {
                write: false,
                summary: self.dropped(bytes, limit, now),
            },
            None => {
                self.written += bytes;
                Decision {
                    write: true,
                    summary: self.due(now),
                }
            }
        }
    }

    /// Counts `bytes` dropped before they reached the budget (the
    /// per-instance output cap); returns a summary when one is due.
    pub fn dropped(&mut self, bytes: u64, limit: Limit, now: Instant) -> Option<Summary> {
        self.pending.add(bytes);
        self.total.add(bytes);
        self.last_limit = limit;
        self.due(now)
    }

    /// The summary at exit, once, when anything was ever dropped.
    pub fn at_exit(&mut self) -> Option<Summary> {
        if self.exit_written || self.total.records == 0 {
            return None;
        }
        self.exit_written = true;
        Some(self.take_summary("exit"))
    }

    fn due(&mut self, now: Instant) -> Option<Summary> {
        if self.pending.records == 0 {
            return None;
        }
        let phase = match self.last_summary {
            None => "started",
            Some(last) if now.saturating_duration_since(last) >= SUMMARY_INTERVAL => "continuing",
            Some(_) => return None,
        };
        self.last_summary = Some(now);
        Some(self.take_summary(phase))
    }

    fn take_summary(&mut self, phase: &'static str) -> Summary {
        Summary {
            phase,
            dropped: std::mem::take(&mut self.pending),
            total: self.total,
            limit: self.last_limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: u64 = 16 * 1024;

    #[test]
    fn the_burst_passes_then_drops_are_summarised_once_per_interval() {
        let start = Instant::now();
        let mut budget = GuestBudget::new(start);
        for _ in 0..BURST_BYTES / LINE {
            assert_eq!(
                budget.admit(LINE, start),
                Decision {
                    write: true,
                    summary: None
                }
            );
        }
        let first = budget.admit(LINE, start);
        assert!(!first.write);
        let summary = first.summary.expect("dropping starts: a summary");
        assert_eq!(summary.phase, "started");
        assert_eq!(
            summary.dropped,
            Drops {
                records: 1,
                bytes: LINE
            }
        );
        assert_eq!(summary.limit, Limit::Rate);
        for _ in 0..100 {
            let decision = budget.admit(LINE, start);
            assert!(!decision.write && decision.summary.is_none());
        }
        let later = start + SUMMARY_INTERVAL;
        // 10 s refilled 640 KiB, capped at the burst.
        let decision = budget.admit(LINE, later);
        assert!(decision.write);
        let summary = decision.summary.expect("a periodic summary");
        assert_eq!(summary.phase, "continuing");
        assert_eq!(summary.dropped.records, 100);
        assert_eq!(summary.total.records, 101);
        let exit = budget.at_exit().expect("the exit summary");
        assert_eq!(
            (exit.phase, exit.dropped.records, exit.total.records),
            ("exit", 0, 101)
        );
        assert!(budget.at_exit().is_none(), "written once");
    }

    #[test]
    fn the_lifetime_total_holds_however_slow_the_guest() {
        let mut now = Instant::now();
        let mut budget = GuestBudget::new(now);
        let mut written = 0;
        for _ in 0..1_000 {
            now += Duration::from_secs(1);
            if budget.admit(LINE, now).write {
                written += LINE;
            }
        }
        assert_eq!(written, LIFETIME_BYTES, "exactly the lifetime total");
        let exit = budget.at_exit().expect("drops were counted");
        assert_eq!(exit.limit, Limit::Lifetime);
        assert_eq!(exit.total.records, 1_000 - LIFETIME_BYTES / LINE);
    }

    #[test]
    fn nothing_dropped_means_no_summary() {
        let now = Instant::now();
        let mut budget = GuestBudget::new(now);
        assert!(budget.admit(100, now).write);
        assert!(budget.at_exit().is_none());
    }

    #[test]
    fn instance_cap_drops_are_counted_with_the_rest() {
        let now = Instant::now();
        let mut budget = GuestBudget::new(now);
        let summary = budget.dropped(500, Limit::Instance, now).expect("started");
        assert_eq!(summary.limit, Limit::Instance);
        assert!(budget.dropped(500, Limit::Instance, now).is_none());
        assert_eq!(
            budget.at_exit().unwrap().total,
            Drops {
                records: 2,
                bytes: 1000
            }
        );
    }
}
