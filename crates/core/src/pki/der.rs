//! The few DER and PEM building blocks the PKI code needs: writing TLVs the way Go's
//! `encoding/asn1` writes them, reading TLVs back, and PEM armour as Go's `encoding/pem` emits it.
//!
//! Certificates are assembled here byte by byte (rather than through rcgen's certificate builder)
//! because upstream's exact shape matters: extension order, which extensions exist (no subject key id
//! on leaves), string types in names, and the issuer copied verbatim from the CA.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

pub(crate) const TAG_BOOLEAN: u8 = 0x01;
pub(crate) const TAG_INTEGER: u8 = 0x02;
pub(crate) const TAG_BIT_STRING: u8 = 0x03;
pub(crate) const TAG_OCTET_STRING: u8 = 0x04;
pub(crate) const TAG_NULL: u8 = 0x05;
pub(crate) const TAG_OID: u8 = 0x06;
pub(crate) const TAG_UTF8_STRING: u8 = 0x0c;
pub(crate) const TAG_PRINTABLE_STRING: u8 = 0x13;
pub(crate) const TAG_UTC_TIME: u8 = 0x17;
pub(crate) const TAG_GENERALIZED_TIME: u8 = 0x18;
pub(crate) const TAG_SEQUENCE: u8 = 0x30;
pub(crate) const TAG_SET: u8 = 0x31;

/// One TLV with the given tag around `content`.
pub(crate) fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(content.len() + 6);
    out.push(tag);
    let len = content.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = len.to_be_bytes();
        let skip = bytes.iter().take_while(|b| **b == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(content);
    out
}

/// A SEQUENCE of already encoded elements.
pub(crate) fn seq(parts: &[&[u8]]) -> Vec<u8> {
    tlv(TAG_SEQUENCE, &parts.concat())
}

/// A SET OF, sorted by encoding as DER requires (Go's asn1 sorts too).
pub(crate) fn set_of(mut parts: Vec<Vec<u8>>) -> Vec<u8> {
    parts.sort();
    tlv(TAG_SET, &parts.concat())
}

/// A non-negative INTEGER from big-endian magnitude bytes.
pub(crate) fn unsigned_integer(magnitude: &[u8]) -> Vec<u8> {
    let trimmed: &[u8] = {
        let skip = magnitude.iter().take_while(|b| **b == 0).count();
        &magnitude[skip.min(magnitude.len().saturating_sub(1))..]
    };
    let mut content = Vec::with_capacity(trimmed.len() + 1);
    if trimmed.is_empty() {
        content.push(0);
    } else {
        if trimmed[0] & 0x80 != 0 {
            content.push(0);
        }
        content.extend_from_slice(trimmed);
    }
    tlv(TAG_INTEGER, &content)
}

/// An OBJECT IDENTIFIER from its arcs.
pub(crate) fn oid(arcs: &[u64]) -> Vec<u8> {
    let mut content = Vec::new();
    let first = arcs.first().copied().unwrap_or(0) * 40 + arcs.get(1).copied().unwrap_or(0);
    push_base128(&mut content, first);
    for arc in arcs.iter().skip(2) {
        push_base128(&mut content, *arc);
    }
    tlv(TAG_OID, &content)
}

fn push_base128(out: &mut Vec<u8>, mut value: u64) {
    let mut tmp = [0u8; 10];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            break;
        }
    }
    let last = tmp.len() - 1;
    for (k, b) in tmp.iter().enumerate().skip(i) {
        out.push(if k == last { *b } else { *b | 0x80 });
    }
}

/// A BIT STRING with no unused bits.
pub(crate) fn bit_string(bytes: &[u8]) -> Vec<u8> {
    let mut content = Vec::with_capacity(bytes.len() + 1);
    content.push(0);
    content.extend_from_slice(bytes);
    tlv(TAG_BIT_STRING, &content)
}

/// A string in a distinguished name, typed as Go's asn1 does: PrintableString when every character
/// allows it (`*` and `&` do not), else UTF8String.
pub(crate) fn directory_string(value: &str) -> Vec<u8> {
    let printable = value.bytes().all(|b| {
        b.is_ascii_alphanumeric()
            || matches!(
                b,
                b' ' | b'\'' | b'(' | b')' | b'+' | b',' | b'-' | b'.' | b'/' | b':' | b'=' | b'?'
            )
    });
    tlv(
        if printable {
            TAG_PRINTABLE_STRING
        } else {
            TAG_UTF8_STRING
        },
        value.as_bytes(),
    )
}

/// A time as Go writes it: UTCTime for 1950..2049, GeneralizedTime otherwise, always in UTC.
pub(crate) fn time(unix_seconds: i64) -> Vec<u8> {
    let c = civil_from_unix(unix_seconds);
    if (1950..2050).contains(&c.year) {
        let s = format!(
            "{:02}{:02}{:02}{:02}{:02}{:02}Z",
            c.year % 100,
            c.month,
            c.day,
            c.hour,
            c.minute,
            c.second
        );
        tlv(TAG_UTC_TIME, s.as_bytes())
    } else {
        let s = format!(
            "{:04}{:02}{:02}{:02}{:02}{:02}Z",
            c.year, c.month, c.day, c.hour, c.minute, c.second
        );
        tlv(TAG_GENERALIZED_TIME, s.as_bytes())
    }
}

/// A calendar date and time of day in UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Civil {
    pub(crate) year: i64,
    pub(crate) month: u32,
    pub(crate) day: u32,
    pub(crate) hour: u32,
    pub(crate) minute: u32,
    pub(crate) second: u32,
}

