//! Signing and verifying small hand-made components, every way a
//! signature can be changed or moved.

use super::keys::{Publisher, SigningKey};
use super::sections::{COMPONENT_HEADER, custom_section};
use super::sign::sign;
use super::trust::{TrustPolicy, decide, vouch};
use super::verify::{Examination, KeyVerdict, examine};

fn key(seed: u8, comment: &str) -> SigningKey {
    let pair = ed25519_compact::KeyPair::from_seed(ed25519_compact::Seed::new([seed; 32]));
    let secret: [u8; 64] = pair.sk.as_ref().try_into().unwrap();
    let key: [u8; 32] = pair.pk.as_ref().try_into().unwrap();
    SigningKey {
        secret,
        publisher: Publisher {
            key,
            comment: comment.into(),
        },
    }
}

/// A component-shaped file: a "core module" section (id 1) and a custom
/// section, which is all a signature looks at.
fn component() -> Vec<u8> {
    let mut bytes = COMPONENT_HEADER.to_vec();
    bytes.extend_from_slice(&[1, 4, 0xde, 0xad, 0xbe, 0xef]);
    bytes.extend_from_slice(&custom_section("name", b"probe"));
    bytes
}

fn signature_section(bytes: &[u8]) -> std::ops::Range<usize> {
    super::sections::split(bytes).unwrap()[0].range.clone()
}

fn required(publishers: &[&SigningKey]) -> TrustPolicy {
    TrustPolicy {
        publishers: publishers.iter().map(|k| k.publisher.clone()).collect(),
        required_by: Some("trust.require_signature".into()),
    }
}

fn refusal(bytes: &[u8], policy: &TrustPolicy) -> String {
    decide(bytes, "d1g3st", policy).unwrap_err()
}

#[test]
fn a_signed_component_is_accepted_by_its_signer_only() {
    let (alice, bob) = (key(1, "alice"), key(2, "bob"));
    let signed = sign(&component(), &alice).unwrap();
    let accepted = decide(&signed, "d", &required(&[&alice])).unwrap();
    assert_eq!(accepted.publisher.as_ref().unwrap().comment, "alice");
    assert_eq!(accepted.signers.len(), 1);
    let refused = refusal(&signed, &required(&[&bob]));
    assert!(
        refused.contains("which the publishers list does not name"),
        "{refused}"
    );
    assert!(
        refused.contains(&alice.publisher.fingerprint()),
        "{refused}"
    );
    assert!(
        refused.contains("d1g3st") && refused.contains("trust.require_signature"),
        "{refused}"
    );
}

#[test]
fn unsigned_components_are_refused_only_when_required() {
    let refused = refusal(&component(), &required(&[&key(1, "a")]));
    assert!(refused.contains("is not signed"), "{refused}");
    let free = decide(&component(), "d", &TrustPolicy::default()).unwrap();
    assert_eq!(free.signer(), None);
    assert_eq!(free.doubt, None);
}

#[test]
fn signing_is_deterministic_and_keeps_earlier_signers() {
    let (alice, bob) = (key(1, "alice"), key(2, "bob"));
    let once = sign(&component(), &alice).unwrap();
    assert_eq!(once, sign(&component(), &alice).unwrap());
    let twice = sign(&once, &bob).unwrap();
    for signer in [&alice, &bob] {
        assert!(decide(&twice, "d", &required(&[signer])).is_ok());
    }
    assert!(sign(&once, &alice).unwrap_err().contains("already signed"));
    let Examination::Signed(signatures) = examine(&twice) else {
        panic!("signed")
    };
    assert_eq!(signatures.verified_signers().len(), 2);
}

#[test]
fn a_changed_byte_anywhere_signed_is_refused() {
    let alice = key(1, "alice");
    let signed = sign(&component(), &alice).unwrap();
    let code = signed
        .windows(4)
        .position(|w| w == [0xde, 0xad, 0xbe, 0xef])
        .unwrap();
    let mut changed = signed.clone();
    changed[code] ^= 1;
    let refused = refusal(&changed, &required(&[&alice]));
    assert!(refused.contains("were changed"), "{refused}");
    // The signature section is first; its last byte is the signature's.
    let sig_end = signature_section(&signed).end;
    let mut forged = signed.clone();
    forged[sig_end - 1] ^= 1;
    let refused = refusal(&forged, &required(&[&alice]));
    assert!(
        refused.contains("do not verify") || refused.contains("broken"),
        "{refused}"
    );
}

#[test]
fn appended_custom_sections_keep_the_signature_but_nothing_else_does() {
    let alice = key(1, "alice");
    let signed = sign(&component(), &alice).unwrap();
    let mut appended = signed.clone();
    appended.extend_from_slice(&custom_section("producers", b"packager"));
    assert!(decide(&appended, "d", &required(&[&alice])).is_ok());
    let mut code = signed.clone();
    code.extend_from_slice(&[1, 2, 0, 0]);
    assert!(refusal(&code, &required(&[&alice])).contains("code was added"));
    let mut limits = signed.clone();
    limits.extend_from_slice(&custom_section(crate::author::metadata::SECTION, b"{}"));
    assert!(refusal(&limits, &required(&[&alice])).contains("were changed"));
}

#[test]
fn a_moved_or_second_signature_section_is_broken() {
    let alice = key(1, "alice");
    let signed = sign(&component(), &alice).unwrap();
    let section = signed[signature_section(&signed)].to_vec();
    let mut moved = component();
    moved.extend_from_slice(&section);
    assert!(refusal(&moved, &required(&[&alice])).contains("moved"));
    let mut doubled = signed.clone();
    doubled.extend_from_slice(&section);
    assert!(refusal(&doubled, &required(&[&alice])).contains("2 signature sections"));
    // Not required: it runs, and the log says the signature proves nothing.
    let free = decide(&doubled, "d", &TrustPolicy::default()).unwrap();
    assert!(free.doubt.unwrap().contains("broken"));
}

#[test]
fn a_claimed_signer_counts_only_when_its_signature_verifies() {
    let (alice, mallory) = (key(1, "alice"), key(3, "mallory"));
    let signed = sign(&component(), &mallory).unwrap();
    // Mallory's signature with Alice's key line as its key id.
    let forged = {
        let mut text = signed.clone();
        let from = mallory.publisher.line();
        let to = Publisher {
            comment: "mallory".into(),
            ..alice.publisher.clone()
        }
        .line();
        assert_eq!(from.len(), to.len());
        let at = text
            .windows(from.len())
            .position(|w| w == from.as_bytes())
            .unwrap();
        text[at..at + to.len()].copy_from_slice(to.as_bytes());
        text
    };
    let Examination::Signed(signatures) = examine(&forged) else {
        panic!("signed")
    };
    assert!(signatures.verified_signers().is_empty());
    assert_eq!(signatures.found()[0].verdict, KeyVerdict::NotSigned);
    assert!(vouch(&examine(&forged), std::slice::from_ref(&alice.publisher)).is_err());
    assert!(vouch(&examine(&forged), std::slice::from_ref(&mallory.publisher)).is_ok());
}
