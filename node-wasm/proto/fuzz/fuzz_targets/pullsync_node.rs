#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| syncscope_proto_fuzz::pullsync_node::run(data));
