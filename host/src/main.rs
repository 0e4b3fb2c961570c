//! `octet-wasm`: run a WebAssembly component as an octet extension.

use clap::{Args, Parser, Subcommand};
use octet_wasm::author;
use octet_wasm::author::metadata::DefaultLimits;
use octet_wasm::log::{self, Level};
use octet_wasm::policy::report::{Outcome, Requests};
use octet_wasm::policy::{self, Policy};
use octet_wasm::protocol::requests::server::{self, Options};
use octet_wasm::run_args::{CompileArgs, RunArgs, RuntimeArgs};
use octet_wasm::runtime::cache::Cache;
use octet_wasm::runtime::component_file::read_hashed;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "octet-wasm",
    version,
    about = "Run sandboxed WebAssembly components as octet extensions"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the octet extension wire on stdin/stdout (what octet launches).
    ///
    /// A relative COMPONENT resolves against OCTET_EXTENSION_DIR (octet runs
    /// a temporary copy of this binary, so its own location means nothing).
    Run(RunArgs),
    /// Compile a component into the compiled-component cache ahead of time
    /// (for install time), so the first `run` starts without compiling.
    Compile(CompileArgs),
    /// Play an octet session against an extension directory and print the
    /// exchange: the requests given (`--tool NAME --args JSON`, `--command
    /// NAME ARGS...`), else a tour of what the manifest declares. The host
    /// answers the extension's requests (artifacts, catalogs, policy,
    /// secrets, confirmations, input) as the flags say; `--record FILE`
    /// keeps the session for `replay`.
    Demo(octet_wasm::demo::DemoArgs),
    /// Play the host's side of a `demo --record` recording against a
    /// component (a new build) and report every frame of the extension that
    /// differs. Exit status 1 when one does.
    Replay(octet_wasm::demo::replay::ReplayArgs),
    /// Create an extension project (manifest, a hello tool, a build
    /// script) from the templates built into this binary.
    New(author::new::NewArgs),
    /// Build an extension project (Rust, Python, JavaScript or C, told by
    /// its files) into the component beside its extension.toml, installing
    /// the toolchain when missing, then check the pair.
    Build(author::build::BuildArgs),
    /// Where the guest SDKs are (`sdk path [LANG]`), and copying them out
    /// of a checkout (`sdk install`), so `new` projects build anywhere.
    Sdk(author::sdk::SdkArgs),
    /// Show what a component offers (tools with schemas, commands, hooks,
    /// ...), the WIT version it was built against, what it imports and the
    /// capabilities that implies, its size and SHA-256. Runs `describe`
    /// offline, in a sandbox with nothing in it.
    Inspect(author::inspect::InspectArgs),
    /// Write the extension.toml that matches a component, ready for octet.
    Manifest(author::manifest::ManifestArgs),
    /// Check a manifest (and its component) for everything octet or
    /// octet-wasm would reject at start-up (problems: exit status 1), for
    /// likely mistakes (warnings) and for capabilities the component
    /// imports but the manifest does not grant (notes: they fail inside the
    /// sandbox only if the code uses them).
    Check(author::check::CheckArgs),
    Sign(author::sign::SignArgs),
    Verify(author::sign::VerifyArgs),
    /// Store name, version, description, API version and default limits
    /// in the component's `octet-wasm-metadata` section, read by `manifest`
    /// and (limits) by `run` and `compile`.
    EmbedMetadata(author::metadata::EmbedArgs),
    /// Summarise usage receipts (written by `run` when the user's policy
    /// says `receipts = true`): a table per method with count, p50 and p99
    /// wall time, total CPU, the largest memory and how many requests ended
    /// in an error, a cancellation, a deadline or a trap.
    Receipts(ReceiptsArgs),
}

#[derive(Args)]
struct ReceiptsArgs {
    /// A receipts file, or an extension name (its newest file in
    /// ~/.local/state/octet-wasm/receipts) [default: every file there].
    target: Option<String>,
}

impl Command {
    /// The subcommand as the user types it.
    fn name(&self) -> &'static str {
        match self {
            Command::Run(_) => "run",
            Command::Compile(_) => "compile",
            Command::Demo(_) => "demo",
            Command::Replay(_) => "replay",
            Command::New(_) => "new",
            Command::Build(_) => "build",
            Command::Sdk(_) => "sdk",
            Command::Inspect(_) => "inspect",
            Command::Manifest(_) => "manifest",
            Command::Check(_) => "check",
            Command::Sign(_) => "sign",
            Command::Verify(_) => "verify",
            Command::EmbedMetadata(_) => "embed-metadata",
            Command::Receipts(_) => "receipts",
        }
    }
}

