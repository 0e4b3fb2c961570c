//! The top-level sections of a WebAssembly binary, as byte ranges of the
//! bytes already in memory.
//!
//! A signature covers sections exactly as they are serialised (id, size,
//! payload), so verifying needs their boundaries and nothing else; the
//! nested core modules of a component are payload like any other. Reading
//! ranges instead of parsing into owned sections spares a copy of the
//! whole file on every start (an interpreter component is 18 MB).

use std::ops::Range;

/// The preamble of a core module and of a component (layer 1).
pub const MODULE_HEADER: [u8; 8] = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
pub const COMPONENT_HEADER: [u8; 8] = [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];

/// One top-level section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub id: u8,
    /// The whole section: id, size and payload.
    pub range: Range<usize>,
    /// Only the payload (for a custom section: after its name).
    pub payload: Range<usize>,
    /// A custom section's name (id 0), when it is UTF-8.
    pub name: Option<String>,
}

impl Section {
    pub fn is_custom(&self) -> bool {
        self.id == 0
    }

    /// Whether this is a custom section called `name`.
    pub fn is_named(&self, name: &str) -> bool {
        self.is_custom() && self.name.as_deref() == Some(name)
    }
}

/// The sections of `bytes`, or what makes it no WebAssembly binary.
pub fn split(bytes: &[u8]) -> Result<Vec<Section>, String> {
    let header = bytes
        .get(..8)
        .ok_or("the file is shorter than a WebAssembly header")?;
    if header != MODULE_HEADER && header != COMPONENT_HEADER {
        return Err("the file is not a WebAssembly component or module (bad header)".into());
    }
    let mut sections = Vec::new();
    let mut at = 8;
    while at < bytes.len() {
        let start = at;
        let id = bytes[at];
        at += 1;
        let size = leb128_u32(bytes, &mut at).ok_or_else(|| {
            format!(
                "section {} at byte {start} has a malformed size",
                sections.len()
            )
        })?;
        let end = at
            .checked_add(size as usize)
            .filter(|end| *end <= bytes.len())
            .ok_or_else(|| {
                format!(
                    "section {} at byte {start} runs past the end of the file",
                    sections.len()
                )
            })?;
        let mut payload = at..end;
        let mut name = None;
        if id == 0 {
            let mut inner = at;
            let length = leb128_u32(&bytes[..end], &mut inner)
                .ok_or_else(|| format!("custom section at byte {start} has a malformed name"))?;
            let name_end = inner
                .checked_add(length as usize)
                .filter(|name_end| *name_end <= end)
                .ok_or_else(|| format!("custom section at byte {start} has a name past its end"))?;
            name = std::str::from_utf8(&bytes[inner..name_end])
                .ok()
                .map(str::to_owned);
            payload = name_end..end;
        }
        sections.push(Section {
            id,
            range: start..end,
            payload,
            name,
        });
        at = end;
    }
    Ok(sections)
}

/// An unsigned LEB128 of at most 5 bytes that fits in 32 bits.
fn leb128_u32(bytes: &[u8], at: &mut usize) -> Option<u32> {
    let mut value: u64 = 0;
    for shift in 0..5 {
        let byte = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << (7 * shift);
        if byte & 0x80 == 0 {
            return u32::try_from(value).ok();
        }
    }
    None
}

/// The LEB128 encoding of `value`.
pub fn leb128(out: &mut Vec<u8>, mut value: usize) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// A custom section named `name` holding `payload`, serialised.
pub fn custom_section(name: &str, payload: &[u8]) -> Vec<u8> {
    let mut content = Vec::with_capacity(name.len() + payload.len() + 5);
    leb128(&mut content, name.len());
    content.extend_from_slice(name.as_bytes());
    content.extend_from_slice(payload);
    let mut out = Vec::with_capacity(content.len() + 6);
    out.push(0);
    leb128(&mut out, content.len());
    out.extend_from_slice(&content);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn component(sections: &[Vec<u8>]) -> Vec<u8> {
        let mut bytes = COMPONENT_HEADER.to_vec();
        for section in sections {
            bytes.extend_from_slice(section);
        }
        bytes
    }

    #[test]
    fn sections_are_found_with_their_names() {
        let bytes = component(&[custom_section("a", b"xyz"), vec![1, 2, 9, 9]]);
        let sections = split(&bytes).unwrap();
        assert_eq!(sections.len(), 2);
        assert!(sections[0].is_named("a"));
        assert_eq!(&bytes[sections[0].payload.clone()], b"xyz");
        assert_eq!(sections[1].id, 1);
        assert_eq!(&bytes[sections[1].payload.clone()], &[9, 9]);
        assert_eq!(sections[1].range.end, bytes.len());
    }

    #[test]
    fn truncated_and_foreign_files_are_refused() {
        let mut bytes = component(&[vec![1, 5, 0]]);
        assert!(
            split(&bytes).unwrap_err().contains("past the end"),
            "{:?}",
            split(&bytes)
        );
        bytes[4] = 2;
        assert!(split(&bytes).unwrap_err().contains("bad header"));
        assert!(split(b"\0asm").unwrap_err().contains("shorter"));
        let overlong = component(&[vec![1, 0x80, 0x80, 0x80, 0x80, 0x80, 0]]);
        assert!(split(&overlong).unwrap_err().contains("malformed size"));
    }
}
