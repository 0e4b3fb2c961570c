//! The budget of reverse notifications (`notification`, `$/progress`,
//! `context/contribution`, `status/contribution`, `presentation/update`):
//! they need no answer, so nothing on octet's side slows a guest that sends
//! them in a loop, and each may be as large as a frame.
//!
//! Four bounds, all kinds together, all fixed: per request a count and a
//! byte total, per process a count and a byte rate (token buckets). Bytes
//! are those of the frame, line feed included. What exceeds a bound is not
//! written, and counted; the guest is told it was sent, as octet's own SDK
//! never fails a notify: a tool that reports per item under a burst must
//! still get its result, and a notification is best effort on octet's side
//! too (its progress channel drops under load). The drops reach stderr as
//! the shim's own warning, at most one per [`DROP_REPORT_INTERVAL`], each
//! with the count since the previous one; a drop inside the interval arms a
//! timer for the rest of it, so the last ones of a burst are reported too.

use crate::log::bucket::TokenBucket;
use crate::protocol::requests::request_state::RequestState;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// Reverse notifications one request may send.
pub const MAX_NOTICES_PER_REQUEST: u32 = 1_000;
/// Bytes of reverse notifications one request may send: four of the largest
/// frames, or 1,000 of 4 KiB.
pub const MAX_NOTICE_BYTES_PER_REQUEST: u64 = 4 << 20;
/// Reverse notifications per second for the whole process (also the burst).
pub const NOTICES_PER_SECOND: u64 = 200;
/// Sustained bytes per second of reverse notifications for the process.
pub const NOTICE_BYTES_PER_SECOND: u64 = 256 << 10;
/// Bytes a quiet process may send at once: one frame of the largest size
/// (1 MiB with its line feed) fits, so no frame is too large for the rate.
pub const NOTICE_BURST_BYTES: u64 = 1 << 20;
/// Shortest time between two warnings about dropped notifications.
pub const DROP_REPORT_INTERVAL: Duration = Duration::from_secs(1);
/// Requests tracked before finished ones are forgotten (twice the
/// admission bound: at most 64 are ever active).
const TRACKED_REQUESTS: usize = 128;

/// The bound a notification was dropped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    RequestCount,
    RequestBytes,
    RateCount,
    RateBytes,
}

impl Bound {
    pub fn as_str(self) -> &'static str {
        match self {
            Bound::RequestCount => "request_count",
            Bound::RequestBytes => "request_bytes",
            Bound::RateCount => "rate_count",
            Bound::RateBytes => "rate_bytes",
        }
    }
}

/// Dropped notifications and their bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Drops {
    pub notices: u64,
    pub bytes: u64,
}

impl Drops {
    fn add(&mut self, bytes: u64) {
        self.notices += 1;
        self.bytes += bytes;
    }
}

/// What one warning about drops says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Report {
    /// Since the previous warning.
    pub dropped: Drops,
    /// Over the life of the process.
    pub total: Drops,
    /// The bound and the method of the latest drop.
    pub bound: Bound,
    pub method: &'static str,
}

/// The outcome of one [`NoticeBudget::admit_at`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Decision {
    send: bool,
    /// A warning to write now.
    report: Option<Report>,
    /// When to report the drops held back by the interval.
    flush_at: Option<Instant>,
}

/// Whether an admission takes from the budget or only looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Charge {
    Take,
    Screen,
}

/// Bounds the reverse notifications a guest sends (see the module).
pub struct NoticeBudget {
    state: Arc<Mutex<NoticeState>>,
}

struct NoticeState {
    count_rate: TokenBucket,
    byte_rate: TokenBucket,
    /// Sent per request, keyed by its address; the weak reference keeps
    /// the address from being reused while the entry exists (request ids
    /// may be reused by the host once a request has settled).
    per_request: HashMap<usize, (Weak<RequestState>, Sent)>,
    pending: Drops,
    total: Drops,
    latest: Option<(Bound, &'static str)>,
    last_report: Option<Instant>,
    flush_armed: bool,
}

#[derive(Debug, Clone, Copy, Default)]
struct Sent {
    notices: u32,
    bytes: u64,
}

impl NoticeBudget {
    pub fn new(now: Instant) -> NoticeBudget {
        NoticeBudget {
            state: Arc::new(Mutex::new(NoticeState {
                count_rate: TokenBucket::new(NOTICES_PER_SECOND, NOTICES_PER_SECOND, now),
                byte_rate: TokenBucket::new(NOTICE_BURST_BYTES, NOTICE_BYTES_PER_SECOND, now),
                per_request: HashMap::new(),
                pending: Drops::default(),
                total: Drops::default(),
                latest: None,
                last_report: None,
                flush_armed: false,
            })),
        }
    }

    /// Charges one notification of `bytes` (its frame with the line feed)
    /// for `method`, sent on behalf of `request` when there is one: `true`
    /// to write it, `false` when it was dropped and counted.
    pub fn admit(
        &self,
        method: &'static str,
        request: Option<&Arc<RequestState>>,
        bytes: u64,
    ) -> bool {
        self.act(self.admit_at(method, request, bytes, Instant::now(), Charge::Take))
    }

