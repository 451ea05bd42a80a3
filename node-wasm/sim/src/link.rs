//! Per directed pair link parameters, drawn from a seeded RNG.

use std::time::Duration;

use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

/// One directed link.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkParams {
    pub latency: Duration,
    /// Bytes per second; `None` is no limit.
    pub bandwidth: Option<f64>,
}

impl LinkParams {
    /// Time to put `bytes` on the wire.
    pub fn serialisation(&self, bytes: usize) -> Duration {
        self.bandwidth.map_or(Duration::ZERO, |bw| Duration::from_secs_f64(bytes as f64 / bw))
    }
}

/// A share of the pairs that get extra latency and a bandwidth factor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlowPairs {
    pub fraction: f64,
    pub extra_latency: Duration,
    pub bandwidth_factor: f64,
}

/// How the links of a network are drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LinkModel {
    /// Every link the same.
    Fixed { latency: Duration, bandwidth: Option<f64> },
    /// Latency `N(latency, jitter)` and bandwidth `N(bandwidth, bandwidth_sd)` per pair, with an
    /// optional share of slow pairs.
    Normal {
        latency: Duration,
        jitter: Duration,
        bandwidth: Option<f64>,
        bandwidth_sd: f64,
        slow: Option<SlowPairs>,
    },
}

/// Slowest link the normal model draws: keeps a bad draw from stalling a run.
const MIN_BANDWIDTH: f64 = 10_000.0;

/// The `n x n` directed link table.
#[derive(Debug, Clone)]
pub struct Links {
    n: usize,
    params: Vec<LinkParams>,
}

impl Links {
    pub fn draw(n: usize, model: LinkModel, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let params = (0..n * n).map(|_| draw_one(model, &mut rng)).collect();
        Self { n, params }
    }

    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    pub fn get(&self, from: usize, to: usize) -> LinkParams {
        self.params[from * self.n + to]
    }

    /// Replaces the drawn parameters of the directed link `from -> to`, for a scenario that
    /// needs one link unlike the others.
    pub fn set(&mut self, from: usize, to: usize, params: LinkParams) {
        self.params[from * self.n + to] = params;
    }
}

fn draw_one(model: LinkModel, rng: &mut ChaCha8Rng) -> LinkParams {
    match model {
        LinkModel::Fixed { latency, bandwidth } => LinkParams { latency, bandwidth },
        LinkModel::Normal { latency, jitter, bandwidth, bandwidth_sd, slow } => {
            let lat = normal(rng, latency.as_secs_f64(), jitter.as_secs_f64()).max(0.0);
            let mut bw = bandwidth.map(|b| normal(rng, b, bandwidth_sd).max(MIN_BANDWIDTH));
            let mut extra = 0.0;
            if let Some(slow) = slow {
                if rng.random::<f64>() < slow.fraction {
                    extra = slow.extra_latency.as_secs_f64();
                    bw = bw.map(|b| (b * slow.bandwidth_factor).max(MIN_BANDWIDTH));
                }
            }
            LinkParams { latency: Duration::from_secs_f64(lat + extra), bandwidth: bw }
        }
    }
}

fn normal(rng: &mut ChaCha8Rng, mean: f64, sd: f64) -> f64 {
    match Normal::new(mean, sd) {
        Ok(d) if sd > 0.0 => d.sample(rng),
        _ => mean,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> LinkModel {
        LinkModel::Normal {
            latency: Duration::from_millis(60),
            jitter: Duration::from_millis(20),
            bandwidth: Some(1.25e6),
            bandwidth_sd: 0.3e6,
            slow: Some(SlowPairs {
                fraction: 0.3,
                extra_latency: Duration::from_millis(140),
                bandwidth_factor: 0.5,
            }),
        }
    }

    #[test]
    fn same_seed_same_links() {
        let a = Links::draw(20, model(), 7);
        let b = Links::draw(20, model(), 7);
        let c = Links::draw(20, model(), 8);
        assert_eq!(a.params, b.params);
        assert_ne!(a.params, c.params);
    }

    #[test]
    fn slow_share_is_about_right() {
        let links = Links::draw(60, model(), 1);
        let slow = links.params.iter().filter(|p| p.latency > Duration::from_millis(160)).count();
        let share = slow as f64 / links.params.len() as f64;
        assert!((0.25..0.35).contains(&share), "{share}");
    }

    #[test]
    fn serialisation_follows_bandwidth() {
        let p = LinkParams { latency: Duration::ZERO, bandwidth: Some(1000.0) };
        assert_eq!(p.serialisation(500), Duration::from_millis(500));
        let unlimited = LinkParams { latency: Duration::ZERO, bandwidth: None };
        assert_eq!(unlimited.serialisation(1 << 30), Duration::ZERO);
    }
}
