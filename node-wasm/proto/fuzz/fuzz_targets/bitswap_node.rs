#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| syncscope_proto_fuzz::bitswap_node::run(data));
