//! Transparent decompression, chosen by magic bytes (never by file name: users rename).

use std::io::{self, Read, Write};
use std::path::Path;

use serde::Serialize;

/// Outer compression of a trace file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    None,
    Gzip,
    Xz,
    Zstd,
    Bzip2,
}

impl Compression {
    /// Recognises a compressed stream by its first bytes.
    pub fn sniff(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
            Compression::Xz
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else if head.len() >= 4 && head.starts_with(b"BZh") && (b'1'..=b'9').contains(&head[3]) {
            Compression::Bzip2
        } else {
            Compression::None
        }
    }

    /// Guesses the compression to write from an output file's extension.
    pub fn from_extension(path: &Path) -> Compression {
        match path.extension().and_then(|e| e.to_str()) {
            Some("gz") => Compression::Gzip,
            Some("xz") => Compression::Xz,
            Some("zst") | Some("zstd") => Compression::Zstd,
            Some("bz2") => Compression::Bzip2,
            _ => Compression::None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Xz => "xz",
            Compression::Zstd => "zstd",
            Compression::Bzip2 => "bzip2",
        }
    }

    /// Wraps `r` in the matching streaming decoder. The multi-member decoders accept
    /// concatenated streams (pigz, pbzip2 and pxz write them).
    pub fn decoder<'a>(
        self,
        r: Box<dyn Read + Send + 'a>,
    ) -> io::Result<Box<dyn Read + Send + 'a>> {
        Ok(match self {
            Compression::None => r,
            Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(r)),
            Compression::Xz => Box::new(xz2::read::XzDecoder::new_multi_decoder(r)),
            Compression::Zstd => Box::new(zstd::stream::read::Decoder::new(r)?),
            Compression::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(r)),
        })
    }

    /// Wraps `w` in the matching encoder. Call [`Encoder::finish`] to write the trailer.
    pub fn encoder<W: Write + Send + 'static>(self, w: W) -> io::Result<Encoder> {
        let w: BoxWrite = Box::new(w);
        Ok(match self {
            Compression::None => Encoder::Plain(w),
            Compression::Gzip => Encoder::Gzip(flate2::write::GzEncoder::new(
                w,
                flate2::Compression::default(),
            )),
            // zstd and xz compress on worker threads (their libraries split the input into
            // independent jobs; the output does not depend on the machine's core count here,
            // as the worker count is fixed); gzip has no multithreaded encoder in flate2.
            Compression::Xz => {
                let stream = xz2::stream::MtStreamBuilder::new()
                    .threads(COMPRESS_THREADS)
                    .preset(6)
                    .check(xz2::stream::Check::Crc64)
                    .encoder()
                    .map_err(io::Error::other)?;
                Encoder::Xz(xz2::write::XzEncoder::new_stream(w, stream))
            }
            Compression::Zstd => {
                let mut e = zstd::stream::write::Encoder::new(w, 3)?;
                e.multithread(COMPRESS_THREADS)?;
                Encoder::Zstd(e)
            }
            Compression::Bzip2 => Encoder::Bzip2(bzip2::write::BzEncoder::new(
                w,
                bzip2::Compression::default(),
            )),
        })
    }
}

type BoxWrite = Box<dyn Write + Send>;

/// Worker threads of the zstd and xz encoders: fixed, so a file compresses to the same bytes
/// on every machine.
const COMPRESS_THREADS: u32 = 4;

/// A compressing writer whose trailer is written by `finish` (not on drop, where an error
/// could not be reported).
pub enum Encoder {
    Plain(BoxWrite),
    Gzip(flate2::write::GzEncoder<BoxWrite>),
    Xz(xz2::write::XzEncoder<BoxWrite>),
    Zstd(zstd::stream::write::Encoder<'static, BoxWrite>),
    Bzip2(bzip2::write::BzEncoder<BoxWrite>),
}

impl Encoder {
    pub fn finish(self) -> io::Result<()> {
        let mut inner = match self {
            Encoder::Plain(w) => w,
            Encoder::Gzip(e) => e.finish()?,
            Encoder::Xz(e) => e.finish()?,
            Encoder::Zstd(e) => e.finish()?,
            Encoder::Bzip2(e) => e.finish()?,
        };
        inner.flush()
    }
}

impl Write for Encoder {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Encoder::Plain(w) => w.write(buf),
            Encoder::Gzip(e) => e.write(buf),
            Encoder::Xz(e) => e.write(buf),
            Encoder::Zstd(e) => e.write(buf),
            Encoder::Bzip2(e) => e.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Encoder::Plain(w) => w.flush(),
            Encoder::Gzip(e) => e.flush(),
            Encoder::Xz(e) => e.flush(),
            Encoder::Zstd(e) => e.flush(),
            Encoder::Bzip2(e) => e.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_compression_sniffed_by_magic() {
        assert_eq!(Compression::sniff(&[0x1f, 0x8b, 8, 0]), Compression::Gzip);
        assert_eq!(Compression::sniff(b"\xfd7zXZ\x00\x00"), Compression::Xz);
        assert_eq!(
            Compression::sniff(&[0x28, 0xb5, 0x2f, 0xfd, 0]),
            Compression::Zstd
        );
        assert_eq!(Compression::sniff(b"BZh91AY"), Compression::Bzip2);
        assert_eq!(Compression::sniff(b"BZhx"), Compression::None);
        assert_eq!(Compression::sniff(b"I  0400"), Compression::None);
    }
}
