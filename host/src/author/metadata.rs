//! Single-file metadata: a custom section `octet-wasm-metadata` holding JSON
//! (name, version, description, API version, default limits), so one `.wasm`
//! file carries what `manifest` writes and the limits `run` starts with.
//!
//! A custom section is just bytes anyone can append, so the whole component
//! is validated before the section is believed
//! (docs/choices.md#runtime-safeguards), and only the component's own
//! top-level section counts (never one inside a nested module or component).

use anyhow::{Context as _, bail};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::PathBuf;
use wasmparser::{Parser, Payload, Validator, WasmFeatures};

/// The custom section's name.
pub const SECTION: &str = "octet-wasm-metadata";

/// Largest section accepted: metadata is a few hundred bytes.
const MAX_SECTION_BYTES: usize = 64 * 1024;

/// What the section says. Every field but `name` and `version` is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metadata {
    pub name: String,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The wire version the manifest should select (`0.1`, `0.2` or `0.4`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    #[serde(default, skip_serializing_if = "DefaultLimits::is_empty")]
    pub limits: DefaultLimits,
}

/// Limits the extension asks `run` for, unless its command line asks for
/// others. The author writes them, so they are requests: `run` lowers each
/// one above the user's ceilings (`crate::policy`) to the ceiling.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DefaultLimits {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mib: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuel: Option<u64>,
    /// Deadline name (as `--deadline-ms` takes it) to milliseconds.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub deadlines: BTreeMap<String, u64>,
}

impl DefaultLimits {
    pub fn is_empty(&self) -> bool {
        self.memory_mib.is_none() && self.fuel.is_none() && self.deadlines.is_empty()
    }

    /// What these limits ask `run` for, in the terms the policy report
    /// weighs against the user's ceilings.
    pub fn requests(&self) -> crate::policy::report::Requests {
        crate::policy::report::Requests {
            memory_mib: self.memory_mib,
            fuel: self.fuel,
            deadlines: self.deadline_settings(),
        }
    }

    /// The deadlines as `--deadline-ms` settings.
    pub fn deadline_settings(&self) -> Vec<String> {
        self.deadlines
            .iter()
            .map(|(name, ms)| format!("{name}={ms}"))
            .collect()
    }
}

impl Metadata {
    /// Checks the values a manifest or `run` would use.
    pub fn check(&self) -> Result<(), String> {
        if self.name.trim().is_empty() {
            return Err("name must not be empty".into());
        }
        if !is_semver(&self.version) {
            return Err(format!(
                "version {:?} is not a semantic version (MAJOR.MINOR.PATCH)",
                self.version
            ));
        }
        if let Some(api) = &self.api_version
            && !["0.1", "0.2", "0.4"].contains(&api.as_str())
        {
            return Err(format!("api_version {api:?} is not 0.1, 0.2 or 0.4"));
        }
        if self.limits.memory_mib == Some(0) {
            return Err("limits.memory_mib must be at least 1".into());
        }
        let mut deadlines = crate::protocol::deadlines::Deadlines::default();
        for setting in self.limits.deadline_settings() {
            deadlines.set(&setting)?;
        }
        Ok(())
    }
}

/// Validates the whole component, then returns its metadata section, if any.
pub fn read(bytes: &[u8]) -> anyhow::Result<Option<Metadata>> {
    let Some(range) = locate(bytes)?.found else {
        return Ok(None);
    };
    validate(bytes)?;
    let payload = &bytes[range];
    if payload.len() > MAX_SECTION_BYTES {
        bail!(
            "the {SECTION} section has {} bytes; the limit is {MAX_SECTION_BYTES}",
            payload.len()
        );
    }
    let metadata: Metadata = serde_json::from_slice(payload)
        .with_context(|| format!("the {SECTION} section is not valid metadata JSON"))?;
    metadata
        .check()
        .map_err(|err| anyhow::anyhow!("the {SECTION} section: {err}"))?;
    Ok(Some(metadata))
}

