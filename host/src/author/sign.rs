//! `octet-wasm sign` and `octet-wasm verify`: a publisher's signature on a
//! component, and checking one against the keys a user trusts.

use super::say;
use crate::signing::keys::{self, Publisher, SigningKey};
use crate::signing::verify::KeyVerdict;
use crate::signing::{Examination, TrustPolicy};

use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct SignArgs {
    /// The component (.wasm); rewritten in place unless --out is given.
    component: PathBuf,
    /// The signer's OpenSSH Ed25519 private key (`ssh-keygen -t ed25519`).
    #[arg(long, value_name = "PRIVATE_KEY")]
    key: PathBuf,
    /// Write the signed component here instead.
    #[arg(long, value_name = "PATH")]
    out: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct VerifyArgs {
    /// The component (.wasm).
    component: PathBuf,
    /// A trusted key: a public key line, a `.pub` file, or an
    /// allowed_signers file. Repeat for several.
    #[arg(long, value_name = "PUBLIC_KEY_OR_FILE", required = true, num_args = 1..)]
    publisher: Vec<String>,
}

pub fn sign(args: SignArgs) -> Result<(), String> {
    let key = SigningKey::load(&args.key)?;
    let bytes = std::fs::read(&args.component)
        .map_err(|err| format!("cannot read {}: {err}", args.component.display()))?;
    let signed = crate::signing::sign::sign(&bytes, &key)
        .map_err(|err| format!("{}: {err}", args.component.display()))?;
    let target = args.out.unwrap_or(args.component);
    super::write_atomically(&target, &signed)?;
    say(&format!(
        "signed {} by {} (sha256 {})",
        target.display(),
        key.publisher,
        crate::runtime::cache::sha256_hex(&signed)
    ));
    say(&format!("publisher key: {}", key.publisher.line()));
    Ok(())
}

/// Exit status 0 with the signer when a listed key signed the component; 1
/// with the reason otherwise (`Ok(false)`).
pub fn verify(args: VerifyArgs) -> Result<bool, String> {
    let mut publishers = Vec::new();
    for value in &args.publisher {
        publishers.extend(publishers_of(value)?);
    }
    let bytes = std::fs::read(&args.component)
        .map_err(|err| format!("cannot read {}: {err}", args.component.display()))?;
    let digest = crate::runtime::cache::sha256_hex(&bytes);
    let examination = crate::signing::examine(&bytes);
    match crate::signing::vouch(&examination, &publishers) {
        Ok(accepted) => {
            let signer = accepted.publisher.expect("a vouching publisher");
            say(&format!(
                "verified: {} is signed by {signer}",
                args.component.display()
            ));
            Ok(true)
        }
        Err(problem) => {
            eprintln!(
                "octet-wasm verify: {} (sha256 {digest}) {problem} (the keys given with --publisher)",
                args.component.display()
            );
            Ok(false)
        }
    }
}

/// The keys one `--publisher` value names: a key line, or a file of key
/// lines (`.pub`, `authorized_keys` style) or of allowed_signers lines.
fn publishers_of(value: &str) -> Result<Vec<Publisher>, String> {
    if value.trim_start().starts_with("ssh-") {
        return Publisher::parse_line(value).map(|key| vec![key]);
    }
    let path = Path::new(value);
    let text = std::fs::read_to_string(path).map_err(|err| {
        format!("--publisher {value}: neither a key line nor a readable file: {err}")
    })?;
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .collect();
    if lines.iter().all(|line| line.starts_with("ssh-")) {
        return lines
            .into_iter()
            .map(|line| Publisher::parse_line(line).map_err(|err| format!("{value}: {err}")))
            .collect();
    }
    let (keys, skipped) = keys::parse_allowed_signers(&text)
        .map_err(|(line, err)| format!("{value}, line {line}: {err}"))?;
    for skip in skipped {
        eprintln!(
            "octet-wasm verify: {value}, line {}: not trusted: {}",
            skip.line, skip.reason
        );
    }
    Ok(keys)
}

/// Lines for `inspect` and `check`: who signed, and whether the user's
/// policy accepts it.
pub fn report_lines(examination: &Examination, digest: &str, trust: &TrustPolicy) -> Vec<String> {
    let mut lines = Vec::new();
    match examination {
        Examination::Unsigned => lines.push("signature    none".to_owned()),
        Examination::Malformed(reason) => lines.push(format!("signature    broken: {reason}")),
        Examination::Signed(signatures) => {
            for found in signatures.found() {
                let verdict = match found.verdict {
                    KeyVerdict::Covers => "verified",
                    KeyVerdict::Changed => "signed sections changed since signing",
                    KeyVerdict::NotSigned => "does not verify",
                };
                let who = found
                    .claimed
                    .map_or_else(|| "an unnamed key".to_owned(), |key| key.to_string());
                lines.push(format!("signed by    {who}: {verdict}"));
            }
        }
    }
    lines.push(format!(
        "trust        {}",
        verdict_line(examination, digest, trust)
    ));
    lines
}

/// Whether `run` accepts the component under `trust`, in one line.
pub fn verdict_line(examination: &Examination, digest: &str, trust: &TrustPolicy) -> String {
    match crate::signing::decide_on(examination, digest, trust) {
        Ok(accepted) => match (&trust.required_by, &accepted.publisher) {
            (Some(key), Some(publisher)) => {
                format!("accepted: signed by listed publisher {publisher} ({key})")
            }
            (_, Some(publisher)) => {
                format!("runs (no signature required); signed by listed publisher {publisher}")
            }
            _ => "runs (the user's policy requires no signature)".to_owned(),
        },
        Err(reason) => format!("refused by `run`: {reason}"),
    }
}

/// The signature part of `inspect --json`.
pub fn report_json(
    examination: &Examination,
    digest: &str,
    trust: &TrustPolicy,
) -> serde_json::Value {
    let signers: Vec<serde_json::Value> = match examination {
        Examination::Signed(signatures) => signatures
            .found()
            .into_iter()
            .map(|found| {
                serde_json::json!({
                    "fingerprint": found.claimed.as_ref().map(Publisher::fingerprint),
                    "comment": found.claimed.as_ref().map(|key| key.comment.clone()),
                    "key": found.claimed.as_ref().map(Publisher::line),
                    "verified": found.verdict == KeyVerdict::Covers,
                })
            })
            .collect(),
        _ => Vec::new(),
    };
    let decision = crate::signing::decide_on(examination, digest, trust);
    serde_json::json!({
        "signed": matches!(examination, Examination::Signed(_)),
        "broken": match examination { Examination::Malformed(reason) => Some(reason.clone()), _ => None },
        "signers": signers,
        "required_by": trust.required_by,
        "accepted": decision.is_ok(),
        "refusal": decision.err(),
    })
}
