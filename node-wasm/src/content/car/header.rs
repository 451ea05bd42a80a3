//! The CAR header, `{roots: [CID], version: n}` in DAG-CBOR, read and written by hand.
//!
//! It is the only CBOR the node reads or writes, and a CBOR library (with serde's machinery for
//! it) cost the page about 3 KB on the wire. DAG-CBOR is strict (definite lengths, no floats in a
//! header), so the reader needs only CBOR's head, tag 42 and a skipper for keys it does not know.

use cid::Cid;

/// DAG-CBOR's tag for a CID: a byte string of `0x00` (the identity multibase) then the CID.
const CID_TAG: u64 = 42;
/// Deeper values than this in a header are junk, not a header.
const MAX_DEPTH: usize = 16;

const UINT: u8 = 0;
const BYTES: u8 = 2;
const TEXT: u8 = 3;
const ARRAY: u8 = 4;
const MAP: u8 = 5;
const TAG: u8 = 6;

/// Why a header is not one; the reader's error names it in words.
pub(super) type Reason = &'static str;

#[derive(Debug, PartialEq, Eq)]
pub(super) struct Header {
    pub roots: Vec<Cid>,
    pub version: u64,
}

impl Header {
    /// Canonical DAG-CBOR: keys sorted by length, so `roots` before `version`.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        push_head(&mut out, MAP, 2);
        push_text(&mut out, "roots");
        push_head(&mut out, ARRAY, self.roots.len() as u64);
        for root in &self.roots {
            let cid = root.to_bytes();
            push_head(&mut out, TAG, CID_TAG);
            push_head(&mut out, BYTES, cid.len() as u64 + 1);
            out.push(0);
            out.extend_from_slice(&cid);
        }
        push_text(&mut out, "version");
        push_head(&mut out, UINT, self.version);
        out
    }

    /// Reads a header map in any key order. A CARv2 pragma (`{version: 2}`) has no roots.
    pub fn decode(bytes: &[u8]) -> Result<Self, Reason> {
        let mut reader = Reader(bytes);
        let entries = reader.expect(MAP, "it is not a map")?;
        let (mut roots, mut version) = (Vec::new(), None);
        for _ in 0..entries {
            let key_len = reader.expect(TEXT, "a key is not text")?;
            match reader.take(key_len)? {
                b"roots" => roots = reader.roots()?,
                b"version" => version = Some(reader.expect(UINT, "the version is not a number")?),
                _ => reader.skip(0)?,
            }
        }
        if !reader.0.is_empty() {
            return Err("bytes follow the map");
        }
        Ok(Self { roots, version: version.ok_or("it has no version")? })
    }
}

fn push_head(out: &mut Vec<u8>, major: u8, arg: u64) {
    let major = major << 5;
    match arg {
        0..24 => out.push(major | arg as u8),
        24..0x100 => out.extend_from_slice(&[major | 24, arg as u8]),
        0x100..0x1_0000 => {
            out.push(major | 25);
            out.extend_from_slice(&(arg as u16).to_be_bytes());
        }
        0x1_0000..0x1_0000_0000 => {
            out.push(major | 26);
            out.extend_from_slice(&(arg as u32).to_be_bytes());
        }
        _ => {
            out.push(major | 27);
            out.extend_from_slice(&arg.to_be_bytes());
        }
    }
}

