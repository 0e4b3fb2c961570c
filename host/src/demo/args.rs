//! `octet-wasm demo`'s command line. `--tool NAME --args JSON` and
//! `--command NAME ARGS...` form a script played in the order given, which
//! clap's derive cannot see, so [`Script`] reads the positions itself.

use super::services::Answers;
use clap::{Arg, ArgAction, ArgMatches};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct DemoArgs {
    /// The extension directory (holding extension.toml).
    #[arg(default_value = "examples/hello-world")]
    pub extension_dir: PathBuf,
    #[command(flatten)]
    pub script: Script,
    /// The workspace: the extension's cwd and every request's
    /// `context.workspace`, kept as it is (default: a fresh empty
    /// directory, removed afterwards).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Print every frame whole (default: frames over 400 bytes are cut).
    #[arg(long)]
    pub full: bool,
    /// JSON arguments for the tool call the tour cancels (API 0.2 and
    /// later, without --tool or --command).
    #[arg(long, value_name = "JSON")]
    pub slow_args: Option<String>,
    /// The answer to `confirmation/request`.
    #[arg(long, value_enum, default_value = "yes")]
    pub confirm: YesNo,
    /// Answer the next `input/request` with TEXT (repeatable, used in
    /// order; once they are used up the answer is null, as a headless host
    /// gives).
    #[arg(long, value_name = "TEXT")]
    pub input: Vec<String>,
    /// The decision `policy/evaluate` gets.
    #[arg(long, value_enum, default_value = "allow")]
    pub policy: Decision,
    /// Answer `secret/get NAME` with the value of the environment variable
    /// VAR (repeatable). Only names in the manifest's `[capabilities]
    /// secrets` are answered.
    #[arg(long = "secret", value_name = "NAME=VAR")]
    pub secrets: Vec<String>,
    /// Answer `secret/get` from FILE: one `NAME=VALUE` per line (`#`
    /// starts a comment).
    #[arg(long, value_name = "FILE")]
    pub secrets_file: Option<PathBuf>,
    /// Save each published artifact in DIR as `<artifact id>.<type>`.
    #[arg(long, value_name = "DIR")]
    pub artifacts: Option<PathBuf>,
    /// Record every frame of the session, both ways, with its time, to
    /// FILE (readable only by you; secrets handed out are redacted), for
    /// `octet-wasm replay FILE COMPONENT`.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum YesNo {
    Yes,
    No,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Decision {
    Allow,
    Ask,
    Deny,
}

impl Decision {
    fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }
}

/// One request of the script.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    Tool {
        name: String,
        arguments: Value,
    },
    Command {
        name: String,
        arguments: Vec<String>,
    },
}

/// The requests to play, in command-line order; empty: the tour.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Script {
    pub steps: Vec<Step>,
    /// `--args` without any `--tool`: the tour's tool arguments.
    pub tour_arguments: Option<Value>,
}

enum Item {
    Tool(String),
    Args(String),
    Command(Vec<String>),
}

fn invalid(message: String) -> clap::Error {
    clap::Error::raw(
        clap::error::ErrorKind::ValueValidation,
        format!("{message}\n"),
    )
}

impl clap::FromArgMatches for Script {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut items: Vec<(usize, Item)> = Vec::new();
        for (id, wrap) in [
            ("tool", Item::Tool as fn(String) -> Item),
            ("args", Item::Args),
        ] {
            if let (Some(values), Some(indices)) =
                (matches.get_many::<String>(id), matches.indices_of(id))
            {
                items.extend(indices.zip(values.map(|v| wrap(v.clone()))));
            }
        }
        if let (Some(occurrences), Some(indices)) = (
            matches.get_occurrences::<String>("command"),
            matches.indices_of("command"),
        ) {
            let mut indices = indices;
            for occurrence in occurrences {
                let words: Vec<String> = occurrence.cloned().collect();
                let first = indices.next().unwrap_or(usize::MAX);
                for _ in 1..words.len() {
                    indices.next();
                }
                items.push((first, Item::Command(words)));
            }
        }
        items.sort_by_key(|(index, _)| *index);
        let parse = |text: &str| {
            serde_json::from_str::<Value>(text)
                .map_err(|err| invalid(format!("--args {text}: not valid JSON: {err}")))
        };
        let any_tool = items.iter().any(|(_, item)| matches!(item, Item::Tool(_)));
        let mut script = Script::default();
        let mut open_tool = false;
        for (_, item) in items {
            match item {
                Item::Tool(name) => {
                    script.steps.push(Step::Tool {
                        name,
                        arguments: Value::Object(Default::default()),
                    });
                    open_tool = true;
                }
                Item::Args(text) if !any_tool => {
                    if script.tour_arguments.replace(parse(&text)?).is_some() {
                        return Err(invalid("--args is given twice without --tool".into()));
                    }
                }
                Item::Args(text) => match script.steps.last_mut() {
                    Some(Step::Tool { arguments, .. }) if open_tool => {
                        *arguments = parse(&text)?;
                        open_tool = false;
                    }
                    _ => {
                        return Err(invalid(format!(
                            "--args {text} does not follow a --tool NAME (each --args belongs to the --tool right before it)"
                        )));
                    }
                },
                Item::Command(mut words) => {
                    let name = words.remove(0);
                    script.steps.push(Step::Command {
                        name,
                        arguments: words,
                    });
                    open_tool = false;
                }
            }
        }
        if script.tour_arguments.is_some() && !script.steps.is_empty() {
            return Err(invalid(
                "--args does not follow a --tool NAME (each --args belongs to the --tool right before it; --command takes its arguments after its name)".into(),
            ));
        }
        Ok(script)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Script::from_arg_matches(matches)?;
        Ok(())
    }
}

