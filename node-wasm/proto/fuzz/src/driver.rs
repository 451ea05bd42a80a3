//! What every node harness does alike, as a glue does: drain the core in the contract's order,
//! with bounds that catch a core that never stops, let time pass, and fire the timer while it is
//! due. Each harness says only how it answers what its core emits ([`Glue`]).

use std::time::Duration;

use syncscope_proto::Core;
use web_time::Instant;

/// Outputs one operation may cause before the core counts as queueing without end.
const MAX_OUTPUTS_PER_OP: usize = 200_000;
/// Rounds of handling a due timer before it counts as never stopping being due.
const MAX_TIMER_ROUNDS: usize = 1_000;

/// A harness: a core, its clock, and the glue's answers to what the core emits.
pub trait Glue {
    type Core: Core;
    fn core(&mut self) -> &mut Self::Core;
    fn clock(&mut self) -> &mut Instant;
    fn on_transmit(&mut self, transmit: <Self::Core as Core>::Transmit);
    fn on_event(&mut self, event: <Self::Core as Core>::Event);
    /// After each round of events: work the glue batches (one notice for many stored chunks).
    fn settle(&mut self) {}
}

/// Drains the core until neither transmits nor events are left.
pub fn drain<G: Glue>(glue: &mut G) {
    let mut outputs = 0;
    loop {
        let now = *glue.clock();
        let mut progressed = false;
        while let Some(transmit) = glue.core().poll_transmit(now) {
            outputs += 1;
            progressed = true;
            assert!(outputs < MAX_OUTPUTS_PER_OP, "the node queues without end");
            glue.on_transmit(transmit);
        }
        while let Some(event) = glue.core().poll_event() {
            outputs += 1;
            progressed = true;
            assert!(outputs < MAX_OUTPUTS_PER_OP, "the node reports without end");
            glue.on_event(event);
        }
        glue.settle();
        if !progressed {
            return;
        }
    }
}

/// Moves the clock on by `millis` and fires what fell due.
pub fn advance<G: Glue>(glue: &mut G, millis: u16) {
    *glue.clock() += Duration::from_millis(u64::from(millis));
    fire_due_timer(glue);
}

/// Moves the clock to the core's deadline, if it has one, and fires it.
pub fn to_deadline<G: Glue>(glue: &mut G) {
    if let Some(at) = glue.core().poll_timeout() {
        let clock = glue.clock();
        *clock = (*clock).max(at);
        fire_due_timer(glue);
    }
}

/// Fires the timer while it is due; it must stop being due, or a glue would spin on it.
fn fire_due_timer<G: Glue>(glue: &mut G) {
    for _ in 0..MAX_TIMER_ROUNDS {
        let now = *glue.clock();
        match glue.core().poll_timeout() {
            Some(at) if at <= now => {
                glue.core().handle_timeout(now);
                drain(glue);
            }
            _ => return,
        }
    }
    panic!("the timer is still due after {MAX_TIMER_ROUNDS} rounds of handling it");
}

/// For two nodes recorded against each other: the steps, in milliseconds that fit an
/// `Advance` operation, from `now` to the earlier of their deadlines, if that comes by `end`.
pub fn steps_to_next_deadline(
    deadlines: [Option<Instant>; 2],
    now: Instant,
    end: Instant,
) -> Option<Vec<u16>> {
    let at = deadlines.into_iter().flatten().min().filter(|&at| at <= end)?;
    let wait = at.saturating_duration_since(now);
    let mut millis = wait.as_millis() + u128::from(wait.subsec_nanos() % 1_000_000 != 0);
    let mut steps = Vec::new();
    while millis > 0 {
        let step = millis.min(u128::from(u16::MAX));
        millis -= step;
        steps.push(step as u16);
    }
    Some(steps)
}
