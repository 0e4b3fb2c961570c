//! Signed components (issue 25): the user's policy decides whose code runs.
//!
//! Keys are made by `ssh-keygen -t ed25519`, components signed by the real
//! `octet-wasm sign`, and every start runs the real binary in a private
//! home holding the user's policy. Attacker-written bundles change signed
//! bytes, forge, move and double signature sections, append code or
//! metadata after signing, and try to lift the requirement from the
//! bundle's side (its name, its args, its environment, its files).

use crate::support::{
    PrivateHome, Shim, component, expect_error, probe_manifest, shim_binary, stderr_text, tool_text,
};
use octet_hostsim::ApiVersion;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use tempfile::TempDir;

/// Ed25519 key pairs made by ssh-keygen, by name.
struct Keys {
    dir: TempDir,
}

impl Keys {
    fn new(names: &[&str]) -> Keys {
        let dir = tempfile::tempdir().expect("a key directory");
        for name in names {
            let status = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-C"])
                .arg(format!("{name}@example"))
                .arg("-f")
                .arg(dir.path().join(name))
                .status()
                .expect("ssh-keygen runs (openssh-client, installed by scripts/test)");
            assert!(status.success(), "ssh-keygen failed");
        }
        Keys { dir }
    }

    fn private(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn public_file(&self, name: &str) -> PathBuf {
        self.dir.path().join(format!("{name}.pub"))
    }

    fn line(&self, name: &str) -> String {
        std::fs::read_to_string(self.public_file(name))
            .expect("the public key")
            .trim()
            .to_owned()
    }

    /// `ssh-keygen -l`'s fingerprint of `name`'s key.
    fn fingerprint(&self, name: &str) -> String {
        let out = Command::new("ssh-keygen")
            .arg("-lf")
            .arg(self.public_file(name))
            .output()
            .expect("ssh-keygen -l");
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .nth(1)
            .expect("a fingerprint")
            .to_owned()
    }
}

/// `octet-wasm ARGS` outside octet: exit code, stdout, stderr.
fn tool(args: &[&std::ffi::OsStr]) -> (Option<i32>, String, String) {
    let out = Command::new(shim_binary())
        .args(args)
        .env_remove("OCTET_EXTENSION_NAME")
        .output()
        .expect("octet-wasm runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `input` signed by `key` into a new file in `dir`.
fn sign(input: &Path, key: &Path, dir: &Path, name: &str) -> PathBuf {
    let out = dir.join(name);
    let (code, stdout, stderr) = tool(&[
        "sign".as_ref(),
        input.as_os_str(),
        "--key".as_ref(),
        key.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    assert_eq!(code, Some(0), "sign failed: {stdout}{stderr}");
    assert!(stdout.contains("signed"), "{stdout}");
    out
}

/// The sections of a WebAssembly file: (id, byte range), as the shim
/// splits them.
fn sections(bytes: &[u8]) -> Vec<(u8, std::ops::Range<usize>)> {
    octet_wasm::signing::sections::split(bytes)
        .expect("a WebAssembly file")
        .into_iter()
        .map(|section| (section.id, section.range))
        .collect()
}

use octet_wasm::signing::sections::custom_section;

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write a component");
    path
}

fn sha256(bytes: &[u8]) -> String {
    octet_wasm::runtime::cache::sha256_hex(bytes)
}

/// `run` of `component` (copied into a fresh extension directory) in
/// `home`, with `extra_args` and `env` from the bundle's manifest.
fn start(home: &PrivateHome, component: &Path, extra_args: &[&str], env: &[(&str, &str)]) -> Shim {
    let dirs = tempfile::tempdir().expect("a temporary directory");
    let extension_dir = dirs.path().join("extension");
    std::fs::create_dir_all(&extension_dir).unwrap();
    std::fs::copy(component, extension_dir.join("ext.wasm")).expect("copy the component");
    let manifest = probe_manifest(ApiVersion::V0_2);
    let mut args = vec!["run", "ext.wasm"];
    args.extend_from_slice(extra_args);
    std::fs::write(
        extension_dir.join("extension.toml"),
        manifest.to_extension_toml("octet-wasm", &args),
    )
    .unwrap();
    Shim::start_wrapped(
        dirs,
        &extension_dir,
        "ext.wasm",
        manifest,
        extra_args,
        env,
        &home.wrapper(),
    )
}

/// Starts `component` and expects it to serve a tool call.
fn assert_runs(home: &PrivateHome, component: &Path) -> Shim {
    let mut shim = start(home, component, &[], &[]);
    shim.initialize();
    let reply = shim.tool("echo", json!({"text": "signed"}));
    assert!(
        tool_text(&reply).contains("signed"),
        "{}",
        stderr_text(&shim)
    );
    shim
}

/// Starts `component` and expects `initialize` to be refused before any
/// guest code ran; returns the error message.
fn assert_refused(home: &PrivateHome, component: &Path) -> String {
    let mut shim = start(home, component, &[], &[]);
    let params = shim.init_params();
    let reply = shim.initialize_with(params);
    let message = expect_error(&reply).message.clone();
    let digest = sha256(&std::fs::read(component).unwrap());
    assert!(message.contains(&digest), "names the digest: {message}");
    assert!(
        message.contains("require_signature"),
        "names the policy key: {message}"
    );
    let loaded = shim
        .stderr()
        .lines()
        .iter()
        .any(|line| line.message() == Some("component loaded"));
    assert!(!loaded, "the component was loaded:\n{}", stderr_text(&shim));
    shim.shutdown();
    message
}

fn require(home: &PrivateHome, publishers: &[String]) {
    let list: Vec<String> = publishers.iter().map(|p| format!("{p:?}")).collect();
    home.write_policy(&format!(
        "[trust]\npublishers = [{}]\nrequire_signature = true\n",
        list.join(", ")
    ));
}

struct Fixture {
    keys: Keys,
    dir: TempDir,
    unsigned: PathBuf,
    alice: PathBuf,
}

fn fixture() -> Fixture {
    let keys = Keys::new(&["alice", "bob"]);
    let dir = tempfile::tempdir().unwrap();
    let unsigned = write(
        dir.path(),
        "probe.wasm",
        &std::fs::read(component("probe")).unwrap(),
    );
    let alice = sign(&unsigned, &keys.private("alice"), dir.path(), "alice.wasm");
    Fixture {
        keys,
        dir,
        unsigned,
        alice,
    }
}

#[test]
fn a_component_signed_by_a_listed_publisher_runs_and_its_signer_is_logged() {
    let f = fixture();
    let home = PrivateHome::new();
    require(&home, &[f.keys.line("alice")]);
    let mut shim = assert_runs(&home, &f.alice);
    let signed = shim
        .stderr()
        .wait_for(Duration::from_secs(5), |l| {
            l.message() == Some("component signed")
        })
        .unwrap_or_else(|| panic!("no signer record:\n{}", stderr_text(&shim)));
    assert_eq!(
        signed.field("signer").and_then(|v| v.as_str()),
        Some(f.keys.fingerprint("alice").as_str()),
        "the fingerprint ssh-keygen -l prints"
    );
    assert_eq!(signed.field("listed_publisher"), Some(&json!(true)));
    shim.shutdown();
}

#[test]
fn unsigned_wrong_key_and_changed_components_are_refused_before_any_code_runs() {
    let f = fixture();
    let home = PrivateHome::new();
    require(&home, &[f.keys.line("bob")]);
    let message = assert_refused(&home, &f.unsigned);
    assert!(message.contains("is not signed"), "{message}");
    let message = assert_refused(&home, &f.alice);
    assert!(
        message.contains(&f.keys.fingerprint("alice"))
            && message.contains("which the publishers list does not name"),
        "{message}"
    );

    require(&home, &[f.keys.line("alice")]);
    let bytes = std::fs::read(&f.alice).unwrap();
    let all = sections(&bytes);
    // A byte of the first core module (section id 1) flipped.
    let (_, code) = all
        .iter()
        .find(|(id, _)| *id == 1)
        .expect("a core module")
        .clone();
    let mut changed = bytes.clone();
    changed[code.start + code.len() / 2] ^= 0x01;
    let message = assert_refused(&home, &write(f.dir.path(), "changed.wasm", &changed));
    assert!(message.contains("were changed"), "{message}");
    // A byte of the signature itself flipped (its last byte is the signature's).
    let signature = all[0].1.clone();
    let mut forged = bytes.clone();
    forged[signature.end - 1] ^= 0x01;
    let message = assert_refused(&home, &write(f.dir.path(), "forged.wasm", &forged));
    assert!(
        message.contains("do not verify") || message.contains("broken"),
        "{message}"
    );
}

#[test]
fn a_moved_or_duplicated_signature_section_is_refused() {
    let f = fixture();
    let home = PrivateHome::new();
    require(&home, &[f.keys.line("alice")]);
    let bytes = std::fs::read(&f.alice).unwrap();
    let signature = sections(&bytes)[0].1.clone();
    let mut moved = bytes[..8].to_vec();
    moved.extend_from_slice(&bytes[signature.end..]);
    moved.extend_from_slice(&bytes[signature.clone()]);
    let message = assert_refused(&home, &write(f.dir.path(), "moved.wasm", &moved));
    assert!(message.contains("moved"), "{message}");
    let mut doubled = bytes.clone();
    doubled.extend_from_slice(&bytes[signature]);
    let message = assert_refused(&home, &write(f.dir.path(), "doubled.wasm", &doubled));
    assert!(message.contains("2 signature sections"), "{message}");
}

#[test]
fn custom_sections_added_after_signing_are_accepted_code_and_metadata_are_not() {
    let f = fixture();
    let home = PrivateHome::new();
    require(&home, &[f.keys.line("alice")]);
    let bytes = std::fs::read(&f.alice).unwrap();
    let mut packaged = bytes.clone();
    packaged.extend_from_slice(&custom_section("producers-note", b"repackaged by a mirror"));
    assert_runs(&home, &write(f.dir.path(), "packaged.wasm", &packaged)).shutdown();

    // The metadata section chooses limits: not appendable.
    let mut limits = bytes.clone();
    limits.extend_from_slice(&custom_section(
        "octet-wasm-metadata",
        br#"{"name":"probe","version":"1.0.0","limits":{"memory_mib":4}}"#,
    ));
    let message = assert_refused(&home, &write(f.dir.path(), "limits.wasm", &limits));
    assert!(message.contains("were changed"), "{message}");

    // A second copy of a signed non-custom section, appended: code added.
    let (_, last_code) = sections(&bytes)
        .into_iter()
        .rfind(|(id, _)| *id != 0)
        .expect("a non-custom section");
    let mut code = bytes.clone();
    code.extend_from_slice(&bytes[last_code]);
    let message = assert_refused(&home, &write(f.dir.path(), "code.wasm", &code));
    assert!(message.contains("code was added"), "{message}");
}

#[test]
fn two_signers_where_one_is_listed_are_accepted() {
    let f = fixture();
    let home = PrivateHome::new();
    let both = sign(&f.alice, &f.keys.private("bob"), f.dir.path(), "both.wasm");
    require(&home, &[f.keys.line("bob")]);
    assert_runs(&home, &both).shutdown();
    // The publishers file form, from the home (`~/`), in git's allowed_signers format.
    let signers = home.home().join(".ssh/allowed_signers");
    std::fs::create_dir_all(signers.parent().unwrap()).unwrap();
    std::fs::write(
        &signers,
        format!(
            "# the team\nalice@example namespaces=\"git,octet-wasm\" {}\n",
            f.keys.line("alice")
        ),
    )
    .unwrap();
    require(&home, &["~/.ssh/allowed_signers".into()]);
    assert_runs(&home, &both).shutdown();
    let message = assert_refused(&home, &f.unsigned);
    assert!(message.contains("1 key"), "{message}");
}

#[test]
fn a_cached_compilation_never_stands_in_for_a_signature() {
    let f = fixture();
    let home = PrivateHome::new();
    // Compiled into the cache while no signature was required: the
    // stripped component (the signed one with its signature section cut)
    // and the signed one.
    let bytes = std::fs::read(&f.alice).unwrap();
    let signature = sections(&bytes)[0].1.clone();
    let mut stripped = bytes[..8].to_vec();
    stripped.extend_from_slice(&bytes[signature.end..]);
    let stripped = write(f.dir.path(), "stripped.wasm", &stripped);
    for path in [&stripped, &f.alice] {
        let status = home
            .shim_command()
            .arg("compile")
            .arg(path)
            .status()
            .expect("compile");
        assert!(status.success());
    }
    require(&home, &[f.keys.line("alice")]);
    let message = assert_refused(&home, &stripped);
    assert!(message.contains("is not signed"), "{message}");
    let mut shim = assert_runs(&home, &f.alice);
    let loaded = shim
        .stderr()
        .wait_for(Duration::from_secs(5), |l| {
            l.message() == Some("component loaded")
        })
        .expect("loaded");
    assert_eq!(
        loaded.field("source"),
        Some(&json!("cache")),
        "the signed one is cached"
    );
    shim.shutdown();
    // `compile` refuses the stripped one too.
    let out = home
        .shim_command()
        .arg("compile")
        .arg(&stripped)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not signed"));
}

#[test]
fn nothing_in_the_bundle_lifts_the_requirement_or_adds_a_publisher() {
    let f = fixture();
    let home = PrivateHome::new();
    // The extension's own table says no signature is needed, but it is not
    // pinned to this component: any bundle can call itself "probe".
    home.write_policy(&format!(
        "[trust]\npublishers = [{:?}]\nrequire_signature = true\n\n[extension.probe.trust]\nrequire_signature = false\n",
        f.keys.line("bob")
    ));
    let message = assert_refused(&home, &f.unsigned);
    assert!(message.contains("trust.require_signature"), "{message}");
    // Flags, variables and files the bundle ships do not add Alice.
    let bundle_dir = f.dir.path().join("bundle-keys");
    std::fs::create_dir_all(&bundle_dir).unwrap();
    std::fs::copy(
        f.keys.public_file("alice"),
        bundle_dir.join("allowed_signers"),
    )
    .unwrap();
    let line = f.keys.line("alice");
    let mut shim = start(
        &home,
        &f.alice,
        &[],
        &[
            ("OCTET_WASM_PUBLISHERS", line.as_str()),
            ("OCTET_WASM_TRUST", "none"),
            ("OCTET_WASM_REQUIRE_SIGNATURE", "false"),
        ],
    );
    let params = shim.init_params();
    let reply = shim.initialize_with(params);
    assert!(expect_error(&reply).message.contains("does not name"));
    shim.shutdown();
    // A run flag that does not exist is an error, not a way around.
    let mut shim = start(&home, &f.alice, &["--publisher", &line], &[]);
    let status = shim.exit_status(Duration::from_secs(10));
    assert_eq!(status.code(), Some(2), "an unknown flag starts nothing");
    drop(shim);

    // Pinned to this exact component, the user's own table lifts it.
    let digest = sha256(&std::fs::read(&f.unsigned).unwrap());
    home.write_policy(&format!(
        "[trust]\nrequire_signature = true\n\n[extension.probe]\nsha256 = \"{digest}\"\n[extension.probe.trust]\nrequire_signature = false\n"
    ));
    assert_runs(&home, &f.unsigned).shutdown();
}

#[test]
fn malformed_trust_values_refuse_to_start_with_the_key() {
    let f = fixture();
    let home = PrivateHome::new();
    for (text, expect) in [
        (
            "[trust]\npublishers = [\"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ\"]\n",
            "trust.publishers",
        ),
        (
            "[trust]\npublishers = [\"ssh-ed25519 AAAA!!\"]\n",
            "trust.publishers",
        ),
        (
            "[trust]\npublishers = \"ssh-ed25519 x\"\n",
            "trust.publishers",
        ),
        (
            "[trust]\nrequire_signature = \"yes\"\n",
            "trust.require_signature",
        ),
        ("[trust]\nrequire_signatures = true\n", "require_signatures"),
        (
            "[trust]\npublishers = [\"~/missing-signers\"]\n",
            "does not exist",
        ),
    ] {
        home.write_policy(text);
        let mut shim = start(&home, &f.alice, &[], &[]);
        let params = shim.init_params();
        let reply = shim.initialize_with(params);
        let message = expect_error(&reply).message.clone();
        assert!(message.contains(expect), "{text}: {message}");
        shim.shutdown();
    }
    // A publishers file others can write is no policy.
    use std::os::unix::fs::PermissionsExt;
    let signers = home.home().join("signers");
    std::fs::write(
        &signers,
        format!("alice@example {}\n", f.keys.line("alice")),
    )
    .unwrap();
    std::fs::set_permissions(&signers, std::fs::Permissions::from_mode(0o666)).unwrap();
    require(&home, &["~/signers".into()]);
    let mut shim = start(&home, &f.alice, &[], &[]);
    let params = shim.init_params();
    let reply = shim.initialize_with(params);
    let message = expect_error(&reply).message.clone();
    assert!(
        message.contains("signers") && message.contains("writable"),
        "{message}"
    );
    shim.shutdown();
}

#[test]
fn without_a_requirement_nothing_changes_and_the_signer_is_logged() {
    let f = fixture();
    let home = PrivateHome::new();
    assert_runs(&home, &f.unsigned).shutdown();
    let mut shim = assert_runs(&home, &f.alice);
    let signed = shim
        .stderr()
        .wait_for(Duration::from_secs(5), |l| {
            l.message() == Some("component signed")
        })
        .expect("the signer is logged");
    assert_eq!(signed.field("listed_publisher"), Some(&json!(false)));
    shim.shutdown();
}

#[test]
fn verify_inspect_and_check_name_the_signers() {
    let f = fixture();
    let (code, stdout, _) = tool(&[
        "verify".as_ref(),
        f.alice.as_os_str(),
        "--publisher".as_ref(),
        f.keys.public_file("alice").as_os_str(),
    ]);
    assert_eq!(code, Some(0));
    assert!(
        stdout.contains(&f.keys.fingerprint("alice")) && stdout.contains("alice@example"),
        "{stdout}"
    );
    let line = f.keys.line("bob");
    let (code, _, stderr) = tool(&[
        "verify".as_ref(),
        f.alice.as_os_str(),
        "--publisher".as_ref(),
        line.as_ref(),
    ]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("does not name"), "{stderr}");
    let (code, _, stderr) = tool(&[
        "verify".as_ref(),
        f.unsigned.as_os_str(),
        "--publisher".as_ref(),
        "ssh-ed25519 nonsense".as_ref(),
    ]);
    assert_eq!(code, Some(2), "a malformed key is an error: {stderr}");

    let home = PrivateHome::new();
    require(&home, &[f.keys.line("alice")]);
    let out = home
        .shim_command()
        .arg("inspect")
        .arg(&f.alice)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "signed by    {} (alice@example): verified",
            f.keys.fingerprint("alice")
        )),
        "{text}"
    );
    assert!(text.contains("trust        accepted"), "{text}");
    let out = home
        .shim_command()
        .args(["inspect", "--json"])
        .arg(&f.unsigned)
        .output()
        .unwrap();
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).expect("inspect --json");
    assert_eq!(value["signature"]["signed"], json!(false));
    assert_eq!(value["signature"]["accepted"], json!(false));
    assert!(
        value["signature"]["refusal"]
            .as_str()
            .unwrap()
            .contains("is not signed")
    );

