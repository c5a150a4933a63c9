//! Any bytes through each parser with the format stated (first byte picks the format), so
//! every parser sees input its sniffer would have refused.
#![no_main]

use std::io::Cursor;

use hmsim::trace::Format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let format = Format::ALL[pick as usize % Format::ALL.len()];
    if let Ok(reader) =
        hmsim::trace::open_reader(Box::new(Cursor::new(rest.to_vec())), "f", Some(format))
    {
        for r in reader {
            if r.is_err() {
                break;
            }
        }
    }
});
