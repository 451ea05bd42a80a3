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
    next_wait: Duration,
    timer: Fuse<BoxFuture<'static, ()>>,
}

impl Redial {
    pub(super) fn new() -> Self {
        Self { next_wait: FIRST_WAIT, timer: Fuse::terminated() }
    }

    /// The relay is connected: nothing is due, and the next loss waits the shortest time.
    pub(super) fn connected(&mut self) {
        self.next_wait = FIRST_WAIT;
        self.timer = Fuse::terminated();
    }

    /// The connection was lost or a dial failed: arms the timer and returns how long it waits.
    /// Already armed, it stays as it is (a lost connection also fails the dials under way).
    pub(super) fn schedule(&mut self) -> Option<Duration> {
        if !self.timer.is_terminated() {
            return None;
        }
        let wait = self.next_wait;
        self.next_wait = (wait * 2).min(MAX_WAIT);
        self.timer = (Box::pin(rt::sleep(wait)) as BoxFuture<'static, ()>).fuse();
        Some(wait)
    }

    /// Resolves when it is time to dial.
    pub(super) fn due(&mut self) -> &mut Fuse<BoxFuture<'static, ()>> {
        &mut self.timer
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn waits_double_up_to_the_maximum_and_start_over_once_connected() {
        let mut redial = Redial::new();
        let mut waits = Vec::new();
        for _ in 0..7 {
            waits.extend(redial.schedule());
            assert_eq!(redial.schedule(), None, "armed already");
            redial.due().await;
        }
        let secs: Vec<u64> = waits.iter().map(Duration::as_secs).collect();
        assert_eq!(secs, [1, 2, 4, 8, 16, 30, 30]);
        redial.connected();
        assert!(redial.due().is_terminated(), "nothing due while connected");
        assert_eq!(redial.schedule(), Some(FIRST_WAIT));
    }
}
