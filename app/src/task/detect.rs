//! Which validation commands a project has: `forge.toml` `[validation]` when any step is
//! set there, else detected from the project's own files.
//!
//! | file | steps |
//! |---|---|
//! | `Cargo.toml` | build `cargo build --all-targets`, test `cargo test` |
//! | `package.json` | install `npm ci` (`npm install` without a lockfile); lint / build / test: `npm run <script>` for each script present |
//! | `pyproject.toml` with pytest, `pytest.ini`, `setup.cfg` with `[tool:pytest]`, `tox.ini` with `[pytest]` | test `python -m pytest` |
//! | `Makefile` | lint / build / test: `make <target>` for each target present |
//!
//! The first matching row wins (a Rust project with a Makefile is validated by cargo).
//! Pure: the caller reads the files and hands their text in.

use std::collections::BTreeMap;

use forge_domain::task::StepName;

use crate::config::ValidationConfig;

/// One validation step to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedStep {
    pub name: StepName,
    pub command: String,
}

/// Where the steps came from (recorded in the plan).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanSource {
    Configured,
    Detected(&'static str),
    None,
}

impl PlanSource {
    pub fn describe(self) -> String {
        match self {
            PlanSource::Configured => "forge.toml [validation]".to_owned(),
            PlanSource::Detected(file) => format!("detected from {file}"),
            PlanSource::None => "none found".to_owned(),
        }
    }
}

/// The steps of a project, in the order install, lint, build, test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationPlan {
    pub source: PlanSource,
    pub steps: Vec<PlannedStep>,
}

impl ValidationPlan {
    /// The steps without `install` (run once before the agent; not repeated per cycle).
    pub fn checks(&self) -> impl Iterator<Item = &PlannedStep> {
        self.steps.iter().filter(|s| s.name != StepName::Install)
    }

    pub fn install(&self) -> Option<&PlannedStep> {
        self.steps.iter().find(|s| s.name == StepName::Install)
    }
}

/// The files detection looks at (read by the caller; absent → not in the map).
pub const PROJECT_FILES: &[&str] = &[
    "Cargo.toml",
    "go.mod",
    "package.json",
    "package-lock.json",
    "pyproject.toml",
    "pytest.ini",
    "setup.cfg",
    "tox.ini",
    "Makefile",
];

/// The plan for a project whose [`PROJECT_FILES`] hold `files` (name → text).
pub fn plan_validation(
    config: &ValidationConfig,
    files: &BTreeMap<String, String>,
) -> ValidationPlan {
    if config.any_set() {
        let steps = [
            (StepName::Install, &config.install),
            (StepName::Lint, &config.lint),
            (StepName::Build, &config.build),
            (StepName::Test, &config.test),
        ]
        .into_iter()
        .filter_map(|(name, command)| {
            command.as_ref().map(|c| PlannedStep {
                name,
                command: c.clone(),
            })
        })
        .collect();
        return ValidationPlan {
            source: PlanSource::Configured,
            steps,
        };
    }
    let step = |name, command: &str| PlannedStep {
        name,
        command: command.to_owned(),
    };
    if files.contains_key("Cargo.toml") {
        return detected(
            "Cargo.toml",
            vec![
                step(StepName::Build, "cargo build --all-targets"),
                step(StepName::Test, "cargo test"),
            ],
        );
    }
    if files.contains_key("go.mod") {
        return detected(
            "go.mod",
            vec![
                step(StepName::Build, "go build ./..."),
                step(StepName::Test, "go test ./..."),
            ],
        );
    }
    if let Some(text) = files.get("package.json") {
        let scripts = npm_scripts(text);
        let mut steps = vec![if files.contains_key("package-lock.json") {
            step(StepName::Install, "npm ci")
        } else {
            step(StepName::Install, "npm install")
        }];
        for name in [StepName::Lint, StepName::Build, StepName::Test] {
            if scripts.iter().any(|s| s == name.as_str()) {
                steps.push(step(name, &format!("npm run {}", name.as_str())));
            }
        }
        return detected("package.json", steps);
    }
    let pytest = files
        .get("pyproject.toml")
        .is_some_and(|t| t.contains("pytest"))
        || files.contains_key("pytest.ini")
        || files
            .get("setup.cfg")
            .is_some_and(|t| t.contains("[tool:pytest]"))
        || files.get("tox.ini").is_some_and(|t| t.contains("[pytest]"));
    if pytest {
        let origin = ["pyproject.toml", "pytest.ini", "setup.cfg", "tox.ini"]
            .into_iter()
            .find(|f| files.contains_key(*f))
            .unwrap_or("pyproject.toml");
        return detected(origin, vec![step(StepName::Test, "python -m pytest")]);
    }
    if let Some(text) = files.get("Makefile") {
        let targets = make_targets(text);
        let steps: Vec<PlannedStep> = [StepName::Lint, StepName::Build, StepName::Test]
            .into_iter()
            .filter(|n| targets.iter().any(|t| t == n.as_str()))
            .map(|n| step(n, &format!("make {}", n.as_str())))
            .collect();
        if !steps.is_empty() {
            return detected("Makefile", steps);
        }
    }
    ValidationPlan {
        source: PlanSource::None,
        steps: Vec::new(),
    }
}