fn main() -> ExitCode {
    // `run` and `compile` are what octet may start, with the bundle's
    // environment: keep only `OCTET_*` before any library reads it.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|command| command == "run" || command == "compile")
    {
        octet_wasm::process_env::confine();
    }
    // The bundle can set OCTET_WASM_LOG too: it may ask for more detail, but
    // never hide the warnings and errors that tell the user what the shim
    // refused or clamped.
    if let Some(level) = std::env::var("OCTET_WASM_LOG")
        .ok()
        .as_deref()
        .and_then(Level::parse)
    {
        log::set_min_level(level.min(Level::Warning));
    }
    let cli = Cli::parse();
    // The manifest's args choose the subcommand, not only `run`'s options:
    // launched by octet, the other commands (which write files where their
    // arguments say, or print to the protocol stream) would act for the
    // bundle. Only `run` and `compile` (which does nothing `run` does not:
    // it fills the user's own authenticated cache) may start there.
    if !matches!(cli.command, Command::Run(_) | Command::Compile(_))
        && let Err(message) = author::refuse_under_octet(cli.command.name())
    {
        eprintln!("octet-wasm: error: {message}");
        return ExitCode::from(2);
    }
    match cli.command {
        Command::Run(args) => run(args),
        Command::Compile(args) => compile(args),
        Command::Demo(args) => match octet_wasm::demo::run(&args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => fail(&format!("demo failed: {err:#}")),
        },
        Command::Replay(args) => match octet_wasm::demo::replay::run(&args) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(1),
            Err(err) => fail(&format!("replay failed: {err:#}")),
        },
        Command::New(args) => author_tool("new", author::new::run(args)),
        Command::Build(args) => match author::build::run(args) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(1),
            Err(message) => author_tool("build", Err(message)),
        },
        Command::Sdk(args) => author_tool("sdk", author::sdk::run(args)),
        Command::Inspect(args) => author_tool("inspect", author::inspect::run(args)),
        Command::Manifest(args) => author_tool("manifest", author::manifest::run(args)),
        Command::EmbedMetadata(args) => {
            author_tool("embed-metadata", author::metadata::embed_command(args))
        }
        Command::Receipts(args) => author_tool("receipts", receipts(&args)),
        Command::Sign(args) => author_tool("sign", author::sign::sign(args)),
        Command::Verify(args) => match author::sign::verify(args) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(1),
            Err(message) => author_tool("verify", Err(message)),
        },
        Command::Check(args) => match author::check::run(args) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(1),
            Err(message) => author_tool("check", Err(message)),
        },
    }
}

/// Author tools talk to a person: errors are plain text on stderr.
fn author_tool(name: &str, outcome: Result<(), String>) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("octet-wasm {name}: error: {message}");
            ExitCode::from(2)
        }
    }
}

/// `receipts`: the table on stdout, lines that are not records on stderr.
fn receipts(args: &ReceiptsArgs) -> Result<(), String> {
    let files = octet_wasm::receipts::report::files(args.target.as_deref())?;
    let report = octet_wasm::receipts::report::report(&files);
    for problem in &report.problems {
        eprintln!("octet-wasm receipts: warning: {problem}");
    }
    for line in report.table.lines() {
        author::say(line);
    }
    Ok(())
}

/// Polls between timer/I/O checks on the shim's runtimes (see `run`).
const EVENT_INTERVAL: u32 = octet_wasm::protocol::requests::lanes::EVENT_INTERVAL;

fn resolve(component: &Path) -> PathBuf {
    if component.is_absolute() {
        return component.to_path_buf();
    }
    match std::env::var_os("OCTET_EXTENSION_DIR").filter(|dir| !dir.is_empty()) {
        Some(dir) => PathBuf::from(dir).join(component),
        None => component.to_path_buf(),
    }
}

/// The limits and deadlines: what the command line asks, else what the
/// component's metadata section asks (`embed-metadata`), each held to the
/// user's ceilings (the ceilings themselves where nothing is asked), with
/// every clamp logged.
fn outcome(policy: &Policy, asked: &Requests, defaults: &DefaultLimits) -> Result<Outcome, String> {
    let outcome = policy::report::outcome(policy, asked, &defaults.requests())?;
    for clamp in &outcome.clamps {
        clamp.log();
    }
    Ok(outcome)
}