/// Validates `bytes` as a WebAssembly component.
pub fn validate(bytes: &[u8]) -> anyhow::Result<()> {
    if !Parser::is_component(bytes) {
        bail!("not a WebAssembly component (a core module or another file)");
    }
    Validator::new_with_features(WasmFeatures::all())
        .validate_all(bytes)
        .map(|_| ())
        .map_err(|err| anyhow::anyhow!("not a valid WebAssembly component: {err}"))
}

/// Where the top-level metadata section is: its whole section (header
/// included) and its payload.
struct Located {
    found: Option<Range<usize>>,
    section: Option<Range<usize>>,
}

fn locate(bytes: &[u8]) -> anyhow::Result<Located> {
    let mut located = Located {
        found: None,
        section: None,
    };
    // Depth of nested modules and components: only depth 0 is ours.
    let mut depth = 0usize;
    // End of the previous top-level section (the version header is 8 bytes).
    let mut previous_end = 8usize;
    for payload in Parser::new(0).parse_all(bytes) {
        let payload =
            payload.map_err(|err| anyhow::anyhow!("cannot parse the component: {err}"))?;
        match &payload {
            Payload::ModuleSection {
                unchecked_range, ..
            }
            | Payload::ComponentSection {
                unchecked_range, ..
            } => {
                if depth == 0 {
                    previous_end = unchecked_range.end;
                }
                depth += 1;
                continue;
            }
            Payload::End(_) => {
                depth = depth.saturating_sub(1);
                continue;
            }
            _ => {}
        }
        if depth != 0 {
            continue;
        }
        if let Payload::CustomSection(reader) = &payload
            && reader.name() == SECTION
        {
            if located.found.is_some() {
                bail!("the component has more than one {SECTION} section");
            }
            located.found = Some(reader.data_offset()..reader.data_offset() + reader.data().len());
            located.section = Some(previous_end..reader.range().end);
        }
        if let Some((_, range)) = payload.as_section() {
            previous_end = range.end;
        }
    }
    Ok(located)
}

/// `bytes` with `metadata` as its (only) metadata section, validated.
pub fn embed(bytes: &[u8], metadata: &Metadata) -> anyhow::Result<Vec<u8>> {
    metadata.check().map_err(|err| anyhow::anyhow!("{err}"))?;
    if !matches!(
        crate::signing::examine(bytes),
        crate::signing::Examination::Unsigned
    ) {
        bail!(
            "the component is signed; embedding metadata would change signed sections and break the signature: embed the metadata first, then sign"
        );
    }
    validate(bytes)?;
    let mut out = bytes.to_vec();
    if let Some(section) = locate(bytes)?.section {
        out.drain(section);
    }
    let payload = serde_json::to_vec(metadata)?;
    out.extend_from_slice(&crate::signing::sections::custom_section(SECTION, &payload));
    validate(&out).context("the component with metadata does not validate")?;
    Ok(out)
}

/// `octet-wasm embed-metadata`.
#[derive(clap::Args)]
pub struct EmbedArgs {
    /// The component (.wasm); rewritten in place unless --out is given.
    component: PathBuf,
    /// Write the result here instead.
    #[arg(long, value_name = "PATH")]
    out: Option<PathBuf>,
    /// The extension's name (manifest `name`).
    #[arg(long)]
    name: String,
    /// The extension's version (semver, manifest `version`).
    #[arg(long)]
    version: String,
    /// One line for the manifest's `description`.
    #[arg(long)]
    description: Option<String>,
    /// The wire version `manifest` selects: 0.1, 0.2 or 0.4.
    #[arg(long, value_name = "VERSION")]
    api_version: Option<String>,
    /// Default linear memory per instance, in MiB (`run --memory-mib` wins;
    /// at most the user's ceiling, 256 MiB without a policy).
    #[arg(long, value_name = "MIB")]
    memory_mib: Option<usize>,
    /// Default fuel per call (`run --fuel` wins; at most the user's
    /// ceiling).
    #[arg(long, value_name = "UNITS")]
    fuel: Option<u64>,
    /// Default deadline, e.g. `render=300` (`run --deadline-ms` wins; at
    /// most the user's ceiling).
    #[arg(long = "deadline-ms", value_name = "NAME=MS")]
    deadlines: Vec<String>,
}

