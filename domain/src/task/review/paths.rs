//! Rules on the changed file's path: sensitive files, CI configuration, lockfiles.

use super::input::ChangedFile;
use super::{finding, rule};
use crate::task::finding::Finding;

/// `.env` templates that are meant to be committed.
const ENV_TEMPLATES: &[&str] = &["example", "sample", "template", "dist", "defaults", "tmpl"];

const KEY_FILE_NAMES: &[&str] = &["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"];
const KEY_EXTENSIONS: &[&str] = &["pem", "key", "p12", "pfx", "jks", "keystore", "ppk"];
const CREDENTIAL_FILES: &[&str] = &[
    "credentials.json",
    ".netrc",
    ".git-credentials",
    ".htpasswd",
    ".pgpass",
];

const CI_FILES: &[&str] = &[
    ".gitlab-ci.yml",
    ".travis.yml",
    "azure-pipelines.yml",
    "bitbucket-pipelines.yml",
    "Jenkinsfile",
    ".drone.yml",
    "cloudbuild.yaml",
];
const CI_DIRS: &[&str] = &[
    ".github/workflows/",
    ".circleci/",
    ".buildkite/",
    ".gitlab/ci/",
];

const LOCKFILES: &[&str] = &[
    "Cargo.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "bun.lock",
    "poetry.lock",
    "Pipfile.lock",
    "uv.lock",
    "go.sum",
    "Gemfile.lock",
    "composer.lock",
    "flake.lock",
];

pub fn check(file: &ChangedFile, out: &mut Vec<Finding>) {
    let path = file.path.as_str();
    let name = path.rsplit('/').next().unwrap_or(path);
    let change = file.change.as_str();
    if is_env_file(name) {
        out.push(finding(
            rule::ENV_FILE,
            path,
            None,
            format!("environment file {change}: .env files hold secrets and must not be touched"),
        ));
    }
    if is_private_key_file(name) {
        out.push(finding(
            rule::PRIVATE_KEY_FILE,
            path,
            None,
            format!("private key file {change}"),
        ));
    }
    if CREDENTIAL_FILES.contains(&name) || path.ends_with(".aws/credentials") {
        out.push(finding(
            rule::CREDENTIALS_FILE,
            path,
            None,
            format!("credentials file {change}"),
        ));
    }
    if CI_FILES.contains(&name) || CI_DIRS.iter().any(|d| is_under(path, d)) {
        out.push(finding(
            rule::CI_CONFIG,
            path,
            None,
            format!("CI configuration {change}"),
        ));
    }
    if LOCKFILES.contains(&name) {
        out.push(finding(
            rule::LOCKFILE,
            path,
            None,
            format!("lockfile {change}: dependencies changed"),
        ));
    }
}

fn is_env_file(name: &str) -> bool {
    match name.strip_prefix(".env") {
        Some("") => true,
        Some(rest) => rest
            .strip_prefix('.')
            .is_some_and(|suffix| !ENV_TEMPLATES.iter().any(|t| suffix.contains(t))),
        None => false,
    }
}

fn is_private_key_file(name: &str) -> bool {
    if KEY_FILE_NAMES.contains(&name) {
        return true;
    }
    name.rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && KEY_EXTENSIONS.contains(&ext))
}

/// `dir` at the start of `path` or after a `/` (a monorepo's nested package).
fn is_under(path: &str, dir: &str) -> bool {
    path.starts_with(dir) || path.contains(&format!("/{dir}"))
}

#[cfg(test)]
mod tests {
    use crate::task::review::tests::{file, rules};

    fn check(path: &str, expected: &[&str]) {
        assert_eq!(rules(&[file(path, &[])]), expected, "{path}");
    }

    #[test]
    fn path_rules() {
        for (path, expected) in [
            (".env", &["sensitive.env_file"][..]),
            (".env.local", &["sensitive.env_file"]),
            ("config/.env.production", &["sensitive.env_file"]),
            ("id_rsa", &["sensitive.private_key_file"]),
            ("deploy/id_ed25519", &["sensitive.private_key_file"]),
            ("certs/server.pem", &["sensitive.private_key_file"]),
            ("tls/server.key", &["sensitive.private_key_file"]),
            ("credentials.json", &["sensitive.credentials_file"]),
            ("home/.aws/credentials", &["sensitive.credentials_file"]),
            (".netrc", &["sensitive.credentials_file"]),
            (".github/workflows/ci.yml", &["change.ci_config"]),
            (".gitlab-ci.yml", &["change.ci_config"]),
            ("packages/web/.circleci/config.yml", &["change.ci_config"]),
            ("Jenkinsfile", &["change.ci_config"]),
            ("Cargo.lock", &["change.lockfile"]),
            ("web/package-lock.json", &["change.lockfile"]),
            ("go.sum", &["change.lockfile"]),
            // Look-alikes that must not fire.
            (".env.example", &[]),
            (".env.sample", &[]),
            ("config/.env.template", &[]),
            (".envrc", &[]),
            ("src/env.rs", &[]),
            ("environment.ts", &[]),
            ("id_rsa.pub", &[]),
            ("src/keys.rs", &[]),
            ("src/key.rs", &[]),
            ("monkey.py", &[]),
            (".key", &[]),
            ("src/credentials.rs", &[]),
            ("docs/credentials.md", &[]),
            ("docs/github/workflows.md", &[]),
            ("src/workflows/ci.yml", &[]),
            ("src/lock.rs", &[]),
            ("Cargo.toml", &[]),
            ("locks/yarn.lock.md", &[]),
        ] {
            check(path, expected);
        }
    }
}
