//! A cap on the peers' dials the `/webrtc` transport answers at once. Each one holds an
//! `RTCPeerConnection` for up to the connect timeout, so a peer that kept dialling could otherwise
//! make the page hold hundreds. The count lives here, apart from the browser, to be tested.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Dials answered at once; one more is refused, and its dialler stays on the circuit.
pub const MAX_ANSWERING: usize = 4;

/// The dials being answered now.
#[derive(Debug, Default)]
pub struct Answering(Arc<AtomicUsize>);

impl Answering {
    /// A slot for one more dial, held until dropped; `None` while [`MAX_ANSWERING`] are under way.
    pub fn start(&self) -> Option<Slot> {
        let under_way = self.0.fetch_add(1, Ordering::Relaxed);
        let slot = Slot(self.0.clone());
        (under_way < MAX_ANSWERING).then_some(slot)
    }
}

/// One dial being answered, counted until it ends.
#[derive(Debug)]
pub struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dial_beyond_the_cap_is_refused_until_one_ends() {
        let answering = Answering::default();
        let mut slots: Vec<Slot> = (0..MAX_ANSWERING).map(|_| answering.start().unwrap()).collect();
        assert!(answering.start().is_none());
        assert!(answering.start().is_none(), "a refused dial holds no slot");
        slots.pop();
        let again = answering.start();
        assert!(again.is_some(), "an ended dial frees its slot");
        assert!(answering.start().is_none());
    }
}
