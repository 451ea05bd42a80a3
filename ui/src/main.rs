//! Entry point of the browser app: logging, panic messages, then the root component.

fn main() {
    console_error_panic_hook::set_once();
    syncscope_ui::logging::init();
    leptos::mount::mount_to_body(syncscope_ui::App);
}