pub fn embed_command(args: EmbedArgs) -> Result<(), String> {
    let mut deadlines = BTreeMap::new();
    for setting in &args.deadlines {
        let (name, ms) = setting
            .split_once('=')
            .ok_or_else(|| format!("--deadline-ms expects NAME=MILLISECONDS, got {setting:?}"))?;
        let ms: u64 = ms
            .trim()
            .parse()
            .map_err(|_| format!("--deadline-ms {name}: {ms:?} is not a whole number"))?;
        deadlines.insert(name.trim().to_owned(), ms);
    }
    let metadata = Metadata {
        name: args.name,
        version: args.version,
        description: args.description,
        api_version: args.api_version,
        limits: DefaultLimits {
            memory_mib: args.memory_mib,
            fuel: args.fuel,
            deadlines,
        },
    };
    let bytes = std::fs::read(&args.component)
        .map_err(|err| format!("cannot read {}: {err}", args.component.display()))?;
    let out =
        embed(&bytes, &metadata).map_err(|err| format!("{}: {err:#}", args.component.display()))?;
    let target = args.out.unwrap_or(args.component);
    super::write_atomically(&target, &out)?;
    super::say(&format!(
        "wrote {} ({} bytes, sha256 {}) with {SECTION} {}",
        target.display(),
        out.len(),
        crate::runtime::cache::sha256_hex(&out),
        serde_json::to_string(&metadata).unwrap_or_default()
    ));
    // What users without a policy file will get instead.
    let built_in = crate::policy::Policy::built_in();
    let requests = crate::policy::report::Requests::default();
    if let Ok(outcome) =
        crate::policy::report::outcome(&built_in, &requests, &metadata.limits.requests())
    {
        for clamp in &outcome.clamps {
            super::say(&format!("note: without a policy file, {clamp}"));
        }
    }
    Ok(())
}

/// Whether `text` is a semantic version (`MAJOR.MINOR.PATCH[-pre][+build]`).
pub fn is_semver(text: &str) -> bool {
    let core = text.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        && !text.ends_with(['-', '+'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_guard_the_metadata_section() {
        assert!(crate::signing::verify::READ_BY_THE_SHIM.contains(&SECTION));
    }

    /// The smallest component: the preamble of the component encoding.
    const EMPTY: &[u8] = b"\0asm\x0d\0\x01\0";

    fn sample() -> Metadata {
        Metadata {
            name: "demo".into(),
            version: "1.2.3".into(),
            description: Some("A demo".into()),
            api_version: Some("0.2".into()),
            limits: DefaultLimits {
                memory_mib: Some(64),
                fuel: None,
                deadlines: BTreeMap::from([("render".into(), 300)]),
            },
        }
    }

    #[test]
    fn embeds_replaces_and_reads_back() {
        assert_eq!(read(EMPTY).unwrap(), None);
        let once = embed(EMPTY, &sample()).unwrap();
        assert_eq!(read(&once).unwrap(), Some(sample()));
        let mut other = sample();
        other.version = "2.0.0".into();
        let twice = embed(&once, &other).unwrap();
        assert_eq!(read(&twice).unwrap(), Some(other));
        assert_eq!(twice.len(), once.len());
    }

    #[test]
    fn refuses_bad_input() {
        assert!(embed(b"\0asm\x01\0\0\0", &sample()).is_err());
        let mut bad = sample();
        bad.version = "one".into();
        assert!(embed(EMPTY, &bad).is_err());
        bad = sample();
        bad.limits.deadlines.insert("forever".into(), 1);
        assert!(embed(EMPTY, &bad).is_err());
        // A section appended after garbage is never believed.
        let mut broken = embed(EMPTY, &sample()).unwrap();
        broken.splice(8..8, [0x7fu8, 0x01, 0x00]);
        assert!(read(&broken).is_err());
    }
}
