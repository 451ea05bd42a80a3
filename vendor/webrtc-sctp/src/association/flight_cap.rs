//! syncscope patch: the cap on data in flight towards a loopback address, learned per
//! association from the receiver's drops.
//!
//! Over loopback nothing queues between the two ends but the receiver's UDP socket, so the
//! flight is what that buffer must hold whenever the receiving thread is descheduled, and
//! the sender cannot know its size. Chromium gives a peer connection with data channels only
//! 128 KiB (`ss -uamp`: `rb131072`, counted in kernel buffer sizes, which for a 2 KiB datagram
//! are about twice the datagram): 32 packets of `LOOPBACK_MTU` were dropped there on every
//! 64 MiB probe, 24 never were. A peer connection with a video section gets a receive buffer
//! of its own size (Chromium 156 on this machine: `rb2097152`), and 96 packets in flight
//! moved a third more data to such a page than 24 did, but halved what reached a page
//! without one (832 datagrams dropped in two probes). So the cap starts at what the smallest
//! buffer holds, grows by one packet for every flight acknowledged while the cap held the
//! sender back, and at the first loss settles a quarter below where the loss happened: it no
//! longer grows, and each later loss lowers it by a quarter again, down to the floor.

/// Packets in flight that Chromium's smallest WebRTC receive buffer holds.
pub(crate) const LOOPBACK_MIN_FLIGHT: u32 = 24;
/// Packets in flight that the cap never grows past: with Linux's default `rmem_max`
/// (212,992, so 425,984 of kernel buffer) about 100 datagrams of `LOOPBACK_MTU` fit.
pub(crate) const LOOPBACK_MAX_FLIGHT: u32 = 80;

#[derive(Debug)]
pub(crate) struct FlightCap {
    packets: u32,
    mtu: u32,
    /// Set by the first loss: the cap then no longer grows.
    settled: bool,
    /// Whether a send stopped at the cap since the cap last grew: growing a cap the sender
    /// never reached would learn nothing about the receiver.
    reached: bool,
    /// Bytes acknowledged since the cap last grew.
    acked: usize,
}

impl FlightCap {
    pub(crate) fn new(mtu: u32) -> Self {
        FlightCap { packets: LOOPBACK_MIN_FLIGHT, mtu, settled: false, reached: false, acked: 0 }
    }

    pub(crate) fn bytes(&self) -> usize {
        (self.packets * self.mtu) as usize
    }

    /// A send stopped because the next chunk would take the flight past the cap.
    pub(crate) fn on_reached(&mut self) {
        self.reached = true;
    }

    /// `bytes` were newly acknowledged with no loss reported.
    pub(crate) fn on_acked(&mut self, bytes: usize) {
        if self.settled || !self.reached || self.packets >= LOOPBACK_MAX_FLIGHT {
            return;
        }
        self.acked += bytes;
        if self.acked >= self.bytes() {
            self.packets += 1;
            self.acked = 0;
            self.reached = false;
        }
    }

    /// The receiver lost a packet (fast retransmit or T3-rtx).
    pub(crate) fn on_loss(&mut self) {
        self.packets = (self.packets * 3 / 4).max(LOOPBACK_MIN_FLIGHT);
        self.settled = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MTU: u32 = 1980;

    fn ack_flights(cap: &mut FlightCap, flights: u32) {
        for _ in 0..flights {
            cap.on_reached();
            cap.on_acked(cap.bytes());
        }
    }

    #[test]
    fn starts_at_the_smallest_buffer_and_grows_a_packet_per_flight_held_back() {
        let mut cap = FlightCap::new(MTU);
        assert_eq!(cap.bytes(), (LOOPBACK_MIN_FLIGHT * MTU) as usize);
        ack_flights(&mut cap, 10);
        assert_eq!(cap.bytes(), ((LOOPBACK_MIN_FLIGHT + 10) * MTU) as usize);
        ack_flights(&mut cap, 1000);
        assert_eq!(cap.bytes(), (LOOPBACK_MAX_FLIGHT * MTU) as usize);
    }

    #[test]
    fn does_not_grow_while_the_sender_stays_under_it() {
        let mut cap = FlightCap::new(MTU);
        for _ in 0..100 {
            cap.on_acked(cap.bytes());
        }
        assert_eq!(cap.bytes(), (LOOPBACK_MIN_FLIGHT * MTU) as usize);
    }

    #[test]
    fn settles_a_quarter_below_the_first_loss_and_never_below_the_floor() {
        let mut cap = FlightCap::new(MTU);
        ack_flights(&mut cap, 40);
        cap.on_loss();
        assert_eq!(cap.bytes(), ((LOOPBACK_MIN_FLIGHT + 40) * 3 / 4 * MTU) as usize);
        ack_flights(&mut cap, 100);
        assert_eq!(cap.bytes(), ((LOOPBACK_MIN_FLIGHT + 40) * 3 / 4 * MTU) as usize);
        for _ in 0..10 {
            cap.on_loss();
        }
        assert_eq!(cap.bytes(), (LOOPBACK_MIN_FLIGHT * MTU) as usize);
    }
}
