//! A fixed-interval bucketed counter: every event is counted in the bucket of the interval it
//! happened in, so a sample's rate is exact for that interval (unlike a sliding-window estimate
//! such as bee's 15-minute pull-sync rate). Memory is bounded by keeping the last `capacity`
//! buckets; recording is O(1) amortised.

use std::collections::VecDeque;
use std::time::Duration;
use web_time::Instant;

#[derive(Clone, Debug)]
pub struct Timeseries {
    origin: Instant,
    interval: Duration,
    capacity: usize,
    /// Index (intervals since `origin`) of `buckets[0]`.
    first: u64,
    buckets: VecDeque<u64>,
    total: u64,
}

/// One interval's count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Start of the interval, from the series' origin.
    pub start: Duration,
    pub count: u64,
    /// `count` per second over the interval.
    pub rate: f64,
}

impl Timeseries {
    pub fn new(origin: Instant, interval: Duration, capacity: usize) -> Self {
        Timeseries {
            origin,
            interval: interval.max(Duration::from_nanos(1)),
            capacity: capacity.max(1),
            first: 0,
            buckets: VecDeque::new(),
            total: 0,
        }
    }

    /// One-second buckets for the last `capacity` seconds.
    pub fn per_second(origin: Instant, capacity: usize) -> Self {
        Self::new(origin, Duration::from_secs(1), capacity)
    }

    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Counts `count` events at `now`. Events older than the kept window count in the total only.
    pub fn record(&mut self, now: Instant, count: u64) {
        self.total += count;
        let index = self.index(now);
        if index < self.first {
            return;
        }
        self.extend_to(index);
        if let Some(bucket) = self.buckets.get_mut((index - self.first) as usize) {
            *bucket += count;
        }
    }

    /// Adds empty buckets up to `now`, so quiet intervals show as zero.
    pub fn advance(&mut self, now: Instant) {
        let index = self.index(now);
        if index >= self.first {
            self.extend_to(index);
        }
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    /// The kept intervals, oldest first.
    pub fn samples(&self) -> impl Iterator<Item = Sample> + '_ {
        let secs = self.interval.as_secs_f64();
        self.buckets.iter().enumerate().map(move |(i, &count)| Sample {
            start: self.interval * u32::try_from(self.first + i as u64).unwrap_or(u32::MAX),
            count,
            rate: count as f64 / secs,
        })
    }

    /// The latest complete interval before `now`.
    pub fn last_complete(&self, now: Instant) -> Option<Sample> {
        let current = self.index(now);
        self.samples().take_while(|s| s.start < self.interval * current as u32).last()
    }

    fn index(&self, now: Instant) -> u64 {
        let elapsed = now.saturating_duration_since(self.origin);
        (elapsed.as_nanos() / self.interval.as_nanos()) as u64
    }

    fn extend_to(&mut self, index: u64) {
        let end = self.first + self.buckets.len() as u64;
        if index < end {
            return;
        }
        // A jump past the whole window starts it afresh rather than pushing every empty bucket.
        if index - end >= self.capacity as u64 {
            self.buckets.clear();
            self.first = index + 1 - self.capacity as u64;
        }
        while self.first + (self.buckets.len() as u64) <= index {
            self.buckets.push_back(0);
        }
        while self.buckets.len() > self.capacity {
            self.buckets.pop_front();
            self.first += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn known_schedule_gives_known_per_second_rates() {
        let t0 = Instant::now();
        let mut series = Timeseries::per_second(t0, 60);
        // 100 at once in second 0; 250 spread evenly over second 1; nothing in second 2; 50 in 3.
        series.record(t0 + ms(300), 100);
        for i in 0..250 {
            series.record(t0 + ms(1000 + i * 4), 1);
        }
        series.record(t0 + ms(3999), 50);
        let counts: Vec<u64> = series.samples().map(|s| s.count).collect();
        assert_eq!(counts, vec![100, 250, 0, 50]);
        let rates: Vec<f64> = series.samples().map(|s| s.rate).collect();
        assert_eq!(rates, vec![100.0, 250.0, 0.0, 50.0]);
        assert_eq!(series.total(), 400);
        assert_eq!(series.last_complete(t0 + ms(3500)).map(|s| s.count), Some(0));
    }

    #[test]
    fn sub_second_intervals_scale_the_rate() {
        let t0 = Instant::now();
        let mut series = Timeseries::new(t0, ms(100), 10);
        series.record(t0 + ms(50), 5);
        assert_eq!(series.samples().next().map(|s| s.rate), Some(50.0));
    }

    #[test]
    fn memory_is_bounded_to_the_last_buckets() {
        let t0 = Instant::now();
        let mut series = Timeseries::per_second(t0, 3);
        for s in 0..10 {
            series.record(t0 + Duration::from_secs(s), s);
        }
        let kept: Vec<(Duration, u64)> = series.samples().map(|s| (s.start, s.count)).collect();
        assert_eq!(
            kept,
            vec![
                (Duration::from_secs(7), 7),
                (Duration::from_secs(8), 8),
                (Duration::from_secs(9), 9)
            ]
        );
        // Too old for the window: only the total sees it.
        series.record(t0, 1000);
        assert_eq!(series.samples().map(|s| s.count).sum::<u64>(), 24);
        assert_eq!(series.total(), 1045);
        // A long jump does not walk every empty second.
        series.record(t0 + Duration::from_secs(1_000_000_000), 1);
        assert_eq!(series.samples().map(|s| s.count).collect::<Vec<_>>(), vec![0, 0, 1]);
    }

    #[test]
    fn advance_shows_quiet_seconds_as_zero() {
        let t0 = Instant::now();
        let mut series = Timeseries::per_second(t0, 10);
        series.record(t0, 3);
        series.advance(t0 + Duration::from_secs(2));
        assert_eq!(series.samples().map(|s| s.count).collect::<Vec<_>>(), vec![3, 0, 0]);
    }
}