    /// Knowing only a floor of a notification's bytes: `false` when even
    /// the floor exceeds a bound, and the notification is then dropped and
    /// counted (at the floor's bytes); `true`, taking nothing, when it may
    /// fit. Spares encoding a frame only to drop it: in a flood of
    /// megabyte notifications each drop costs a sum of lengths, not a
    /// serialisation.
    pub fn screen(
        &self,
        method: &'static str,
        request: Option<&Arc<RequestState>>,
        floor: u64,
    ) -> bool {
        self.act(self.admit_at(method, request, floor, Instant::now(), Charge::Screen))
    }

    fn act(&self, decision: Decision) -> bool {
        if let Some(report) = decision.report {
            warn(&report);
        }
        if let Some(at) = decision.flush_at {
            self.flush_later(at);
        }
        decision.send
    }

    fn admit_at(
        &self,
        method: &'static str,
        request: Option<&Arc<RequestState>>,
        bytes: u64,
        now: Instant,
        charge: Charge,
    ) -> Decision {
        let mut state = lock(&self.state);
        let sent = request.map(|r| state.sent_by(r)).unwrap_or_default();
        let bound = if request.is_some() && sent.notices >= MAX_NOTICES_PER_REQUEST {
            Some(Bound::RequestCount)
        } else if request.is_some()
            && sent.bytes.saturating_add(bytes) > MAX_NOTICE_BYTES_PER_REQUEST
        {
            Some(Bound::RequestBytes)
        } else if !state.count_rate.holds(1, now) {
            Some(Bound::RateCount)
        } else if !state.byte_rate.holds(bytes, now) {
            Some(Bound::RateBytes)
        } else {
            None
        };
        let Some(bound) = bound else {
            if charge == Charge::Screen {
                return Decision {
                    send: true,
                    report: None,
                    flush_at: None,
                };
            }
            state.count_rate.take(1, now);
            state.byte_rate.take(bytes, now);
            if let Some(request) = request {
                state.count(request, bytes);
            }
            return Decision {
                send: true,
                report: None,
                flush_at: None,
            };
        };
        state.pending.add(bytes);
        state.total.add(bytes);
        state.latest = Some((bound, method));
        let due = state
            .last_report
            .is_none_or(|last| now >= last + DROP_REPORT_INTERVAL);
        if due {
            return Decision {
                send: false,
                report: state.report(now),
                flush_at: None,
            };
        }
        let flush_at = (!state.flush_armed).then(|| {
            state.flush_armed = true;
            state.last_report.unwrap_or(now) + DROP_REPORT_INTERVAL
        });
        Decision {
            send: false,
            report: None,
            flush_at,
        }
    }

    /// The warning for the drops held back since the last one, if any.
    fn flush_at(&self, now: Instant) -> Option<Report> {
        let mut state = lock(&self.state);
        state.flush_armed = false;
        state.report(now)
    }

    /// Reports the held-back drops at `at`, on the runtime the guest's
    /// import runs on (there is always one: imports are async). Without a
    /// runtime they wait for the next drop's warning.
    fn flush_later(&self, at: Instant) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            lock(&self.state).flush_armed = false;
            return;
        };
        let budget = NoticeBudget {
            state: Arc::clone(&self.state),
        };
        runtime.spawn(async move {
            tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await;
            if let Some(report) = budget.flush_at(Instant::now()) {
                warn(&report);
            }
        });
    }
}

impl NoticeState {
    fn sent_by(&self, request: &Arc<RequestState>) -> Sent {
        self.per_request
            .get(&key(request))
            .map_or(Sent::default(), |(_, sent)| *sent)
    }

    fn count(&mut self, request: &Arc<RequestState>, bytes: u64) {
        let mut sent = self.sent_by(request);
        sent.notices += 1;
        sent.bytes += bytes;
        if self.per_request.len() >= TRACKED_REQUESTS {
            self.per_request
                .retain(|_, (owner, _)| owner.strong_count() > 0);
        }
        self.per_request
            .insert(key(request), (Arc::downgrade(request), sent));
    }

    fn report(&mut self, now: Instant) -> Option<Report> {
        let (bound, method) = self.latest?;
        if self.pending.notices == 0 {
            return None;
        }
        self.last_report = Some(now);
        Some(Report {
            dropped: std::mem::take(&mut self.pending),
            total: self.total,
            bound,
            method,
        })
    }
}

fn warn(report: &Report) {
    crate::log!(crate::log::Level::Warning,
        "reverse notifications over budget; dropped and counted (the guest was told they were sent)",
        "dropped" => report.dropped.notices,
        "dropped_bytes" => report.dropped.bytes,
        "total_dropped" => report.total.notices,
        "total_dropped_bytes" => report.total.bytes,
        "bound" => report.bound.as_str(),
        "method" => report.method,
        "max_per_request" => MAX_NOTICES_PER_REQUEST,
        "max_bytes_per_request" => MAX_NOTICE_BYTES_PER_REQUEST,
        "per_second" => NOTICES_PER_SECOND,
        "bytes_per_second" => NOTICE_BYTES_PER_SECOND,
        "burst_bytes" => NOTICE_BURST_BYTES,
    );
}

fn lock(state: &Mutex<NoticeState>) -> std::sync::MutexGuard<'_, NoticeState> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

fn key(request: &Arc<RequestState>) -> usize {
    Arc::as_ptr(request) as usize
}

#[cfg(test)]
#[path = "notices_tests.rs"]
mod tests;