fn detected(file: &'static str, steps: Vec<PlannedStep>) -> ValidationPlan {
    ValidationPlan {
        source: PlanSource::Detected(file),
        steps,
    }
}

/// The names under `"scripts"` of a package.json (none when it does not parse).
fn npm_scripts(text: &str) -> Vec<String> {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| {
            v.get("scripts")
                .and_then(serde_json::Value::as_object)
                .map(|o| o.keys().cloned().collect())
        })
        .unwrap_or_default()
}

/// Rule targets of a Makefile: `name:` at the start of a line (not `name :=`).
fn make_targets(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with(['\t', ' ', '#', '.']))
        .filter_map(|l| {
            let (head, rest) = l.split_once(':')?;
            if rest.starts_with('=') {
                return None;
            }
            Some(
                head.split_whitespace()
                    .map(str::to_owned)
                    .collect::<Vec<_>>(),
            )
        })
        .flatten()
        .collect()
}

/// The program a shell command starts (its first word), when it is a plain word: `None`
/// for commands starting with an assignment, a subshell or a builtin keyword, which are
/// left for the shell to report.
pub fn program_of(command: &str) -> Option<&str> {
    let first = command.split_whitespace().next()?;
    let plain = first
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | '+'));
    let keyword = matches!(
        first,
        "if" | "for"
            | "while"
            | "case"
            | "exec"
            | "cd"
            | "export"
            | "set"
            | "true"
            | "false"
            | "test"
    );
    (plain && !keyword).then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(config: &ValidationConfig, files: &[(&str, &str)], expected: &str) {
        let files = files
            .iter()
            .map(|(n, t)| ((*n).to_owned(), (*t).to_owned()))
            .collect();
        let plan = plan_validation(config, &files);
        let got = format!(
            "{}: {}",
            plan.source.describe(),
            plan.steps
                .iter()
                .map(|s| format!("{}={}", s.name, s.command))
                .collect::<Vec<_>>()
                .join("; ")
        );
        assert_eq!(got, expected, "{files:?}");
    }

    #[test]
    fn detection_table() {
        let none = ValidationConfig::default();
        check(&none, &[], "none found: ");
        check(
            &none,
            &[("Cargo.toml", "[package]"), ("Makefile", "test:\n\tx")],
            "detected from Cargo.toml: build=cargo build --all-targets; test=cargo test",
        );
        // A Go module wins over its web front end's package.json.
        check(
            &none,
            &[("go.mod", "module example.com/m\n"), ("package.json", "{}")],
            "detected from go.mod: build=go build ./...; test=go test ./...",
        );
        check(
            &none,
            &[
                (
                    "package.json",
                    r#"{"scripts": {"test": "jest", "lint": "eslint .", "start": "x"}}"#,
                ),
                ("package-lock.json", "{}"),
            ],
            "detected from package.json: install=npm ci; lint=npm run lint; test=npm run test",
        );
        check(
            &none,
            &[("package.json", "{not json")],
            "detected from package.json: install=npm install",
        );
        check(
            &none,
            &[("pyproject.toml", "[tool.pytest.ini_options]\n")],
            "detected from pyproject.toml: test=python -m pytest",
        );
        // Look-alike: a pyproject without pytest is no pytest project.
        check(
            &none,
            &[("pyproject.toml", "[project]\nname='x'\n")],
            "none found: ",
        );
        check(
            &none,
            &[("setup.cfg", "[tool:pytest]\n")],
            "detected from setup.cfg: test=python -m pytest",
        );
        check(
            &none,
            &[(
                "Makefile",
                "CC := gcc\nbuild: main.o\n\tcc\ntest: build\n\t./t\n# lint:\n",
            )],
            "detected from Makefile: build=make build; test=make test",
        );
        // Look-alike: variable assignments and comments are no targets.
        check(
            &none,
            &[("Makefile", "test := 1\n# build:\n")],
            "none found: ",
        );
        let configured = ValidationConfig {
            test: Some("sh test.sh".into()),
            ..ValidationConfig::default()
        };
        check(
            &configured,
            &[("Cargo.toml", "")],
            "forge.toml [validation]: test=sh test.sh",
        );
    }

    #[test]
    fn programs_of_commands() {
        for (command, expected) in [
            ("cargo test", Some("cargo")),
            ("  npm run lint", Some("npm")),
            ("./scripts/check.sh --all", Some("./scripts/check.sh")),
            ("FOO=1 make test", None),
            ("cd sub && make", None),
            ("(cd sub; make)", None),
            ("", None),
        ] {
            assert_eq!(program_of(command), expected, "{command}");
        }
    }
}
