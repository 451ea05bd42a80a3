//! `Send` where the runtime is multi-threaded, nothing in the single-threaded browser.
//!
//! Browser futures hold `JsValue`s and are never `Send`; tokio's are spawned across threads and must
//! be. Bounds written as `CondSend`/`CondSync` let one signature serve both, and [`BoxFuture`] is
//! the boxed future that fits either.

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    pub trait CondSend: Send {}
    impl<T: Send> CondSend for T {}

    pub trait CondSync: Send + Sync {}
    impl<T: Send + Sync> CondSync for T {}

    pub type BoxFuture<'a, T> = futures::future::BoxFuture<'a, T>;
}

#[cfg(target_arch = "wasm32")]
mod imp {
    pub trait CondSend {}
    impl<T> CondSend for T {}

    pub trait CondSync {}
    impl<T> CondSync for T {}

    pub type BoxFuture<'a, T> = futures::future::LocalBoxFuture<'a, T>;
}

pub use imp::{BoxFuture, CondSend, CondSync};
