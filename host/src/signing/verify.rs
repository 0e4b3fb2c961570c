//! What a component's signatures prove.
//!
//! The format is the WebAssembly tool conventions' signature (the
//! `wasmsign2` crate's): a `signature` custom section first, holding sets
//! of SHA-256 hashes and Ed25519 signatures over them. Each hash covers
//! every section from the start up to a `signature_delimiter` custom
//! section (or to the end), so a signed prefix stays verifiable when
//! sections are appended after signing.
//!
//! Appending is where a signature is weakest, so what may follow the signed
//! prefix is narrowed here: only custom sections, and none the shim reads
//! (its metadata section chooses limits) or that looks like a signature.
//! Everything wasmtime compiles or runs (every core module, instance,
//! import, export and start section) is inside what the key signed.
//!
//! The verification reads the bytes already in memory (the ones that are
//! compiled or looked up in the cache), so nothing can change between the
//! check and the use.

use super::keys::Publisher;
use super::sections::{self, Section};
use sha2::{Digest, Sha256};
use wasmsign2::{SignatureData, SignedHashes};

pub const SIGNATURE_SECTION: &str = "signature";
pub const DELIMITER_SECTION: &str = "signature_delimiter";

/// The tool conventions' constants: the message signed is
/// `"wasmsig" ‖ version ‖ content type ‖ hash function ‖ hashes`.
const DOMAIN: &[u8] = b"wasmsig";
const VERSION: u8 = 0x01;
const CONTENT_TYPE: u8 = 0x01;
const HASH_SHA256: u8 = 0x01;

/// Custom sections that may not be appended after signing: the shim reads
/// them (`author::metadata::SECTION` chooses limits; a test there keeps
/// the two in step).
pub const READ_BY_THE_SHIM: &[&str] = &["octet-wasm-metadata"];

/// What the signature section of a component holds.
#[derive(Debug)]
pub enum Examination {
    /// No signature section.
    Unsigned,
    /// The signature section is there but cannot be what a signer wrote:
    /// not first, more than one, or not readable.
    Malformed(String),
    Signed(Signatures),
}

/// A readable signature section, with the hashes of the component's
/// signable prefixes.
#[derive(Debug)]
pub struct Signatures {
    sets: Vec<SignedHashes>,
    /// The hash at every place a signature may end, and whether everything
    /// after it may be left unsigned.
    prefixes: Vec<([u8; 32], bool)>,
}

/// What one key's signatures prove about the component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyVerdict {
    /// The key signed everything that runs.
    Covers,
    /// The key made a valid signature, but over sections that are no longer
    /// all there (changed, moved, or code added after signing).
    Changed,
    /// No signature by this key.
    NotSigned,
}

/// One signature as found, with the signer it claims (the key travels in
/// the signature's key id, written by `octet-wasm sign`).
#[derive(Debug, Clone)]
pub struct Found {
    /// The claimed signer, when the key id is a key line.
    pub claimed: Option<Publisher>,
    /// What the claimed key's signatures prove (`NotSigned`: the signature
    /// is not that key's, or claims none).
    pub verdict: KeyVerdict,
}

pub fn examine(bytes: &[u8]) -> Examination {
    let sections = match sections::split(bytes) {
        Ok(sections) => sections,
        Err(err) => return Examination::Malformed(err),
    };
    let headers: Vec<usize> = sections
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_named(SIGNATURE_SECTION))
        .map(|(index, _)| index)
        .collect();
    match headers.as_slice() {
        [] => return Examination::Unsigned,
        [0] => {}
        [first] => {
            return Examination::Malformed(format!(
                "the signature section is section {first}, not the first one (it was moved)"
            ));
        }
        many => {
            return Examination::Malformed(format!(
                "the component has {} signature sections; a signed component has one, first",
                many.len()
            ));
        }
    }
    let data = match SignatureData::deserialize(&bytes[sections[0].payload.clone()]) {
        Ok(data) => data,
        Err(err) => {
            return Examination::Malformed(format!("the signature section cannot be read: {err}"));
        }
    };
    if data.specification_version != VERSION
        || data.content_type != CONTENT_TYPE
        || data.hash_function != HASH_SHA256
    {
        return Examination::Malformed(format!(
            "the signature section is of an unsupported kind (version {}, content type {}, hash function {})",
            data.specification_version, data.content_type, data.hash_function
        ));
    }
    Examination::Signed(Signatures {
        sets: data.signed_hashes_set,
        prefixes: prefixes(bytes, &sections[1..]),
    })
}

