#[cfg(test)]
mod queue_test;

pub(crate) mod control_queue;
pub(crate) mod payload_queue;
pub(crate) mod pending_queue;
pub(crate) mod reassembly_queue;
