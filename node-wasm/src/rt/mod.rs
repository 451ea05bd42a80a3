//! The few runtime services the glue needs (spawning, sleeping and yielding), one `imp` per
//! target.

use std::future::Future;
use std::time::Duration;

use crate::cond_send::CondSend;

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    use super::*;

    pub fn spawn(fut: impl Future<Output = ()> + CondSend + 'static) {
        tokio::spawn(fut);
    }

    pub async fn sleep(duration: Duration) {
        tokio::time::sleep(duration).await;
    }

    pub async fn yield_now() {
        tokio::task::yield_now().await;
    }
}

#[cfg(target_arch = "wasm32")]
mod imp {
    use super::*;

    pub fn spawn(fut: impl Future<Output = ()> + CondSend + 'static) {
        wasm_bindgen_futures::spawn_local(fut);
    }

    pub async fn sleep(duration: Duration) {
        gloo_timers::future::sleep(duration).await;
    }

    /// Lets the event loop run other tasks (rendering, input, other sockets) first: a zero
    /// timeout is a new task, where spawned futures only queue microtasks, which run before any.
    pub async fn yield_now() {
        gloo_timers::future::sleep(Duration::ZERO).await;
    }
}

pub use imp::{sleep, spawn, yield_now};
