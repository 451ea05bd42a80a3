//! The timer the adapter keeps for its core: the deadline it asks for (`poll_timeout`) as a
//! [`Delay`] polled with the behaviour, so that `handle_timeout` runs once it is due.

use std::task::{Context, Poll};

use futures::FutureExt;
use futures_timer::Delay;
use web_time::Instant;

/// At most one armed deadline. The adapter's timer loop: if [`CoreTimer::take_due`], hand the
/// core the timeout; set the timer to its next deadline; return while [`CoreTimer::poll`] is
/// pending, else go round again.
#[derive(Default)]
pub(crate) struct CoreTimer {
    armed: Option<(Instant, Delay)>,
}

impl CoreTimer {
    /// Whether the armed deadline has passed at `now`; if so the timer is disarmed.
    pub(crate) fn take_due(&mut self, now: Instant) -> bool {
        let due = self.armed.as_ref().is_some_and(|(at, _)| *at <= now);
        if due {
            self.armed = None;
        }
        due
    }

    /// Arms the timer for `at`, or disarms it for `None`; an armed deadline earlier than `at`
    /// stays: deadlines move later all the time, and firing early is harmless and cheaper than a
    /// new delay at every move.
    pub(crate) fn set_at_most(&mut self, now: Instant, at: Option<Instant>) {
        let earlier = matches!((self.deadline(), at), (Some(armed), Some(at)) if armed <= at);
        if !earlier {
            self.arm(now, at);
        }
    }

    fn deadline(&self) -> Option<Instant> {
        self.armed.as_ref().map(|(at, _)| *at)
    }

    fn arm(&mut self, now: Instant, at: Option<Instant>) {
        self.armed = at.map(|at| (at, Delay::new(at.saturating_duration_since(now))));
    }

    /// Ready once the armed delay fired (the deadline is then due); pending while it runs, or
    /// when nothing is armed.
    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some((at, delay)) = self.armed.as_mut() else { return Poll::Pending };
        if delay.poll_unpin(cx).is_pending() {
            return Poll::Pending;
        }
        // The delay may fire a little before the instant it was set for.
        *at = (*at).min(Instant::now());
        Poll::Ready(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_deadline_is_due_once_reached_and_then_disarmed() {
        let now = Instant::now();
        let at = now + Duration::from_secs(60);
        let mut timer = CoreTimer::default();
        timer.set_at_most(now, Some(at));
        assert!(!timer.take_due(now));
        assert!(timer.take_due(at));
        assert_eq!(timer.deadline(), None);
        assert!(!timer.take_due(at));
    }

    #[test]
    fn an_earlier_deadline_stays_armed_and_none_disarms() {
        let now = Instant::now();
        let (early, late) = (now + Duration::from_secs(1), now + Duration::from_secs(2));
        let mut timer = CoreTimer::default();
        timer.set_at_most(now, Some(late));
        assert_eq!(timer.deadline(), Some(late));
        timer.set_at_most(now, Some(early));
        assert_eq!(timer.deadline(), Some(early));
        timer.set_at_most(now, Some(late));
        assert_eq!(timer.deadline(), Some(early));
        timer.set_at_most(now, None);
        assert_eq!(timer.deadline(), None);
    }
}
