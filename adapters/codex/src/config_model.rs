//! The model codex uses when forge names none: the user's choice in the `config.toml` of the
//! `CODEX_HOME` the run reads (a private home's copy of it, or the home itself), or a
//! `--model` / `-c model=…` / `--profile` among the run's own arguments. Known before the
//! run, so the run's tokens are priced without any forge configuration.

use std::path::{Path, PathBuf};

use forge_ports::{FileSource, Invocation};

use crate::home::{CODEX_HOME_ENV, user_codex_home};

/// The model `invocation` will run with when it names none itself; `None` when neither its
/// arguments nor its config choose one (codex then uses its built-in default).
pub fn for_invocation(invocation: &Invocation) -> Option<String> {
    // The last argument is the prompt (or `-`): never read as a flag.
    let flags = invocation
        .args
        .split_last()
        .map_or(&[][..], |(_, flags)| flags);
    let args = Args::read(flags);
    if let Some(model) = args.model {
        return Some(model);
    }
    let text = config_text(invocation)?;
    from_config(&text, args.profile.as_deref())
}

/// The model `config.toml` text selects: the active profile's (`profile`, or the one named
/// by `--profile`), else the top-level `model`.
pub fn from_config(text: &str, profile: Option<&str>) -> Option<String> {
    let config: toml::Table = text.parse().ok()?;
    let profile = profile.or_else(|| config.get("profile")?.as_str());
    let from_profile = profile.and_then(|p| {
        config
            .get("profiles")?
            .get(p)?
            .get("model")?
            .as_str()
            .map(str::to_owned)
    });
    from_profile.or_else(|| config.get("model")?.as_str().map(str::to_owned))
}

/// The text of the `config.toml` the run will read: the prepared copy (or contents) when
/// forge writes one into a private home, else the file in the home the run names.
fn config_text(invocation: &Invocation) -> Option<String> {
    let home = invocation
        .env
        .set
        .get(CODEX_HOME_ENV)
        .map(PathBuf::from)
        .or_else(user_codex_home)?;
    let path = home.join("config.toml");
    let prepared = invocation.files.iter().find(|f| f.path == path);
    match prepared.map(|f| &f.source) {
        Some(FileSource::Contents(bytes)) => String::from_utf8(bytes.clone()).ok(),
        Some(FileSource::CopyOf(source) | FileSource::SymlinkTo(source)) => read(source),
        None => read(&path),
    }
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// The model and profile the run's arguments choose (the last one given wins, as in clap).
#[derive(Debug, Default, PartialEq)]
struct Args {
    model: Option<String>,
    profile: Option<String>,
}

impl Args {
    fn read(args: &[String]) -> Self {
        let mut out = Self::default();
        let mut iter = args.iter().map(String::as_str);
        while let Some(arg) = iter.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) if flag.starts_with("--") => (flag, Some(value)),
                _ => (arg, None),
            };
            let mut value = || {
                inline
                    .map(str::to_owned)
                    .or_else(|| iter.next().map(str::to_owned))
            };
            match flag {
                "-m" | "--model" => out.model = value(),
                "-p" | "--profile" => out.profile = value(),
                "-c" | "--config" => {
                    if let Some(model) = value().as_deref().and_then(config_override_model) {
                        out.model = Some(model);
                    }
                }
                _ => {}
            }
        }
        out
    }
}

/// `model="gpt-5"` / `model=gpt-5` of a `-c key=value` override (the value is TOML, or a
/// bare string).
fn config_override_model(text: &str) -> Option<String> {
    let (key, value) = text.split_once('=')?;
    if key.trim() != "model" {
        return None;
    }
    let value = value.trim();
    let parsed = format!("v = {value}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|t| t.get("v")?.as_str().map(str::to_owned));
    Some(parsed.unwrap_or_else(|| value.to_owned())).filter(|m| !m.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_chooses_the_model_and_look_alikes_do_not() {
        let cases: [(&str, Option<&str>, Option<&str>); 8] = [
            (
                "model = \"gpt-5.5\"\nmodel_provider = \"mock\"\n",
                None,
                Some("gpt-5.5"),
            ),
            // The active profile's model wins over the top level.
            (
                "model = \"a\"\nprofile = \"fast\"\n[profiles.fast]\nmodel = \"b\"\n",
                None,
                Some("b"),
            ),
            // `--profile` picks another profile.
            (
                "model = \"a\"\nprofile = \"fast\"\n[profiles.fast]\nmodel = \"b\"\n[profiles.deep]\nmodel = \"c\"\n",
                Some("deep"),
                Some("c"),
            ),
            // A profile without a model falls back to the top level.
            (
                "model = \"a\"\nprofile = \"p\"\n[profiles.p]\n",
                None,
                Some("a"),
            ),
            // Look-alikes: another table's model, a provider's name, no model at all.
            (
                "[model_providers.mock]\nmodel = \"x\"\nname = \"mock\"\n",
                None,
                None,
            ),
            ("model_provider = \"mock\"\n", None, None),
            ("", None, None),
            ("model = [not toml", None, None),
        ];
        for (text, profile, want) in cases {
            assert_eq!(from_config(text, profile).as_deref(), want, "{text}");
        }
    }

    #[test]
    fn arguments_choose_before_the_config() {
        let read =
            |args: &[&str]| Args::read(&args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>());
        let model = |m: &str| Args {
            model: Some(m.to_owned()),
            profile: None,
        };
        assert_eq!(read(&["exec", "--json", "-m", "o3", "hi"]), model("o3"));
        assert_eq!(read(&["exec", "--model=o4-mini", "hi"]), model("o4-mini"));
        assert_eq!(
            read(&["exec", "-c", "model=\"gpt-5\"", "hi"]),
            model("gpt-5")
        );
        assert_eq!(
            read(&["exec", "--config", "model=gpt-5", "hi"]),
            model("gpt-5")
        );
        assert_eq!(
            read(&["exec", "--profile", "deep", "hi"]),
            Args {
                model: None,
                profile: Some("deep".into())
            }
        );
        // Look-alikes: other overrides, a prompt that mentions a model.
        assert_eq!(
            read(&["exec", "-c", "model_provider=mock", "hi"]),
            Args::default()
        );
        assert_eq!(read(&["exec", "use -m o3 please"]), Args::default());
    }
}