/// The user's ceilings for this extension running the component whose
/// SHA-256 is `digest`, read once per command so that every clamp sees the
/// same file. The table is chosen by `OCTET_EXTENSION_NAME`, which octet
/// sets after the manifest's own environment, but to the manifest's own
/// `name`: any bundle can name itself after another extension. A table
/// with `sha256 = "..."` applies only to that component, so a bundle
/// cannot claim its ceilings (docs/security.md). `Err`: the file is there
/// but cannot be used, and the shim refuses to start (the error is
/// logged).
fn user_policy(digest: Option<&str>) -> Result<Policy, String> {
    let name = std::env::var("OCTET_EXTENSION_NAME")
        .ok()
        .filter(|name| !name.is_empty());
    policy::load_for_start(name.as_deref(), digest)
}

/// `run` under a policy file that cannot be used: the extension process
/// octet expects, which never loads the component and answers `initialize`
/// with `message` (the path a missing component takes), so octet shows the
/// extension as failed with the reason.
fn refuse_to_run(component: PathBuf, message: String) -> ExitCode {
    let built_in = Policy::built_in();
    let none = Requests::default();
    let Outcome {
        limits, deadlines, ..
    } = match policy::report::outcome(&built_in, &none, &none) {
        Ok(outcome) => outcome,
        Err(err) => return fail(&err),
    };
    let options = Options {
        component,
        limits,
        deadlines,
        cache: None,
        sha256: None,
    };
    serve(options, Err(message))
}

/// The default limits in the metadata section of a component's `bytes`. A
/// component that cannot be validated has none here; loading it reports
/// why.
fn metadata_limits(bytes: &[u8], component: &Path) -> DefaultLimits {
    match author::metadata::read(bytes) {
        Ok(Some(metadata)) => metadata.limits,
        Ok(None) => DefaultLimits::default(),
        Err(err) => {
            octet_wasm::log!(Level::Warning, "ignoring the component's metadata section",
                "path" => component.display().to_string(), "error" => format!("{err:#}"));
            DefaultLimits::default()
        }
    }
}

/// The cache for `run`: the user's, or none (with a warning saying why).
fn cache(args: &RuntimeArgs) -> Option<Cache> {
    match open_cache(args) {
        Ok(cache) => cache,
        Err(reason) => {
            octet_wasm::log!(Level::Warning, "compiled-component cache not used; every start compiles", "reason" => reason);
            None
        }
    }
}

/// Opens the user's compiled cache (`None` under `--no-cache`). The
/// manifest can pass `--cache-dir` and set `OCTET_WASM_CACHE_DIR`, so both
/// would let an extension choose which native code runs: they are reported
/// and ignored.
fn open_cache(args: &RuntimeArgs) -> Result<Option<Cache>, String> {
    let location = Cache::default_dir().map_or_else(
        || "nowhere (this user has no home directory in the user database)".to_owned(),
        |dir| dir.display().to_string(),
    );
    if let Some(dir) = &args.cache_dir {
        octet_wasm::log!(Level::Warning, "--cache-dir is no longer honoured and is ignored; the compiled cache is always the user's own (remove the flag from the manifest's args)",
            "cache_dir" => dir.display().to_string(), "cache" => location.clone());
    }
    if let Some(dir) = std::env::var_os("OCTET_WASM_CACHE_DIR") {
        octet_wasm::log!(Level::Warning, "OCTET_WASM_CACHE_DIR is ignored; the compiled cache is always the user's own",
            "OCTET_WASM_CACHE_DIR" => dir.to_string_lossy(), "cache" => location);
    }
    if args.no_cache {
        return Ok(None);
    }
    Cache::user().map(Some)
}

/// Whether the user's policy lets the component `file` run, by who signed
/// it; logs the signer (or why a signature proves nothing).
fn trusted(
    file: &octet_wasm::runtime::component_file::ComponentFile,
    path: &Path,
    policy: &Policy,
) -> Result<octet_wasm::signing::Accepted, String> {
    let digest = file.digest.hex();
    let started = std::time::Instant::now();
    let decision = octet_wasm::signing::decide(&file.bytes, &digest, &policy.trust);
    let verify_ms = started.elapsed().as_secs_f64() * 1000.0;
    let accepted = decision.map_err(|reason| format!("{}: {reason}", path.display()))?;
    if let Some(doubt) = &accepted.doubt {
        octet_wasm::log!(Level::Warning, "the component's signature proves nothing; it runs because the user's policy requires none",
            "path" => path.display().to_string(), "sha256" => digest.clone(), "reason" => doubt.clone());
    }
    if let Some(signer) = accepted.signer() {
        octet_wasm::log!(Level::Info, "component signed",
            "path" => path.display().to_string(), "sha256" => digest,
            "signer" => signer.fingerprint(), "comment" => signer.comment.clone(),
            "listed_publisher" => accepted.publisher.is_some(), "verify_ms" => verify_ms);
    } else {
        octet_wasm::log!(Level::Debug, "no verified signature on the component", "verify_ms" => verify_ms);
    }
    Ok(accepted)
}

