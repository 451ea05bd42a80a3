//! A per-peer token bucket in virtual time, kept as a theoretical arrival time (GCRA): exact with
//! integer durations and O(1) to update.

use super::config::RateLimit;
use std::time::Duration;
use web_time::Instant;

#[derive(Clone, Debug)]
pub(crate) struct RateLimiter {
    per_chunk: Duration,
    burst: Duration,
    /// When the bucket would be full again; `None` while it has never been used.
    full_at: Option<Instant>,
}

impl RateLimiter {
    pub(crate) fn new(limit: RateLimit) -> Self {
        let per_chunk = Duration::from_secs(1) / limit.chunks_per_second.max(1);
        RateLimiter { per_chunk, burst: per_chunk * limit.burst, full_at: None }
    }

    /// When the next request may be served: once the bucket is no longer in debt.
    pub(crate) fn ready_at(&self) -> Option<Instant> {
        self.full_at.and_then(|t| t.checked_sub(self.burst))
    }

    pub(crate) fn is_ready(&self, now: Instant) -> bool {
        self.ready_at().is_none_or(|t| t <= now)
    }

    /// Takes `chunks` tokens; the bucket may go into debt, delaying the next request.
    pub(crate) fn consume(&mut self, now: Instant, chunks: usize) {
        let base = self.full_at.map_or(now, |t| t.max(now));
        self.full_at = Some(base + self.per_chunk * u32::try_from(chunks).unwrap_or(u32::MAX));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_steady_rate() {
        let t0 = Instant::now();
        let mut limiter = RateLimiter::new(RateLimit::BEE);
        assert!(limiter.is_ready(t0));
        limiter.consume(t0, 250);
        // A full burst is allowed at once: the bucket is empty but not in debt.
        assert!(limiter.is_ready(t0));
        limiter.consume(t0, 250);
        assert!(!limiter.is_ready(t0));
        assert_eq!(limiter.ready_at(), Some(t0 + Duration::from_secs(1)));
        limiter.consume(t0 + Duration::from_secs(1), 125);
        assert_eq!(limiter.ready_at(), Some(t0 + Duration::from_millis(1500)));
    }

    #[test]
    fn idle_time_refills_up_to_the_burst_only() {
        let t0 = Instant::now();
        let mut limiter = RateLimiter::new(RateLimit { chunks_per_second: 100, burst: 10 });
        limiter.consume(t0, 10);
        let later = t0 + Duration::from_secs(60);
        limiter.consume(later, 20);
        assert_eq!(limiter.ready_at(), Some(later + Duration::from_millis(100)));
    }
}