impl clap::Args for Script {
    fn augment_args(command: clap::Command) -> clap::Command {
        command
            .arg(
                Arg::new("tool")
                    .long("tool")
                    .value_name("NAME")
                    .action(ArgAction::Append)
                    .help("Call tool NAME (repeatable; requests run in the order given, then shutdown; without --tool or --command the demo tours what the manifest declares)"),
            )
            .arg(
                Arg::new("args")
                    .long("args")
                    .value_name("JSON")
                    .action(ArgAction::Append)
                    .help("The JSON arguments of the --tool right before it (default {}); without --tool, the arguments of the tour's tool calls (default {\"name\":\"Ada\"})"),
            )
            .arg(
                Arg::new("command")
                    .long("command")
                    .value_names(["NAME", "ARGS"])
                    .num_args(1..)
                    .action(ArgAction::Append)
                    .help("Run command NAME with ARGS (repeatable; ARGS end at the next option, so give the extension directory first)"),
            )
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        Script::augment_args(command)
    }
}

impl DemoArgs {
    /// The host's answers, reading the secrets the user named.
    pub fn answers(&self) -> Result<Answers, String> {
        let mut secrets = BTreeMap::new();
        if let Some(file) = &self.secrets_file {
            let text = std::fs::read_to_string(file)
                .map_err(|err| format!("--secrets-file {}: {err}", file.display()))?;
            for (n, line) in text.lines().enumerate() {
                let line = line.trim();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                let Some((name, value)) = line.split_once('=') else {
                    return Err(format!(
                        "--secrets-file {} line {}: expected NAME=VALUE",
                        file.display(),
                        n + 1
                    ));
                };
                secrets.insert(name.trim().to_owned(), value.to_owned());
            }
        }
        for pair in &self.secrets {
            let Some((name, var)) = pair.split_once('=') else {
                return Err(format!("--secret {pair}: expected NAME=ENV_VAR"));
            };
            let value = std::env::var(var).map_err(|_| {
                format!("--secret {pair}: the environment variable {var} is not set")
            })?;
            secrets.insert(name.to_owned(), value);
        }
        Ok(Answers {
            confirm: self.confirm == YesNo::Yes,
            inputs: self.input.clone(),
            policy: self.policy.as_str().to_owned(),
            secrets,
            artifacts_dir: self.artifacts.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use serde_json::json;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        demo: DemoArgs,
    }

    fn script(args: &[&str]) -> Result<Script, String> {
        Cli::try_parse_from(std::iter::once("demo").chain(args.iter().copied()))
            .map(|cli| cli.demo.script)
            .map_err(|err| err.to_string())
    }

    #[test]
    fn steps_keep_the_command_line_order() {
        let parsed = script(&[
            "examples/showcase",
            "--tool",
            "chart",
            "--args",
            r#"{"values":[1,2]}"#,
            "--command",
            "charts",
            "a",
            "b",
            "--tool",
            "unlock_stats",
            "--command",
            "charts",
        ])
        .unwrap();
        assert_eq!(
            parsed.steps,
            vec![
                Step::Tool {
                    name: "chart".into(),
                    arguments: json!({"values": [1, 2]})
                },
                Step::Command {
                    name: "charts".into(),
                    arguments: vec!["a".into(), "b".into()]
                },
                Step::Tool {
                    name: "unlock_stats".into(),
                    arguments: json!({})
                },
                Step::Command {
                    name: "charts".into(),
                    arguments: vec![]
                },
            ]
        );
        assert_eq!(parsed.tour_arguments, None);
    }

    #[test]
    fn args_alone_are_the_tours_and_misplaced_args_are_refused() {
        let parsed = script(&["--args", r#"{"name":"Bo"}"#]).unwrap();
        assert!(parsed.steps.is_empty());
        assert_eq!(parsed.tour_arguments, Some(json!({"name": "Bo"})));
        let error = script(&["--command", "x", "--args", "{}", "--tool", "t"]).unwrap_err();
        assert!(error.contains("does not follow a --tool NAME"), "{error}");
        let error = script(&["--tool", "t", "--args", "{nope"]).unwrap_err();
        assert!(error.contains("not valid JSON"), "{error}");
    }
}
