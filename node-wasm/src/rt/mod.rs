//! The few runtime services the glue needs (spawning, sleeping, the platform's own SHA-256), one
//! `imp` per target.

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

    /// Nothing beyond the `sha2` crate, which uses the CPU's SHA instructions natively.
    pub fn platform_sha2_256(_: &[u8]) -> impl Future<Output = Option<[u8; 32]>> + Send {
        std::future::ready(None)
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

    /// WebCrypto's SHA-256 (`crypto.subtle.digest`), which runs native code with the CPU's SHA
    /// instructions: in Chromium about four times the speed of the `sha2` crate compiled to
    /// wasm. `None` where the page has no `crypto.subtle` (an insecure context: plain http to
    /// an address other than localhost) or the digest failed. `Send` only to fit libp2p's
    /// bounds: the browser runs it on its one thread.
    ///
    /// Chromium hashes before `digest` returns its promise, on the calling thread (156: 338 µs
    /// per 256 KiB block, 1.29 ms per MB). Hashing in a worker instead cost the page more: the
    /// copy out of wasm memory and the `postMessage` took 1.52 ms per MB.
    pub fn platform_sha2_256(data: &[u8]) -> impl Future<Output = Option<[u8; 32]>> + Send {
        use js_sys::{ArrayBuffer, Function, Promise, Reflect, Uint8Array};
        use wasm_bindgen::{JsCast, JsValue};

        let start_digest = || -> Option<Promise> {
            let crypto = Reflect::get(&js_sys::global(), &JsValue::from_str("crypto")).ok()?;
            let subtle = Reflect::get(&crypto, &JsValue::from_str("subtle")).ok()?;
            let digest = Reflect::get(&subtle, &JsValue::from_str("digest")).ok()?;
            let digest: Function = digest.dyn_into().ok()?;
            let algorithm = JsValue::from_str("SHA-256");
            // SAFETY: the view is read only by `digest`, which copies the bytes before it
            // returns (WebCrypto's "get a copy of the buffer source"); nothing in between can
            // grow the wasm memory and detach it. A copy made here instead cost a quarter of the
            // hashing's time.
            let input = unsafe { Uint8Array::view(data) };
            digest.call2(&subtle, &algorithm, &input).ok()?.dyn_into().ok()
        };
        let promise = start_digest();
        send_wrapper::SendWrapper::new(async move {
            let hash = wasm_bindgen_futures::JsFuture::from(promise?).await.ok()?;
            let hash = Uint8Array::new(&hash.dyn_into::<ArrayBuffer>().ok()?.into());
            let mut out = [0u8; 32];
            (hash.length() == 32).then(|| hash.copy_to(&mut out)).map(|()| out)
        })
    }
}

pub use imp::{platform_sha2_256, sleep, spawn};