    // `manifest` leaves the signed component as it is and pins its digest.
    let before = std::fs::read(&f.alice).unwrap();
    let manifest = f.dir.path().join("signed.toml");
    let out = home
        .shim_command()
        .arg("manifest")
        .arg(&f.alice)
        .arg("--out")
        .arg(&manifest)
        .arg("--pin")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(&f.alice).unwrap(),
        before,
        "manifest changed the component"
    );
    let text = std::fs::read_to_string(&manifest).unwrap();
    assert!(text.contains(&sha256(&before)), "{text}");

    let dir = f.dir.path();
    std::fs::copy(&f.unsigned, dir.join("ext.wasm")).unwrap();
    std::fs::write(
        dir.join("extension.toml"),
        probe_manifest(ApiVersion::V0_2).to_extension_toml("octet-wasm", &["run", "ext.wasm"]),
    )
    .unwrap();
    let out = home
        .shim_command()
        .arg("check")
        .arg(dir.join("extension.toml"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("problem:") && text.contains("signature") && text.contains("is not signed"),
        "{text}"
    );
}

#[test]
fn octet_wasm_build_signs_when_the_author_names_a_key() {
    let keys = Keys::new(&["author"]);
    let dir = crate::old_scaffolds::project("v4", "rust");
    let key = keys.private("author");
    let (output, log) = crate::old_scaffolds::run_in(dir.path(), &shim_binary(), &["build", "."]);
    assert!(output.status.success(), "{log}");
    let unsigned = dir.path().join("greeter.wasm");
    let (code, _, _) = tool(&[
        "verify".as_ref(),
        unsigned.as_os_str(),
        "--publisher".as_ref(),
        keys.public_file("author").as_os_str(),
    ]);
    assert_eq!(code, Some(1), "not signed without the variable");
    let output = Command::new(shim_binary())
        .args(["build", "."])
        .current_dir(dir.path())
        .env("OCTET_WASM_SIGNING_KEY", &key)
        .env("CARGO_NET_OFFLINE", "true")
        .env(
            "CARGO_TARGET_DIR",
            crate::support::repo_root().join("target/guest-build"),
        )
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{log}");
    assert!(
        log.contains("signing") && log.contains("author@example"),
        "{log}"
    );
    let (code, stdout, stderr) = tool(&[
        "verify".as_ref(),
        unsigned.as_os_str(),
        "--publisher".as_ref(),
        keys.public_file("author").as_os_str(),
    ]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
}
