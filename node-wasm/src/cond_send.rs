//! `Send` where the runtime is multi-threaded, nothing in the single-threaded browser.
//!
//! Browser futures hold `JsValue`s and are never `Send`; tokio's are spawned across threads and must
//! be. Bounds written as `CondSend` let one signature serve both.

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    pub trait CondSend: Send {}
    impl<T: Send> CondSend for T {}
}

#[cfg(target_arch = "wasm32")]
mod imp {
    pub trait CondSend {}
    impl<T> CondSend for T {}
}

pub use imp::CondSend;
