//! WebSocket framing (RFC 6455) for the live feed's sockets, kept lean on
//! purpose: a socket holds no buffer while it is idle. Client frames are parsed
//! from whatever bytes have arrived (a partial frame waits in a buffer that
//! exists only until it completes); server frames are a header of at most 10
//! bytes in front of a payload that is written straight from where it lives
//! (a feed frame is shared by every socket it goes to). No extensions are
//! negotiated, so the reserved bits must be clear.

/// Opcodes.
pub const CONTINUATION: u8 = 0x0;
pub const TEXT: u8 = 0x1;
pub const BINARY: u8 = 0x2;
pub const CLOSE: u8 = 0x8;
pub const PING: u8 = 0x9;
pub const PONG: u8 = 0xA;

/// A client frame, unmasked.
#[derive(Debug, PartialEq, Eq)]
pub struct Frame {
    pub fin: bool,
    pub opcode: u8,
    pub payload: Vec<u8>,
}

/// Why the client's bytes are not a valid frame: the close code to answer
/// with (1002 protocol error, 1009 too big) and a reason.
#[derive(Debug, PartialEq, Eq)]
pub struct Violation {
    pub code: u16,
    pub reason: &'static str,
}

fn violation(code: u16, reason: &'static str) -> Violation {
    Violation { code, reason }
}

/// Parses one client frame from the front of `buf`: `Ok(None)` when it has
/// not fully arrived, else the frame and the bytes it took. A payload above
/// `max` bytes is refused as soon as its header is in, before it arrives.
pub fn parse(buf: &[u8], max: usize) -> Result<Option<(Frame, usize)>, Violation> {
    if buf.len() < 2 {
        return Ok(None);
    }
    let (b0, b1) = (buf[0], buf[1]);
    let fin = b0 & 0x80 != 0;
    if b0 & 0x70 != 0 {
        return Err(violation(1002, "reserved bits set"));
    }
    let opcode = b0 & 0x0F;
    let control = opcode & 0x8 != 0;
    match opcode {
        CONTINUATION | TEXT | BINARY | CLOSE | PING | PONG => {}
        _ => return Err(violation(1002, "unknown opcode")),
    }
    if b1 & 0x80 == 0 {
        return Err(violation(1002, "client frames must be masked"));
    }
    let (len, mut at) = match b1 & 0x7F {
        126 => {
            if buf.len() < 4 {
                return Ok(None);
            }
            (u16::from_be_bytes([buf[2], buf[3]]) as u64, 4)
        }
        127 => {
            if buf.len() < 10 {
                return Ok(None);
            }
            let mut b = [0u8; 8];
            b.copy_from_slice(&buf[2..10]);
            (u64::from_be_bytes(b), 10)
        }
        n => (n as u64, 2),
    };
    if control && (!fin || len > 125) {
        return Err(violation(1002, "invalid control frame"));
    }
    if len > max as u64 {
        return Err(violation(1009, "frame too large"));
    }
    let len = len as usize;
    if buf.len() < at + 4 + len {
        return Ok(None);
    }
    let mask = [buf[at], buf[at + 1], buf[at + 2], buf[at + 3]];
    at += 4;
    let payload = buf[at..at + len]
        .iter()
        .enumerate()
        .map(|(i, b)| b ^ mask[i & 3])
        .collect();
    Ok(Some((
        Frame {
            fin,
            opcode,
            payload,
        },
        at + len,
    )))
}