/// Unix seconds to the proleptic Gregorian calendar (Howard Hinnant's days-from-civil, inverted).
pub(crate) fn civil_from_unix(unix_seconds: i64) -> Civil {
    let days = unix_seconds.div_euclid(86_400);
    let secs = unix_seconds.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    Civil {
        year,
        month,
        day,
        hour: (secs / 3600) as u32,
        minute: ((secs % 3600) / 60) as u32,
        second: (secs % 60) as u32,
    }
}

/// Why a DER structure could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed DER: {0}")]
pub struct DerError(pub(crate) &'static str);

/// A cursor over consecutive TLVs.
#[derive(Debug, Clone)]
pub(crate) struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Reader { rest: bytes }
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    #[cfg(test)]
    pub(crate) fn peek_tag(&self) -> Option<u8> {
        self.rest.first().copied()
    }

    /// The next TLV: its tag, its content and its whole encoding.
    pub(crate) fn next_any(&mut self) -> Result<(u8, &'a [u8], &'a [u8]), DerError> {
        let all = self.rest;
        let (&tag, after_tag) = all.split_first().ok_or(DerError("unexpected end"))?;
        let (&first, mut after_len) = after_tag.split_first().ok_or(DerError("missing length"))?;
        let len = if first < 0x80 {
            usize::from(first)
        } else {
            let n = usize::from(first & 0x7f);
            if n == 0 || n > 4 || after_len.len() < n {
                return Err(DerError("bad length"));
            }
            let mut len = 0usize;
            for b in &after_len[..n] {
                len = (len << 8) | usize::from(*b);
            }
            after_len = &after_len[n..];
            len
        };
        if after_len.len() < len {
            return Err(DerError("truncated"));
        }
        let header = all.len() - after_len.len();
        let content = &after_len[..len];
        let whole = &all[..header + len];
        self.rest = &after_len[len..];
        Ok((tag, content, whole))
    }

    /// The content of the next TLV, which must carry `tag`.
    pub(crate) fn next(&mut self, tag: u8) -> Result<&'a [u8], DerError> {
        let (t, content, _) = self.next_any()?;
        if t != tag {
            return Err(DerError("unexpected tag"));
        }
        Ok(content)
    }
}

/// PEM armour exactly as Go's `pem.EncodeToMemory` writes it (64-column base64, trailing newline).
pub(crate) fn pem_encode(label: &str, der: &[u8]) -> String {
    let b64 = STANDARD.encode(der);
    let mut out = String::with_capacity(b64.len() + b64.len() / 64 + 2 * label.len() + 40);
    out.push_str("-----BEGIN ");
    out.push_str(label);
    out.push_str("-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        out.push('\n');
    }
    out.push_str("-----END ");
    out.push_str(label);
    out.push_str("-----\n");
    out
}

/// One decoded PEM block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PemBlock {
    /// The label, e.g. `CERTIFICATE` or `RSA PRIVATE KEY`.
    pub label: String,
    /// The DER bytes.
    pub der: Vec<u8>,
}

/// Every PEM block in `text`, in order; text outside blocks is ignored as Go's decoder does.
/// Blocks with headers (encrypted keys) are returned as undecodable and skipped.
pub fn pem_decode_all(text: &str) -> Vec<PemBlock> {
    let mut blocks = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let line = line.trim_end();
        let Some(label) = line
            .strip_prefix("-----BEGIN ")
            .and_then(|l| l.strip_suffix("-----"))
        else {
            continue;
        };
        let end = format!("-----END {label}-----");
        let mut body = String::new();
        let mut closed = false;
        let mut has_headers = false;
        for l in lines.by_ref() {
            let l = l.trim();
            if l == end {
                closed = true;
                break;
            }
            if l.contains(':') {
                has_headers = true;
                continue;
            }
            body.push_str(l);
        }
        if !closed || has_headers {
            continue;
        }
        if let Ok(der) = STANDARD.decode(body.as_bytes()) {
            blocks.push(PemBlock {
                label: label.to_string(),
                der,
            });
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_match_known_points() {
        assert_eq!(
            civil_from_unix(0),
            Civil {
                year: 1970,
                month: 1,
                day: 1,
                hour: 0,
                minute: 0,
                second: 0
            }
        );
        // 2026-11-30T06:02:29Z, a NotBefore read from an upstream certificate with openssl.
        assert_eq!(
            civil_from_unix(1_796_018_549),
            Civil {
                year: 2026,
                month: 11,
                day: 30,
                hour: 6,
                minute: 2,
                second: 29
            }
        );
        assert_eq!(time(2_524_608_000)[0], TAG_GENERALIZED_TIME); // 2050-01-01
        assert_eq!(time(2_524_607_999)[0], TAG_UTC_TIME);
    }

    #[test]
    fn integers_and_oids_encode_like_openssl_shows() {
        assert_eq!(unsigned_integer(&[0x80]), vec![2, 2, 0, 0x80]);
        assert_eq!(unsigned_integer(&[0, 0, 5]), vec![2, 1, 5]);
        assert_eq!(unsigned_integer(&[]), vec![2, 1, 0]);
        // sha256WithRSAEncryption
        assert_eq!(
            oid(&[1, 2, 840, 113_549, 1, 1, 11]),
            vec![6, 9, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 1, 1, 11]
        );
    }

    #[test]
    fn long_lengths_round_trip() {
        let content = vec![7u8; 300];
        let enc = tlv(TAG_OCTET_STRING, &content);
        assert_eq!(&enc[..4], &[4, 0x82, 1, 0x2c]);
        let mut r = Reader::new(&enc);
        assert_eq!(r.next(TAG_OCTET_STRING).map(<[u8]>::len), Ok(300));
        assert!(r.is_empty());
    }
}
