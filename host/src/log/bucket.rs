//! A token bucket: a rate bound that still lets short bursts through.
//!
//! Used for everything a guest can make the shim emit without end (stderr
//! bytes, reverse notifications), so a flood costs at most the rate however
//! long it lasts, while a guest that is quiet most of the time can still
//! write a burst at once.

use std::time::Instant;

#[derive(Debug, Clone)]
pub struct TokenBucket {
    capacity: f64,
    per_second: f64,
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    /// A full bucket of `capacity` tokens that refills `per_second`.
    pub fn new(capacity: u64, per_second: u64, now: Instant) -> TokenBucket {
        TokenBucket {
            capacity: capacity as f64,
            per_second: per_second as f64,
            tokens: capacity as f64,
            last: now,
        }
    }

    /// Takes `amount` tokens if the bucket holds them; takes nothing
    /// otherwise (a refused request never eats into later ones).
    pub fn take(&mut self, amount: u64, now: Instant) -> bool {
        self.refill(now);
        let amount = amount as f64;
        if self.tokens >= amount {
            self.tokens -= amount;
            true
        } else {
            false
        }
    }

    /// Whether the bucket holds `amount` tokens now, taking none: for a
    /// caller that must pass several buckets before it takes from any.
    pub fn holds(&mut self, amount: u64, now: Instant) -> bool {
        self.refill(now);
        self.tokens >= amount as f64
    }

    fn refill(&mut self, now: Instant) {
        // A clock that went backwards (it cannot with `Instant`, but a caller
        // may pass an older `now`) adds nothing.
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.per_second).min(self.capacity);
        if now > self.last {
            self.last = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_burst_passes_then_the_rate_holds() {
        let start = Instant::now();
        let mut bucket = TokenBucket::new(10, 5, start);
        assert!(bucket.take(10, start), "the burst fits a full bucket");
        assert!(!bucket.take(1, start), "an empty bucket refuses");
        let later = start + Duration::from_millis(400);
        assert!(bucket.take(2, later), "400 ms at 5/s refill 2 tokens");
        assert!(!bucket.take(1, later));
    }

    #[test]
    fn refusals_take_nothing_and_refill_stops_at_capacity() {
        let start = Instant::now();
        let mut bucket = TokenBucket::new(10, 5, start);
        assert!(!bucket.take(11, start), "more than the capacity never fits");
        assert!(bucket.take(10, start), "the refusal took nothing");
        let much_later = start + Duration::from_secs(3600);
        assert!(!bucket.take(11, much_later), "refill stops at the capacity");
        assert!(bucket.take(10, much_later));
    }

    #[test]
    fn holds_takes_nothing() {
        let start = Instant::now();
        let mut bucket = TokenBucket::new(10, 5, start);
        assert!(bucket.holds(10, start));
        assert!(bucket.holds(10, start), "asking twice took nothing");
        assert!(!bucket.holds(11, start));
        assert!(bucket.take(10, start));
        assert!(!bucket.holds(1, start));
    }

    #[test]
    fn an_older_now_adds_nothing() {
        let start = Instant::now() + Duration::from_secs(1);
        let mut bucket = TokenBucket::new(4, 1000, start);
        assert!(bucket.take(4, start));
        assert!(!bucket.take(1, start - Duration::from_millis(500)));
    }
}