/// The header of an unmasked, final server frame: bytes and how many are used.
pub fn header(opcode: u8, len: usize) -> ([u8; 10], u8) {
    let mut h = [0u8; 10];
    h[0] = 0x80 | opcode;
    if len < 126 {
        h[1] = len as u8;
        (h, 2)
    } else if len < 65536 {
        h[1] = 126;
        h[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        (h, 4)
    } else {
        h[1] = 127;
        h[2..10].copy_from_slice(&(len as u64).to_be_bytes());
        (h, 10)
    }
}

/// A close frame's payload: the code, then the reason cut to fit a control
/// frame (125 bytes) on a character boundary.
pub fn close_payload(code: u16, reason: &str) -> Vec<u8> {
    let mut end = reason.len().min(123);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    let mut p = Vec::with_capacity(2 + end);
    p.extend_from_slice(&code.to_be_bytes());
    p.extend_from_slice(&reason.as_bytes()[..end]);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A masked client frame, as a browser sends it.
    fn client(fin: bool, opcode: u8, payload: &[u8]) -> Vec<u8> {
        let mask = [0x37, 0xfa, 0x21, 0x3d];
        let mut v = vec![(if fin { 0x80 } else { 0 }) | opcode];
        match payload.len() {
            n if n < 126 => v.push(0x80 | n as u8),
            n if n < 65536 => {
                v.push(0x80 | 126);
                v.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                v.push(0x80 | 127);
                v.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        v.extend_from_slice(&mask);
        v.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        v
    }

    #[test]
    fn parses_masked_frames_of_each_length_form_and_waits_for_partial_ones() {
        for n in [0usize, 5, 125, 126, 300, 65535, 65536, 70000] {
            let payload: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
            let bytes = client(true, BINARY, &payload);
            for cut in [0, 1, bytes.len() / 2, bytes.len() - 1] {
                assert_eq!(parse(&bytes[..cut], 1 << 20), Ok(None), "n={n} cut={cut}");
            }
            let mut two = bytes.clone();
            two.extend_from_slice(&client(true, PING, b"p"));
            let (f, used) = parse(&two, 1 << 20).unwrap().unwrap();
            assert_eq!(used, bytes.len(), "n={n}");
            assert_eq!(f.payload, payload, "n={n}");
            assert!(f.fin);
            assert_eq!(f.opcode, BINARY);
            let (p, _) = parse(&two[used..], 1 << 20).unwrap().unwrap();
            assert_eq!((p.opcode, p.payload.as_slice()), (PING, &b"p"[..]));
        }
    }

    #[test]
    fn refuses_unmasked_reserved_oversized_and_bad_control_frames() {
        let mut unmasked = client(true, TEXT, b"hi");
        unmasked[1] &= 0x7F;
        assert_eq!(parse(&unmasked, 100).unwrap_err().code, 1002);
        let mut rsv = client(true, TEXT, b"hi");
        rsv[0] |= 0x40;
        assert_eq!(parse(&rsv, 100).unwrap_err().code, 1002);
        assert_eq!(parse(&client(true, 0x3, b""), 100).unwrap_err().code, 1002);
        assert_eq!(
            parse(&client(false, PING, b""), 100).unwrap_err().code,
            1002
        );
        assert_eq!(
            parse(&client(true, PING, &[0; 126]), 1000)
                .unwrap_err()
                .code,
            1002
        );
        // refused from the header alone, before the payload arrives
        let big = client(true, TEXT, &[b'a'; 200]);
        assert_eq!(parse(&big[..8], 100).unwrap_err().code, 1009);
    }

    #[test]
    fn server_headers_use_the_shortest_length_form() {
        assert_eq!(header(TEXT, 5), ([0x81, 5, 0, 0, 0, 0, 0, 0, 0, 0], 2));
        let (h, n) = header(TEXT, 300);
        assert_eq!(&h[..n as usize], &[0x81, 126, 1, 44]);
        let (h, n) = header(BINARY, 70000);
        assert_eq!(&h[..n as usize], &[0x82, 127, 0, 0, 0, 0, 0, 1, 0x11, 0x70]);
    }

    #[test]
    fn close_payloads_fit_a_control_frame_on_a_char_boundary() {
        let p = close_payload(1001, "bye");
        assert_eq!(p, [0x03, 0xE9, b'b', b'y', b'e']);
        let long = "é".repeat(100);
        let p = close_payload(4401, &long);
        assert!(p.len() <= 125);
        assert!(std::str::from_utf8(&p[2..]).is_ok());
    }
}