/// The cumulative hash at each delimiter (and at the end, when the last
/// section is no delimiter), as the signer computed them, each with
/// whether what follows may stay unsigned.
fn prefixes(bytes: &[u8], sections: &[Section]) -> Vec<([u8; 32], bool)> {
    // From the back: whether every section after index i may be unsigned.
    let mut tail_ok = vec![true; sections.len() + 1];
    for i in (0..sections.len()).rev() {
        tail_ok[i] = tail_ok[i + 1] && may_follow_unsigned(&sections[i]);
    }
    let mut hasher = Sha256::new();
    let mut out = Vec::new();
    for (i, section) in sections.iter().enumerate() {
        hasher.update(&bytes[section.range.clone()]);
        let last = i + 1 == sections.len();
        if section.is_named(DELIMITER_SECTION) || last {
            out.push((hasher.clone().finalize().into(), tail_ok[i + 1]));
        }
    }
    if sections.is_empty() {
        out.push((hasher.finalize().into(), true));
    }
    out
}

fn may_follow_unsigned(section: &Section) -> bool {
    section.is_custom()
        && !section.is_named(SIGNATURE_SECTION)
        && !section
            .name
            .as_deref()
            .is_some_and(|name| READ_BY_THE_SHIM.contains(&name))
}

impl Signatures {
    /// What `key`'s signatures prove.
    pub fn verdict(&self, key: &[u8; 32]) -> KeyVerdict {
        let Ok(public) = ed25519_compact::PublicKey::from_slice(key) else {
            return KeyVerdict::NotSigned;
        };
        let mut verdict = KeyVerdict::NotSigned;
        for set in &self.sets {
            if !set
                .signatures
                .iter()
                .any(|s| signs(&public, set, &s.signature))
            {
                continue;
            }
            if self.covers(set) {
                return KeyVerdict::Covers;
            }
            verdict = KeyVerdict::Changed;
        }
        verdict
    }

    /// Whether `set` holds the hash of a prefix after which nothing needs a
    /// signature.
    fn covers(&self, set: &SignedHashes) -> bool {
        self.prefixes
            .iter()
            .any(|(hash, tail_ok)| *tail_ok && set.hashes.iter().any(|h| h == hash))
    }

    /// Every signature with the signer it claims.
    pub fn found(&self) -> Vec<Found> {
        let mut found = Vec::new();
        for set in &self.sets {
            for signature in &set.signatures {
                let claimed = signature
                    .key_id
                    .as_deref()
                    .and_then(|id| std::str::from_utf8(id).ok())
                    .and_then(|line| Publisher::parse_line(line).ok());
                let verdict = match &claimed {
                    Some(publisher) => self.verdict(&publisher.key),
                    None => KeyVerdict::NotSigned,
                };
                found.push(Found { claimed, verdict });
            }
        }
        found
    }

    /// The signers whose signatures cover the component, once each.
    pub fn verified_signers(&self) -> Vec<Publisher> {
        let mut signers: Vec<Publisher> = Vec::new();
        for found in self.found() {
            if let (KeyVerdict::Covers, Some(publisher)) = (found.verdict, found.claimed)
                && !signers.iter().any(|known| known.key == publisher.key)
            {
                signers.push(publisher);
            }
        }
        signers
    }
}

fn signs(public: &ed25519_compact::PublicKey, set: &SignedHashes, signature: &[u8]) -> bool {
    let Ok(signature) = ed25519_compact::Signature::from_slice(signature) else {
        return false;
    };
    let mut message = Vec::with_capacity(DOMAIN.len() + 3 + 32 * set.hashes.len());
    message.extend_from_slice(DOMAIN);
    message.extend_from_slice(&[VERSION, CONTENT_TYPE, HASH_SHA256]);
    for hash in &set.hashes {
        message.extend_from_slice(hash);
    }
    public.verify(&message, &signature).is_ok()
}
