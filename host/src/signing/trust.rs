//! Whether the user's policy lets a component run, by who signed it.

use super::keys::Publisher;
use super::verify::{self, Examination, KeyVerdict};

/// What the user's policy says about signatures (`[trust]`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustPolicy {
    /// The keys the user trusts to publish extensions.
    pub publishers: Vec<Publisher>,
    /// The policy key that requires a signature by one of them, when one
    /// does (`trust.require_signature`, or an extension table's).
    pub required_by: Option<String>,
}

impl TrustPolicy {
    pub fn requires_signature(&self) -> bool {
        self.required_by.is_some()
    }
}

/// Who signed a component that may run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Accepted {
    /// Every signer whose signature covers the component.
    pub signers: Vec<Publisher>,
    /// The listed publisher among them, if any.
    pub publisher: Option<Publisher>,
    /// Why a signature that is there proves nothing (the component runs
    /// anyway when the policy requires none).
    pub doubt: Option<String>,
}

impl Accepted {
    /// The signer to name in logs and receipts: the listed publisher, else
    /// the first verified signer.
    pub fn signer(&self) -> Option<&Publisher> {
        self.publisher.as_ref().or(self.signers.first())
    }
}

/// Whether `bytes` (whose SHA-256 is `digest`) may run under `policy`;
/// the error is the whole refusal, naming the digest, the signers and the
/// policy key.
pub fn decide(bytes: &[u8], digest: &str, policy: &TrustPolicy) -> Result<Accepted, String> {
    decide_on(&verify::examine(bytes), digest, policy)
}

/// [`decide`] for a component already examined.
pub fn decide_on(
    examination: &Examination,
    digest: &str,
    policy: &TrustPolicy,
) -> Result<Accepted, String> {
    let (accepted, problem) = judge(examination, &policy.publishers);
    match (&policy.required_by, problem) {
        (Some(key), Some(problem)) => Err(format!(
            "the component (sha256 {digest}) {problem}; the user's policy requires a signature by a listed publisher ({key}, {} key{} in the publishers list); refusing to run it",
            policy.publishers.len(),
            if policy.publishers.len() == 1 {
                ""
            } else {
                "s"
            },
        )),
        (None, problem) => Ok(Accepted {
            doubt: problem.filter(|_| !matches!(examination, Examination::Unsigned)),
            ..accepted
        }),
        (Some(_), None) => Ok(accepted),
    }
}

/// Whether one of `publishers` signed everything that runs in the
/// examined component; the error says what keeps them from vouching for it
/// ("is not signed", "is signed by X, which the publishers list does not
/// name", ...), to follow the component's name.
pub fn vouch(examination: &Examination, publishers: &[Publisher]) -> Result<Accepted, String> {
    match judge(examination, publishers) {
        (accepted, None) => Ok(accepted),
        (_, Some(problem)) => Err(problem),
    }
}

/// Who signed, and what keeps the listed publishers from vouching for it
/// (`None`: one of them does).
fn judge(examination: &Examination, publishers: &[Publisher]) -> (Accepted, Option<String>) {
    let signatures = match examination {
        Examination::Unsigned => return (Accepted::default(), Some("is not signed".into())),
        Examination::Malformed(reason) => {
            return (
                Accepted::default(),
                Some(format!("has a broken signature: {reason}")),
            );
        }
        Examination::Signed(signatures) => signatures,
    };
    let signers = signatures.verified_signers();
    let mut changed = None;
    for publisher in publishers {
        match signatures.verdict(&publisher.key) {
            KeyVerdict::Covers => {
                let accepted = Accepted {
                    signers,
                    publisher: Some(publisher.clone()),
                    doubt: None,
                };
                return (accepted, None);
            }
            KeyVerdict::Changed => changed = changed.or(Some(publisher.clone())),
            KeyVerdict::NotSigned => {}
        }
    }
    let problem = if let Some(publisher) = changed {
        format!(
            "was signed by {publisher}, but the sections it signed were changed, or code was added after signing"
        )
    } else if !signers.is_empty() {
        let names: Vec<String> = signers.iter().map(ToString::to_string).collect();
        format!(
            "is signed by {}, which the publishers list does not name",
            names.join(", ")
        )
    } else {
        describe_unverified(signatures)
    };
    (
        Accepted {
            signers,
            publisher: None,
            doubt: None,
        },
        Some(problem),
    )
}

/// The problem with a signature section none of whose signatures covers
/// the component.
fn describe_unverified(signatures: &verify::Signatures) -> String {
    let found = signatures.found();
    if let Some(changed) = found
        .iter()
        .find(|f| f.verdict == KeyVerdict::Changed)
        .and_then(|f| f.claimed.as_ref())
    {
        return format!(
            "was signed by {changed}, but the sections it signed were changed, or code was added after signing"
        );
    }
    let claims: Vec<String> = found
        .iter()
        .filter_map(|f| f.claimed.as_ref().map(ToString::to_string))
        .collect();
    if claims.is_empty() {
        format!(
            "has {} signature{} naming no key that verifies",
            found.len(),
            if found.len() == 1 { "" } else { "s" }
        )
    } else {
        format!(
            "has signatures that do not verify (they claim {})",
            claims.join(", ")
        )
    }
}
