//! Cuts off peers that keep misbehaving: each refused reservation or circuit and each forbidden
//! publish is an offence; too many within a minute gets the peer banned for a while.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use libp2p::PeerId;

const WINDOW: Duration = Duration::from_secs(60);

pub struct Offences {
    threshold: u32,
    ban: Duration,
    recent: HashMap<PeerId, (Instant, u32)>,
    banned: HashMap<PeerId, Instant>,
}

impl Offences {
    pub fn new(threshold: u32, ban: Duration) -> Self {
        Self { threshold, ban, recent: HashMap::new(), banned: HashMap::new() }
    }

    /// Records an offence; `true` when the peer has now earned a ban.
    pub fn record(&mut self, peer: PeerId, now: Instant) -> bool {
        if self.banned.contains_key(&peer) {
            return false;
        }
        let (since, count) = self.recent.entry(peer).or_insert((now, 0));
        if now.duration_since(*since) > WINDOW {
            (*since, *count) = (now, 0);
        }
        *count += 1;
        if *count < self.threshold {
            return false;
        }
        self.recent.remove(&peer);
        self.banned.insert(peer, now + self.ban);
        true
    }

    /// Peers whose ban has run out by `now`; they are forgotten.
    pub fn expired(&mut self, now: Instant) -> Vec<PeerId> {
        let done: Vec<_> =
            self.banned.iter().filter(|(_, until)| **until <= now).map(|(p, _)| *p).collect();
        for peer in &done {
            self.banned.remove(peer);
        }
        self.recent.retain(|_, (since, _)| now.duration_since(*since) <= WINDOW);
        done
    }

    pub fn banned(&self) -> usize {
        self.banned.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_threshold_within_a_window_bans_and_the_ban_runs_out() {
        let mut offences = Offences::new(3, Duration::from_secs(10));
        let (peer, t0) = (PeerId::random(), Instant::now());
        assert!(!offences.record(peer, t0));
        assert!(!offences.record(peer, t0));
        assert!(offences.record(peer, t0));
        assert_eq!(offences.banned(), 1);
        assert!(offences.expired(t0 + Duration::from_secs(9)).is_empty());
        assert_eq!(offences.expired(t0 + Duration::from_secs(10)), vec![peer]);
    }

    #[test]
    fn offences_spread_over_windows_do_not_add_up() {
        let mut offences = Offences::new(2, Duration::from_secs(10));
        let (peer, t0) = (PeerId::random(), Instant::now());
        assert!(!offences.record(peer, t0));
        assert!(!offences.record(peer, t0 + WINDOW + Duration::from_secs(1)));
    }
}