fn fail(message: &str) -> ExitCode {
    octet_wasm::log!(Level::Error, message);
    ExitCode::from(2)
}

fn run(args: RunArgs) -> ExitCode {
    let component = resolve(&args.component);
    // Read once: the metadata section picks the limits here, and the
    // loader hashes and (on a cache miss) compiles the same bytes.
    let file = read_hashed(&component)
        .map_err(|err| format!("cannot read the component {}: {err}", component.display()));
    let digest = file.as_ref().ok().map(|read| read.digest.hex());
    let policy = match user_policy(digest.as_deref()) {
        Ok(policy) => policy,
        Err(message) => return refuse_to_run(component, message),
    };
    // Whose code it is, before any of it runs or is looked up compiled.
    let signer = match &file {
        Ok(read) => match trusted(read, &component, &policy) {
            Ok(accepted) => accepted.signer().cloned(),
            Err(message) => return refuse_to_run(component, message),
        },
        Err(_) => None,
    };
    let defaults = file.as_ref().map_or_else(
        |_| DefaultLimits::default(),
        |read| metadata_limits(&read.bytes, &component),
    );
    let Outcome {
        limits, deadlines, ..
    } = match outcome(&policy, &args.requests(), &defaults) {
        Ok(outcome) => outcome,
        Err(message) => return fail(&message),
    };
    if let Some(hex) = &args.sha256
        && let Err(message) = octet_wasm::run_args::check_sha256(hex)
    {
        return fail(&message);
    }
    if policy.ceilings.receipts {
        let name = std::env::var("OCTET_EXTENSION_NAME").ok();
        octet_wasm::receipts::want(name.as_deref(), signer.as_ref());
    }
    let options = Options {
        component,
        limits,
        deadlines,
        cache: cache(&args.runtime),
        sha256: args.sha256.clone(),
    };
    serve(options, file)
}

/// Serves the wire for `options` and the component `run` read (or why it
/// will not run one).
fn serve(
    options: Options,
    file: Result<octet_wasm::runtime::component_file::ComponentFile, String>,
) -> ExitCode {
    // One protocol thread: the server loop and the primary instance share
    // it (a request costs one wake-up); pools get their own workers.
    //
    // A busy guest yields at every epoch tick (10 ms) and is polled again at
    // once; checking timers and I/O only every `event_interval` polls
    // (tokio's default: 61) would delay deadlines and cancellations by up
    // to 610 ms, so the runtime looks at them every other poll.
    let mut builder = tokio::runtime::Builder::new_current_thread();
    octet_wasm::protocol::requests::lanes::cap_blocking_threads(&mut builder, "protocol", 0);
    let runtime = match builder.enable_all().event_interval(EVENT_INTERVAL).build() {
        Ok(runtime) => runtime,
        Err(err) => return fail(&format!("cannot start the async runtime: {err}")),
    };
    let code = runtime.block_on(server::serve(options, file));
    octet_wasm::receipts::finish();
    // A guest can leave threads blocked in the host (a FIFO it opened, a
    // read that never ends); dropping the runtime would wait for them.
    runtime.shutdown_background();
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

fn compile(args: CompileArgs) -> ExitCode {
    let path = resolve(&args.component);
    let file = match read_hashed(&path) {
        Ok(file) => file,
        Err(err) => return fail(&format!("cannot read {}: {err}", path.display())),
    };
    // The same limits `run` will use, so it finds this cache entry.
    let policy = match user_policy(Some(&file.digest.hex())) {
        Ok(policy) => policy,
        // Already logged: one error line, exit status 2 as for `fail`.
        Err(_) => return ExitCode::from(2),
    };
    if let Err(message) = trusted(&file, &path, &policy) {
        return fail(&message);
    }
    let defaults = metadata_limits(&file.bytes, &path);
    let limits = match outcome(&policy, &args.runtime.requests(), &defaults) {
        Ok(outcome) => outcome.limits,
        Err(message) => return fail(&message),
    };
    let cache = match open_cache(&args.runtime) {
        Ok(Some(cache)) => cache,
        Ok(None) => return fail("--no-cache leaves `compile` nothing to do"),
        Err(reason) => {
            return fail(&format!(
                "cannot use the compiled-component cache, so there is nowhere to compile into: {reason}"
            ));
        }
    };
    match octet_wasm::runtime::precompile(&file, &path, &limits, &cache) {
        Ok(entry) => {
            octet_wasm::log!(Level::Info, "component compiled into the cache", "path" => path.display().to_string(), "entry" => entry.display().to_string());
            ExitCode::SUCCESS
        }
        Err(err) => fail(&format!("{err:#}")),
    }
}
