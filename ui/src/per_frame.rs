//! A signal drawn at most once per animation frame: a value set many times between two frames
//! (progress after every block) costs one render, of the latest value.

use leptos::prelude::*;

pub struct PerFrame<T: 'static> {
    shown: RwSignal<T>,
    /// The value waiting for the next frame; `Some` while a frame is requested.
    next: StoredValue<Option<T>, LocalStorage>,
}

impl<T: 'static> Clone for PerFrame<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: 'static> Copy for PerFrame<T> {}

impl<T: Clone + Send + Sync + 'static> PerFrame<T> {
    pub fn new(value: T) -> Self {
        Self { shown: RwSignal::new(value), next: StoredValue::new_local(None) }
    }

    /// The value drawn now (tracked, like a signal's `get`).
    pub fn get(&self) -> T {
        self.shown.get()
    }

    /// Shows `value` on the next animation frame, replacing any value still waiting for it.
    pub fn set_next_frame(&self, value: T) {
        let requested = self.next.try_update_value(|next| next.replace(value).is_some());
        if requested == Some(false) {
            let (shown, next) = (self.shown, self.next);
            request_animation_frame(move || {
                if let Some(Some(value)) = next.try_update_value(Option::take) {
                    shown.set(value);
                }
            });
        }
    }

    /// Shows `value` at once; a value waiting for the next frame is dropped.
    pub fn set(&self, value: T) {
        self.next.try_update_value(|next| next.take());
        self.shown.set(value);
    }
}
