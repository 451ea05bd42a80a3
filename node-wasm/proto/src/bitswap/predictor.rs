//! Where are the blocks? A per-peer model of presence, learned from HAVE/DONT_HAVE answers.
//!
//! A session numbers its wants in the order they were made. For every peer the model counts how
//! often the peer had a block given what it had for the one to four wants before it (known
//! answers, or the model's own guess where no answer is in yet): Markov chains of order 1 to 4
//! over an alphabet of no/yes/unknown, interpolated from the lowest order up (each order's counts
//! are smoothed towards the order below). The bottom of the chain mixes the peer's hit rate with
//! its last answer, because content that is fetched together tends to sit together. That
//! captures runs of a DAG held by one peer, stripes and short periodic layouts, and degrades to
//! the hit rate when there is no pattern. Memory is bounded: only the last [`WINDOW`] wants are
//! remembered.

use std::collections::{BTreeMap, VecDeque};

const ORDER: usize = 4;
/// Contexts of orders 1 to 4: 3 + 9 + 27 + 81.
const CONTEXTS: usize = 120;
/// Weight of the lower-order estimate, in observations.
const SMOOTHING: f64 = 2.0;
/// Weight of "like the last answer" at the bottom of the chain.
const PERSISTENCE: f64 = 0.25;
/// Wants remembered per session.
pub const WINDOW: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bit {
    Known(bool),
    Guess(bool),
}

impl Bit {
    fn value(self) -> bool {
        match self {
            Bit::Known(v) | Bit::Guess(v) => v,
        }
    }
}

#[derive(Debug, Clone)]
struct PeerModel {
    counts: [[u32; 2]; CONTEXTS],
    hits: u32,
    total: u32,
}

impl Default for PeerModel {
    fn default() -> Self {
        Self { counts: [[0; 2]; CONTEXTS], hits: 0, total: 0 }
    }
}

impl PeerModel {
    /// The peer's hit rate, shrunk towards `prior` while it has few answers.
    fn base_rate(&self, prior: f64) -> f64 {
        (f64::from(self.hits) + SMOOTHING * prior) / (f64::from(self.total) + SMOOTHING)
    }

    fn predict(&self, history: &[u8; ORDER], prior: f64) -> f64 {
        let base = self.base_rate(prior);
        let mut p = match history[0] {
            2 => (1.0 - PERSISTENCE) * base + PERSISTENCE,
            1 => (1.0 - PERSISTENCE) * base,
            _ => base,
        };
        for order in 1..=ORDER {
            let [no, yes] = self.counts[slot(history, order)];
            p = (f64::from(yes) + SMOOTHING * p) / (f64::from(yes + no) + SMOOTHING);
        }
        p
    }

    fn record(&mut self, history: &[u8; ORDER], has: bool) {
        for order in 1..=ORDER {
            self.counts[slot(history, order)][usize::from(has)] += 1;
        }
        self.total += 1;
        self.hits += u32::from(has);
    }
}

/// Index of the order-`order` context in the shared count table.
fn slot(history: &[u8; ORDER], order: usize) -> usize {
    let offset: usize = (1..order).map(|k| 3usize.pow(k as u32)).sum();
    offset + history[..order].iter().fold(0, |ctx, s| ctx * 3 + usize::from(*s))
}

#[derive(Debug)]
pub struct Predictor<P> {
    models: BTreeMap<P, PeerModel>,
    /// Index of `bits[0]`.
    base: u64,
    bits: VecDeque<BTreeMap<P, Bit>>,
}

impl<P: Copy + Ord> Default for Predictor<P> {
    fn default() -> Self {
        Self { models: BTreeMap::new(), base: 0, bits: VecDeque::new() }
    }
}

