//! Publisher identities: OpenSSH Ed25519 public key lines, the way
//! developers already publish them (`~/.ssh/id_ed25519.pub`, a forge's
//! `/<user>.keys`, git's `allowed_signers`).

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use sha2::{Digest, Sha256};
use std::fmt;
use std::path::Path;

const KEY_TYPE: &str = "ssh-ed25519";

/// The longest comment kept from a key line: it travels inside every
/// signature a key makes, and the bundle controls what it claims.
const MAX_COMMENT: usize = 200;

/// An Ed25519 public key and the comment its line carried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Publisher {
    pub key: [u8; 32],
    pub comment: String,
}

impl Publisher {
    /// Reads `ssh-ed25519 <base64> [comment]`.
    pub fn parse_line(line: &str) -> Result<Publisher, String> {
        let mut fields = line.split_whitespace();
        let kind = fields.next().ok_or("the key line is empty")?;
        if kind != KEY_TYPE {
            return Err(format!(
                "`{}` is not an ssh-ed25519 public key line (only Ed25519 keys sign components: `ssh-keygen -t ed25519`)",
                shorten(line)
            ));
        }
        let blob = fields
            .next()
            .ok_or("the key line has no key after `ssh-ed25519`")?;
        let blob = STANDARD
            .decode(blob)
            .map_err(|err| format!("the key is not valid base64: {err}"))?;
        let key = key_from_blob(&blob)?;
        let comment: String = fields.collect::<Vec<_>>().join(" ");
        Ok(Publisher {
            key,
            comment: clean_comment(&comment),
        })
    }

    /// The key's OpenSSH wire form (what the base64 of a key line holds).
    fn blob(&self) -> Vec<u8> {
        let mut blob = Vec::with_capacity(51);
        for part in [KEY_TYPE.as_bytes(), &self.key] {
            blob.extend_from_slice(&(part.len() as u32).to_be_bytes());
            blob.extend_from_slice(part);
        }
        blob
    }

    /// `SHA256:...`, as `ssh-keygen -l` prints it.
    pub fn fingerprint(&self) -> String {
        format!(
            "SHA256:{}",
            STANDARD_NO_PAD.encode(Sha256::digest(self.blob()))
        )
    }

    /// The public key line.
    pub fn line(&self) -> String {
        let base = format!("{KEY_TYPE} {}", STANDARD.encode(self.blob()));
        if self.comment.is_empty() {
            base
        } else {
            format!("{base} {}", self.comment)
        }
    }
}

impl fmt::Display for Publisher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.fingerprint())?;
        if !self.comment.is_empty() {
            write!(f, " ({})", self.comment)?;
        }
        Ok(())
    }
}

fn key_from_blob(blob: &[u8]) -> Result<[u8; 32], String> {
    let mut at = 0;
    let mut field = || -> Result<&[u8], String> {
        let length = blob
            .get(at..at + 4)
            .ok_or("the key is truncated")?
            .try_into()
            .map(u32::from_be_bytes)
            .map_err(|_| "the key is truncated")? as usize;
        let value = blob
            .get(at + 4..at + 4 + length)
            .ok_or("the key is truncated")?;
        at += 4 + length;
        Ok(value)
    };
    if field()? != KEY_TYPE.as_bytes() {
        return Err("the key's own type is not ssh-ed25519".into());
    }
    let key: [u8; 32] = field()?
        .try_into()
        .map_err(|_| "an Ed25519 key has 32 bytes")?;
    if at != blob.len() {
        return Err("the key has bytes after its end".into());
    }
    Ok(key)
}

/// A comment as it may be shown: one line, printable, bounded.
fn clean_comment(comment: &str) -> String {
    comment
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_COMMENT)
        .collect()
}

fn shorten(text: &str) -> String {
    let text: String = text.chars().filter(|c| !c.is_control()).take(40).collect();
    if text.len() < 40 {
        text
    } else {
        format!("{text}...")
    }
}

/// One line of an `allowed_signers` file that names no Ed25519 key
/// octet-wasm can trust, and why: it is left out (trusting less).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub line: usize,
    pub reason: String,
}

/// The Ed25519 keys of an `allowed_signers` file (`ssh-keygen -Y`'s format:
/// `principals [options] keytype key [comment]`). Lines of other key
/// types, and lines whose options restrict the key in ways octet-wasm does
/// not check (a certificate authority, validity dates, namespaces without
/// `octet-wasm`), are skipped; a line that is no key line at all is an
/// error (`line`, message), since the user meant something by it.
pub fn parse_allowed_signers(
    text: &str,
) -> Result<(Vec<Publisher>, Vec<Skipped>), (usize, String)> {
    let mut keys = Vec::new();
    let mut skipped = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields = split_fields(line).map_err(|err| (number, err))?;
        let Some(at) = fields.iter().position(|f| is_key_type(f)) else {
            return Err((
                number,
                "no key type (such as ssh-ed25519) on the line".into(),
            ));
        };
        if at == 0 {
            return Err((number, "the line names no principal before its key".into()));
        }
        if fields[at] != KEY_TYPE {
            skipped.push(Skipped {
                line: number,
                reason: format!("{} keys do not sign components", fields[at]),
            });
            continue;
        }
        if let Some(reason) = fields[1..at].iter().find_map(|o| unsupported_option(o)) {
            skipped.push(Skipped {
                line: number,
                reason,
            });
            continue;
        }
        let key_line = fields[at..].join(" ");
        let mut publisher = Publisher::parse_line(&key_line).map_err(|err| (number, err))?;
        if publisher.comment.is_empty() {
            publisher.comment = clean_comment(&fields[0]);
        }
        keys.push(publisher);
    }
    Ok((keys, skipped))
}

