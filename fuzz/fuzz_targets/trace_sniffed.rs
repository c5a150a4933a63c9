//! Any bytes through sniffing and the chosen reader: an error or records, never a panic.
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(reader) = hmsim::trace::open_reader(Box::new(Cursor::new(data.to_vec())), "f", None) {
        for r in reader {
            if r.is_err() {
                break;
            }
        }
    }
});