fn push_text(out: &mut Vec<u8>, text: &str) {
    push_head(out, TEXT, text.len() as u64);
    out.extend_from_slice(text.as_bytes());
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, len: u64) -> Result<&'a [u8], Reason> {
        let len = usize::try_from(len).map_err(|_| "it ends too soon")?;
        if len > self.0.len() {
            return Err("it ends too soon");
        }
        let (taken, rest) = self.0.split_at(len);
        self.0 = rest;
        Ok(taken)
    }

    /// A CBOR head: major type and argument. Indefinite lengths are not DAG-CBOR.
    fn head(&mut self) -> Result<(u8, u64), Reason> {
        let first = self.take(1)?[0];
        let arg = match first & 0x1f {
            info @ 0..24 => u64::from(info),
            24 => u64::from(self.take(1)?[0]),
            25 => u64::from(u16::from_be_bytes(self.take(2)?.try_into().expect("2 bytes"))),
            26 => u64::from(u32::from_be_bytes(self.take(4)?.try_into().expect("4 bytes"))),
            27 => u64::from_be_bytes(self.take(8)?.try_into().expect("8 bytes")),
            _ => return Err("it uses an indefinite length or a reserved head"),
        };
        Ok((first >> 5, arg))
    }

    fn expect(&mut self, major: u8, reason: Reason) -> Result<u64, Reason> {
        match self.head()? {
            (m, arg) if m == major => Ok(arg),
            _ => Err(reason),
        }
    }

    fn roots(&mut self) -> Result<Vec<Cid>, Reason> {
        let count = self.expect(ARRAY, "the roots are not a list")?;
        // Each root takes at least 4 bytes, so the count cannot outgrow what is left to read.
        if count > self.0.len() as u64 {
            return Err("it ends too soon");
        }
        (0..count).map(|_| self.root()).collect()
    }

    fn root(&mut self) -> Result<Cid, Reason> {
        if self.expect(TAG, "a root is not a CID")? != CID_TAG {
            return Err("a root is not a CID");
        }
        let len = self.expect(BYTES, "a root is not a CID")?;
        match self.take(len)? {
            [0, cid @ ..] => Cid::try_from(cid).map_err(|_| "a root is not a valid CID"),
            _ => Err("a root is not a CID"),
        }
    }

    /// Skips one value of a key this reader does not know.
    fn skip(&mut self, depth: usize) -> Result<(), Reason> {
        if depth > MAX_DEPTH {
            return Err("it nests too deeply");
        }
        match self.head()? {
            (BYTES | TEXT, len) => self.take(len).map(drop),
            (ARRAY, len) => (0..len).try_for_each(|_| self.skip(depth + 1)),
            (MAP, len) => (0..len.saturating_mul(2)).try_for_each(|_| self.skip(depth + 1)),
            (TAG, _) => self.skip(depth + 1),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> Cid {
        "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku".parse().unwrap()
    }

    #[test]
    fn a_header_reads_back_as_written() {
        for roots in [vec![], vec![root()], vec![root(); 300]] {
            let header = Header { roots, version: 1 };
            assert_eq!(Header::decode(&header.encode()), Ok(header));
        }
    }

    /// `{version: 1, extra: {a: [1, "x"]}, roots: [..]}`: another order and a key to skip.
    #[test]
    fn keys_in_any_order_and_unknown_keys_are_read() {
        let written = Header { roots: vec![root()], version: 1 }.encode();
        let roots = &written[1..written.len() - 9];
        let mut bytes = vec![0xa3, 0x67];
        bytes.extend_from_slice(b"version");
        bytes.extend_from_slice(&[0x01, 0x65]);
        bytes.extend_from_slice(b"extra");
        bytes.extend_from_slice(&[0xa1, 0x61, b'a', 0x82, 0x01, 0x61, b'x']);
        bytes.extend_from_slice(roots);
        assert_eq!(Header::decode(&bytes), Ok(Header { roots: vec![root()], version: 1 }));
    }

    #[test]
    fn a_carv2_pragma_reads_as_version_2() {
        let pragma = [&[0xa1, 0x67][..], b"version", &[0x02]].concat();
        assert_eq!(Header::decode(&pragma), Ok(Header { roots: vec![], version: 2 }));
    }

    #[test]
    fn junk_is_refused_with_a_reason_and_no_panic() {
        let good = Header { roots: vec![root(); 3], version: 1 }.encode();
        for len in 0..good.len() {
            assert!(Header::decode(&good[..len]).is_err(), "prefix of {len} bytes");
        }
        let cases: [(&[u8], Reason); 5] = [
            (&[0x80], "it is not a map"),
            (&[0xbf], "it uses an indefinite length or a reserved head"),
            (&[0xa1, 0x01, 0x01], "a key is not text"),
            (&[0xa0], "it has no version"),
            (
                &[
                    0xa1, 0x65, b'r', b'o', b'o', b't', b's', 0x9b, 0xff, 0xff, 0xff, 0xff, 0xff,
                    0xff, 0xff, 0xff,
                ],
                "it ends too soon",
            ),
        ];
        for (bytes, reason) in cases {
            assert_eq!(Header::decode(bytes), Err(reason), "{bytes:02x?}");
        }
        let deep = [vec![0xa1, 0x61, b'x'], vec![0x81; 100]].concat();
        assert_eq!(Header::decode(&deep), Err("it nests too deeply"));
    }
}
