#[cfg(test)]
mod timer_test;

pub(crate) mod ack_timer;
pub(crate) mod rtx_timer;