impl<P: Copy + Ord> Predictor<P> {
    fn slot(&mut self, index: u64) -> Option<&mut BTreeMap<P, Bit>> {
        while self.base + self.bits.len() as u64 <= index {
            self.bits.push_back(BTreeMap::new());
            if self.bits.len() > WINDOW {
                self.bits.pop_front();
                self.base += 1;
            }
        }
        let i = usize::try_from(index.checked_sub(self.base)?).ok()?;
        self.bits.get_mut(i)
    }

    fn bit(&self, peer: P, index: u64) -> Option<Bit> {
        let i = usize::try_from(index.checked_sub(self.base)?).ok()?;
        self.bits.get(i)?.get(&peer).copied()
    }

    /// What `peer` had for the wants just before `index`, most recent first:
    /// 0 unknown, 1 no, 2 yes.
    fn history(&self, peer: P, index: u64) -> [u8; ORDER] {
        let mut h = [0u8; ORDER];
        for (k, state) in h.iter_mut().enumerate() {
            *state = match index.checked_sub(k as u64 + 1).and_then(|i| self.bit(peer, i)) {
                None => 0,
                Some(b) if b.value() => 2,
                Some(_) => 1,
            };
        }
        h
    }

    /// Probability that `peer` has the block of want `index`, `prior` being the chance for a
    /// peer nothing is known about; records the guess for later contexts unless an answer is
    /// already known.
    pub fn predict(&mut self, peer: P, index: u64, prior: f64) -> f64 {
        if let Some(Bit::Known(v)) = self.bit(peer, index) {
            return if v { 1.0 } else { 0.0 };
        }
        let history = self.history(peer, index);
        let p = self.models.get(&peer).map_or(prior, |m| m.predict(&history, prior));
        if let Some(slot) = self.slot(index) {
            slot.insert(peer, Bit::Guess(p >= 0.5));
        }
        p
    }

    /// `peer` answered for want `index`.
    pub fn record(&mut self, peer: P, index: u64, has: bool) {
        if matches!(self.bit(peer, index), Some(Bit::Known(_))) {
            return;
        }
        let history = self.history(peer, index);
        self.models.entry(peer).or_default().record(&history, has);
        if let Some(slot) = self.slot(index) {
            slot.insert(peer, Bit::Known(has));
        }
    }

    pub fn forget(&mut self, peer: P) {
        self.models.remove(&peer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_peer_is_a_coin_flip() {
        let mut p = Predictor::<u8>::default();
        assert_eq!(p.predict(1, 0, 0.5), 0.5);
    }

    #[test]
    fn learns_a_run() {
        let mut p = Predictor::<u8>::default();
        for i in 0..20 {
            p.record(1, i, true);
            p.record(2, i, false);
        }
        assert!(p.predict(1, 20, 0.5) > 0.9);
        assert!(p.predict(2, 20, 0.5) < 0.1);
    }

    #[test]
    fn learns_a_stripe_and_rolls_guesses_forward() {
        let mut p = Predictor::<u8>::default();
        for i in 0..40 {
            p.record(1, i, i % 2 == 0);
        }
        // Wants 40..44 are issued together, before any answer: guesses feed the next context.
        let guesses: Vec<bool> = (40..44).map(|i| p.predict(1, i, 0.5) > 0.5).collect();
        assert_eq!(guesses, vec![true, false, true, false]);
    }

    #[test]
    fn a_run_that_ends_is_noticed_at_once() {
        let mut p = Predictor::<u8>::default();
        for i in 0..75 {
            p.record(1, i, true);
            p.record(2, i, i >= 25);
        }
        p.record(1, 75, false);
        p.record(2, 75, true);
        assert!(p.predict(2, 76, 0.5) > p.predict(1, 76, 0.5));
    }

    #[test]
    fn random_layout_falls_back_to_the_hit_rate() {
        let mut p = Predictor::<u8>::default();
        let mut x = 12345u32;
        for i in 0..400 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            p.record(1, i, (x >> 16).is_multiple_of(10));
        }
        let guess = p.predict(1, 400, 0.5);
        assert!(guess < 0.35, "{guess}");
    }
}
