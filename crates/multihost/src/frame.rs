//! Frames: a little-endian `u32` length, then that many bytes of payload. The length is checked
//! against [`MAX_FRAME`] before anything is allocated, so a peer cannot make the reader reserve
//! more than the cap, and a short read (a peer gone mid-frame) is an error, never a partial frame.

use std::io::{self, Read, Write};

/// The largest payload either side accepts: 16 MiB, far above a report of thousands of jobs
/// with sparse histograms.
pub const MAX_FRAME: usize = 16 << 20;

/// Writes one frame and flushes it.
pub fn write_frame(w: &mut dyn Write, payload: &[u8]) -> io::Result<()> {
    if payload.len() > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("message of {} bytes is over the {MAX_FRAME}-byte frame limit", payload.len()),
        ));
    }
    let mut buf = Vec::with_capacity(4 + payload.len());
    buf.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    buf.extend_from_slice(payload);
    w.write_all(&buf)?;
    w.flush()
}

/// Reads one frame. `Ok(None)` is a clean end of stream between frames; a stream that ends
/// inside a frame, or a length over the cap, is an error.
pub fn read_frame(r: &mut dyn Read) -> io::Result<Option<Vec<u8>>> {
    let mut len = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match r.read(&mut len[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "peer closed inside a frame header")),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let n = u32::from_le_bytes(len) as usize;
    if n > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("frame of {n} bytes announced, over the {MAX_FRAME}-byte limit"),
        ));
    }
    let mut payload = vec![0u8; n];
    r.read_exact(&mut payload).map_err(|e| match e.kind() {
        io::ErrorKind::UnexpectedEof => io::Error::new(io::ErrorKind::UnexpectedEof, "peer closed inside a frame"),
        _ => e,
    })?;
    Ok(Some(payload))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_limits() {
        let mut buf = Vec::new();
        write_frame(&mut buf, b"hello").unwrap();
        write_frame(&mut buf, b"").unwrap();
        let mut r: &[u8] = &buf;
        assert_eq!(read_frame(&mut r).unwrap().unwrap(), b"hello");
        assert_eq!(read_frame(&mut r).unwrap().unwrap(), b"");
        assert!(read_frame(&mut r).unwrap().is_none());
        // Over the cap: refused from the header alone.
        let big = ((MAX_FRAME + 1) as u32).to_le_bytes();
        let mut r: &[u8] = &big;
        assert!(read_frame(&mut r).unwrap_err().to_string().contains("over the"));
        // Cut inside the payload or the header.
        let mut r: &[u8] = &[5, 0, 0, 0, b'a'];
        assert_eq!(read_frame(&mut r).unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
        let mut r: &[u8] = &[5, 0];
        assert_eq!(read_frame(&mut r).unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
    }
}
