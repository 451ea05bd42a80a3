//! Dialling the relay again once the connection to it is lost: it is the node's way into its
//! rooms and to every peer behind a circuit, and a relay that restarts should not end the
//! session. The wait doubles from [`FIRST_WAIT`] to [`MAX_WAIT`] while dials fail, and starts
//! over once one succeeds.

use futures::future::{Fuse, FusedFuture};
use futures::FutureExt;
use web_time::Duration;

use crate::cond_send::BoxFuture;
use crate::rt;

pub(super) const FIRST_WAIT: Duration = Duration::from_secs(1);
pub(super) const MAX_WAIT: Duration = Duration::from_secs(30);

pub(super) struct Redial {
    backoff: Backoff,
    timer: Fuse<BoxFuture<'static, ()>>,
}

impl Redial {
    pub(super) fn new() -> Self {
        Self { backoff: Backoff::default(), timer: Fuse::terminated() }
    }

    /// The relay is connected: nothing is due, and the next loss waits the shortest time.
    pub(super) fn connected(&mut self) {
        self.backoff = Backoff::default();
        self.timer = Fuse::terminated();
    }

    /// The connection was lost or a dial failed: arms the timer and returns how long it waits.
    /// Already armed, it stays as it is (a lost connection also fails the dials under way).
    pub(super) fn schedule(&mut self) -> Option<Duration> {
        if !self.timer.is_terminated() {
            return None;
        }
        let wait = self.backoff.next();
        self.timer = (Box::pin(rt::sleep(wait)) as BoxFuture<'static, ()>).fuse();
        Some(wait)
    }

    /// Resolves when it is time to dial.
    pub(super) fn due(&mut self) -> &mut Fuse<BoxFuture<'static, ()>> {
        &mut self.timer
    }
}

/// Waits that double from [`FIRST_WAIT`] up to [`MAX_WAIT`].
struct Backoff {
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self { next: FIRST_WAIT }
    }
}

impl Backoff {
    fn next(&mut self) -> Duration {
        let wait = self.next;
        self.next = (wait * 2).min(MAX_WAIT);
        wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_up_to_the_maximum() {
        let mut backoff = Backoff::default();
        let secs: Vec<u64> = (0..7).map(|_| backoff.next().as_secs()).collect();
        assert_eq!(secs, [1, 2, 4, 8, 16, 30, 30]);
    }

    #[test]
    fn a_connection_starts_the_waits_over_and_disarms_the_timer() {
        let mut redial = Redial::new();
        assert_eq!(redial.schedule(), Some(FIRST_WAIT));
        assert_eq!(redial.schedule(), None, "armed already: a failed dial adds no second wait");
        redial.backoff.next();
        redial.connected();
        assert!(redial.due().is_terminated(), "nothing due while connected");
        assert_eq!(redial.backoff.next(), FIRST_WAIT);
    }
}
