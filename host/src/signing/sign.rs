//! Adding a signature to a component (`octet-wasm sign`).

use super::keys::SigningKey;
use super::sections::{self, custom_section};
use super::verify::{self, DELIMITER_SECTION, Examination, KeyVerdict};
use sha2::{Digest, Sha256};

/// `bytes` signed by `key`, keeping every signature already there (several
/// signers may sign the same sections).
///
/// The signed sections end with a `signature_delimiter` section, so custom
/// sections appended later (by a packager, say) leave the signature
/// verifiable. Its content is derived from what precedes it rather than
/// random, so signing the same bytes with the same key always gives the
/// same file (Ed25519 signatures are deterministic too): a `--sha256` pin
/// taken after signing survives signing again.
pub fn sign(bytes: &[u8], key: &SigningKey) -> Result<Vec<u8>, String> {
    if let Examination::Malformed(reason) = verify::examine(bytes) {
        return Err(format!(
            "the component's signature section is broken: {reason}; remove it before signing again"
        ));
    }
    let sections = sections::split(bytes)?;
    let mut input = bytes.to_vec();
    if !sections
        .last()
        .is_some_and(|last| last.is_named(DELIMITER_SECTION))
    {
        let marker: [u8; 16] = Sha256::digest(bytes)[..16].try_into().expect("16 bytes");
        input.extend_from_slice(&custom_section(DELIMITER_SECTION, &marker));
    }
    let module = wasmsign2::Module::deserialize(&mut input.as_slice())
        .map_err(|err| format!("cannot read the component's sections: {err}"))?;
    let mut secret = vec![0x81u8];
    secret.extend_from_slice(&key.secret);
    let secret = wasmsign2::SecretKey::from_bytes(&secret)
        .map_err(|err| format!("the key cannot sign: {err}"))?;
    let key_id = key.publisher.line().into_bytes();
    let (signed, _) = secret
        .sign_multi(module, Some(&key_id), false, false)
        .map_err(|err| match err {
            wasmsign2::WSError::DuplicateSignature => {
                format!("the component is already signed by {}", key.publisher)
            }
            other => format!("cannot sign: {other}"),
        })?;
    let mut out = Vec::with_capacity(input.len() + 512);
    signed
        .serialize(&mut out)
        .map_err(|err| format!("cannot write the signed component: {err}"))?;
    // What was written must verify with the key that signed it.
    match verify::examine(&out) {
        Examination::Signed(signatures)
            if signatures.verdict(&key.publisher.key) == KeyVerdict::Covers =>
        {
            Ok(out)
        }
        other => Err(format!(
            "the signed component does not verify ({other:?}); nothing was written"
        )),
    }
}