fn is_key_type(field: &str) -> bool {
    field.starts_with("ssh-") || field.starts_with("ecdsa-") || field.starts_with("sk-")
}

/// Why an option keeps a line's key from being trusted, if it does.
fn unsupported_option(options: &str) -> Option<String> {
    let mut list = Vec::new();
    let (mut quoted, mut start) = (false, 0);
    for (at, c) in options.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => {
                list.push(&options[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    list.push(&options[start..]);
    for option in list {
        let (name, value) = option.split_once('=').unwrap_or((option, ""));
        match name.to_ascii_lowercase().as_str() {
            "namespaces" => {
                let value = value.trim_matches('"');
                if !value.split(',').any(|ns| ns == "octet-wasm") {
                    return Some(format!(
                        "its namespaces (\"{value}\") do not include octet-wasm"
                    ));
                }
            }
            other => return Some(format!("the option `{other}` is not supported")),
        }
    }
    None
}

/// Whitespace-separated fields, with double quotes keeping an option's
/// value (`namespaces="git,file"`) together.
fn split_fields(line: &str) -> Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                field.push(c);
            }
            c if c.is_whitespace() && !quoted => {
                if !field.is_empty() {
                    fields.push(std::mem::take(&mut field));
                }
            }
            c => field.push(c),
        }
    }
    if quoted {
        return Err("a quote is not closed".into());
    }
    if !field.is_empty() {
        fields.push(field);
    }
    Ok(fields)
}

/// An author's private key: an unencrypted OpenSSH Ed25519 key file.
pub struct SigningKey {
    /// The 64-byte Ed25519 secret (seed and public key).
    pub secret: [u8; 64],
    pub publisher: Publisher,
}

impl SigningKey {
    /// Reads the key at `path`; the comment comes from `path.pub` when that
    /// holds the same key (OpenSSH keeps it there too).
    pub fn load(path: &Path) -> Result<SigningKey, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|err| format!("cannot read the key {}: {err}", path.display()))?;
        if text.trim_start().starts_with(KEY_TYPE) {
            return Err(format!(
                "{} is a public key; sign with the private key (the file without .pub)",
                path.display()
            ));
        }
        let keys = ssh_keys::openssh::parse_private_key(&text).map_err(|err| match err {
            ssh_keys::Error::Encrypted => format!(
                "{} is protected by a passphrase; sign with a key without one (for example a signing key made with `ssh-keygen -t ed25519 -N '' -f KEY`)",
                path.display()
            ),
            other => format!(
                "{} is not an OpenSSH private key: {other}",
                path.display()
            ),
        })?;
        let secret = keys
            .into_iter()
            .find_map(|key| match key {
                ssh_keys::PrivateKey::Ed25519(secret) => Some(secret),
                _ => None,
            })
            .ok_or_else(|| {
                format!(
                    "{} holds no Ed25519 key (only `ssh-keygen -t ed25519` keys sign components)",
                    path.display()
                )
            })?;
        let key: [u8; 32] = secret[32..].try_into().expect("64-byte secret");
        let mut pub_path = path.as_os_str().to_owned();
        pub_path.push(".pub");
        let comment = std::fs::read_to_string(&pub_path)
            .ok()
            .and_then(|line| Publisher::parse_line(&line).ok())
            .filter(|public| public.key == key)
            .map(|public| public.comment)
            .unwrap_or_default();
        Ok(SigningKey {
            secret,
            publisher: Publisher { key, comment },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line() -> String {
        Publisher {
            key: [7; 32],
            comment: "author@example".into(),
        }
        .line()
    }

    #[test]
    fn a_key_line_round_trips_with_its_fingerprint() {
        let line = line();
        assert!(
            line.starts_with("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI"),
            "{line}"
        );
        let publisher = Publisher::parse_line(&line).unwrap();
        assert_eq!(publisher.comment, "author@example");
        assert_eq!(publisher.key, [7; 32]);
        assert_eq!(publisher.line(), line);
        assert!(publisher.fingerprint().starts_with("SHA256:"));
        assert_eq!(publisher.fingerprint().len(), 7 + 43);
    }

    #[test]
    fn malformed_key_lines_say_what_is_wrong() {
        let err = |line: &str| Publisher::parse_line(line).unwrap_err();
        assert!(err("ssh-rsa AAAAB3NzaC1yc2E").contains("not an ssh-ed25519"));
        assert!(err("ssh-ed25519").contains("no key"));
        assert!(err("ssh-ed25519 !!!").contains("base64"));
        assert!(err("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5").contains("truncated"));
        assert!(err("").contains("empty"));
    }

    #[test]
    fn allowed_signers_keep_ed25519_keys_and_skip_what_they_cannot_check() {
        let line = line();
        let key = line.split_whitespace().nth(1).unwrap();
        let text = format!(
            "# team\nalice@example ssh-ed25519 {key}\n\
             bob@example namespaces=\"git\" ssh-ed25519 {key}\n\
             carol@example namespaces=\"git,octet-wasm\" ssh-ed25519 {key} carol\n\
             dave@example cert-authority ssh-ed25519 {key}\n\
             erin@example ssh-rsa AAAAB3NzaC1yc2E\n"
        );
        let (keys, skipped) = parse_allowed_signers(&text).unwrap();
        assert_eq!(keys.len(), 2);
        assert_eq!(keys[0].comment, "alice@example");
        assert_eq!(keys[1].comment, "carol");
        let lines: Vec<usize> = skipped.iter().map(|s| s.line).collect();
        assert_eq!(lines, [3, 5, 6]);
        assert_eq!(parse_allowed_signers("just words\n").unwrap_err().0, 1);
        assert_eq!(
            parse_allowed_signers(&format!("ssh-ed25519 {key}\n"))
                .unwrap_err()
                .0,
            1
        );
    }
}
