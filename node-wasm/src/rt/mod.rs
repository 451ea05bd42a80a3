//! The few runtime services the glue needs (spawning and sleeping), one `imp` per target.

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
}

pub use imp::{sleep, spawn};
