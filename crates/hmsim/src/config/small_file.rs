//! Bounded reading of the small text files a configuration names (device files, topology
//! files, latency curves). A special file is refused before it is opened: opening a FIFO
//! without a writer blocks, and `/dev/zero` never ends. A file above the bound is refused
//! instead of read whole.

use std::fs::File;
use std::io::Read;
use std::path::Path;

/// Largest configuration file read, bytes (the built-in device catalog is 40 KiB).
pub const MAX_CONFIG_FILE_BYTES: u64 = 4 << 20;

/// The text of the configuration file at `path`, or why it cannot be one (an I/O error, a
/// special file, more than [`MAX_CONFIG_FILE_BYTES`], not UTF-8).
pub fn read_config_text(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    let kind = meta.file_type();
    if !kind.is_file() {
        let what = if kind.is_dir() {
            "a directory"
        } else {
            special_kind(&kind)
        };
        return Err(format!("is {what}, not a regular file"));
    }
    let too_big = || {
        format!(
            "is larger than the {} MiB a configuration file may hold",
            MAX_CONFIG_FILE_BYTES >> 20
        )
    };
    if meta.len() > MAX_CONFIG_FILE_BYTES {
        return Err(too_big());
    }
    let mut text = String::new();
    // The size can change after the check (or be 0 for /proc files): read at most one byte
    // more than the bound.
    File::open(path)
        .and_then(|f| f.take(MAX_CONFIG_FILE_BYTES + 1).read_to_string(&mut text))
        .map_err(|e| e.to_string())?;
    if text.len() as u64 > MAX_CONFIG_FILE_BYTES {
        return Err(too_big());
    }
    Ok(text)
}

#[cfg(unix)]
fn special_kind(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

#[cfg(not(unix))]
fn special_kind(_: &std::fs::FileType) -> &'static str {
    "a special file"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_and_oversized_files_are_refused_without_reading_them() {
        let e = read_config_text(Path::new("/dev/zero")).unwrap_err();
        assert!(e.contains("a device"), "{e}");
        let dir = std::env::temp_dir().join(format!("hmsim-small-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(read_config_text(&dir).unwrap_err().contains("directory"));
        // A FIFO with no writer: opening it would block forever.
        let fifo = dir.join("f.toml");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            assert!(read_config_text(&fifo).unwrap_err().contains("FIFO"));
        }
        let big = dir.join("big.toml");
        std::fs::write(&big, vec![b'#'; MAX_CONFIG_FILE_BYTES as usize + 1]).unwrap();
        assert!(read_config_text(&big).unwrap_err().contains("larger"));
        let ok = dir.join("ok.toml");
        std::fs::write(&ok, "a = 1\n").unwrap();
        assert_eq!(read_config_text(&ok).unwrap(), "a = 1\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
