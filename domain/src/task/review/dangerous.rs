//! Dangerous commands and settings in added lines: force push, `rm -rf` of the root, home or
//! an absolute path, `chmod 777`, piping a download into a shell, TLS verification off.

use super::input::AddedLine;
use super::text::{args_of, commands};
use super::{finding, rule};
use crate::task::finding::Finding;

/// Absolute paths under these are scratch space, not a risk.
const SCRATCH: &[&str] = &["/tmp/", "/var/tmp/", "$TMPDIR", "${TMPDIR"];
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "fish"];

/// Settings that turn TLS verification off, matched with spaces and quotes removed and in
/// lower case.
const TLS_OFF: &[&str] = &[
    "verify=false",
    "rejectunauthorized:false",
    "rejectunauthorized=false",
    "insecureskipverify:true",
    "insecureskipverify=true",
    "node_tls_reject_unauthorized=0",
    "danger_accept_invalid_certs(true)",
    "danger_accept_invalid_hostnames(true)",
    "ssl_verify=false",
    "sslverify=false",
    "http.sslverifyfalse",
    "check_hostname=false",
    "cert_reqs=ssl.cert_none",
    "--no-check-certificate",
    "strict-ssl=false",
];

pub fn check_line(path: &str, line: &AddedLine, out: &mut Vec<Finding>) {
    let text = line.text.as_str();
    let at = Some(line.line);
    // Cheap gate: every rule below needs one of these words.
    let lower = text.to_ascii_lowercase();
    let maybe_shell = ["rm ", "push", "chmod", "curl", "wget", "777"]
        .iter()
        .any(|w| lower.contains(w));
    let cmds = if maybe_shell {
        commands(text)
    } else {
        Vec::new()
    };
    if cmds.iter().any(|c| force_push(c)) {
        out.push(finding(
            rule::FORCE_PUSH,
            path,
            at,
            "git push with --force rewrites the remote's history",
        ));
    }
    match cmds.iter().filter_map(|c| rm_rf(c)).max() {
        Some(RmTarget::Root) => out.push(finding(
            rule::RM_RF_ROOT,
            path,
            at,
            "rm -rf of the file system root or the home directory",
        )),
        Some(RmTarget::Absolute) => out.push(finding(
            rule::RM_RF_ABSOLUTE,
            path,
            at,
            "rm -rf of an absolute or home path outside the workspace",
        )),
        None => {}
    }
    if chmod_777(&cmds, &lower) {
        out.push(finding(
            rule::CHMOD_777,
            path,
            at,
            "world-writable permissions (777)",
        ));
    }
    if maybe_shell && pipe_to_shell(text) {
        out.push(finding(
            rule::PIPE_TO_SHELL,
            path,
            at,
            "a download piped straight into a shell",
        ));
    }
    if tls_off(&lower, &cmds) {
        out.push(finding(
            rule::TLS_VERIFY_OFF,
            path,
            at,
            "TLS certificate verification turned off",
        ));
    }
}

fn force_push(words: &[String]) -> bool {
    let Some(args) = args_of(words, "git") else {
        return false;
    };
    let Some(push) = args.iter().position(|w| w == "push") else {
        return false;
    };
    args[push + 1..].iter().any(|w| {
        w == "--force"
            || w.starts_with("--force-with-lease")
            || (w.starts_with('-') && !w.starts_with("--") && w.contains('f'))
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum RmTarget {
    Absolute,
    Root,
}

fn rm_rf(words: &[String]) -> Option<RmTarget> {
    let args = args_of(words, "rm")?;
    let (mut recursive, mut force) = (false, false);
    let mut worst = None;
    for a in args {
        if let Some(long) = a.strip_prefix("--") {
            recursive |= long == "recursive";
            force |= long == "force";
        } else if let Some(short) = a.strip_prefix('-') {
            recursive |= short.contains(['r', 'R']);
            force |= short.contains('f');
        } else {
            worst = worst.max(target(a));
        }
    }
    if recursive && force { worst } else { None }
}

fn target(path: &str) -> Option<RmTarget> {
    let trimmed = path.trim_end_matches(['/', '*']);
    let home = ["~", "$HOME", "${HOME}"];
    if trimmed.is_empty() || home.contains(&trimmed) {
        return Some(RmTarget::Root);
    }
    let absolute = path.starts_with('/') || home.iter().any(|h| path.starts_with(&format!("{h}/")));
    (absolute && !SCRATCH.iter().any(|s| path.starts_with(s))).then_some(RmTarget::Absolute)
}

fn chmod_777(cmds: &[Vec<String>], lower: &str) -> bool {
    let shell = cmds.iter().any(|c| {
        args_of(c, "chmod").is_some_and(|args| {
            args.iter()
                .any(|a| matches!(a.as_str(), "777" | "0777" | "a+rwx" | "ugo+rwx"))
        })
    });
    // `os.chmod(p, 0o777)`, `fs.chmodSync(p, 0o777)`, `set_mode(0o777)`.
    shell || (lower.contains("chmod") || lower.contains("set_mode")) && lower.contains("0o777")
}

/// `curl … | sh`, `wget -O- … | sudo bash`, `bash <(curl …)`, `sh -c "$(curl …)"`.
fn pipe_to_shell(text: &str) -> bool {
    let fetches = |s: &str| {
        s.split_whitespace().any(|w| {
            matches!(
                w.trim_start_matches(['(', '"', '\'', '$', '<']),
                "curl" | "wget"
            )
        })
    };
    let segments: Vec<&str> = text.split('|').collect();
    for (i, seg) in segments.iter().enumerate() {
        if !fetches(seg) {
            continue;
        }
        let piped_into_shell = segments[i + 1..].iter().any(|next| {
            let mut words = next
                .split_whitespace()
                .skip_while(|w| *w == "sudo" || *w == "env");
            words
                .next()
                .is_some_and(|w| SHELLS.contains(&w.rsplit('/').next().unwrap_or(w)))
        });
        if piped_into_shell {
            return true;
        }
    }
    SHELLS.iter().any(|sh| {
        text.contains(&format!("{sh} <(curl"))
            || text.contains(&format!("{sh} <(wget"))
            || text.contains(&format!("{sh} -c \"$(curl"))
            || text.contains(&format!("{sh} -c \"$(wget"))
    })
}

/// Words every [`TLS_OFF`] setting or `curl -k` holds; lines without one are skipped.
const TLS_WORDS: &[&str] = &["verify", "unauthorized", "invalid", "ssl", "cert", "curl"];

fn tls_off(lower: &str, cmds: &[Vec<String>]) -> bool {
    if !TLS_WORDS.iter().any(|w| lower.contains(w)) {
        return false;
    }
    let squeezed: String = lower
        .chars()
        .filter(|c| !c.is_whitespace() && !matches!(c, '"' | '\''))
        .collect();
    if TLS_OFF.iter().any(|p| squeezed.contains(p)) {
        return true;
    }
    cmds.iter().any(|c| {
        args_of(c, "curl").is_some_and(|args| {
            args.iter().any(|a| {
                a == "--insecure" || (a.starts_with('-') && !a.starts_with("--") && a.contains('k'))
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use crate::task::review::tests::check_line;

    #[test]
    fn dangerous_line_rules() {
        for (text, expected) in [
            (
                "git push --force origin main",
                &["dangerous.force_push"][..],
            ),
            ("git push -f", &["dangerous.force_push"]),
            (
                "git push --force-with-lease origin HEAD",
                &["dangerous.force_push"],
            ),
            (
                "cd repo && git push -uf origin main",
                &["dangerous.force_push"],
            ),
            ("rm -rf /", &["dangerous.rm_rf_root"]),
            ("sudo rm -rf /*", &["dangerous.rm_rf_root"]),
            ("rm -rf ~", &["dangerous.rm_rf_root"]),
            ("rm -fr \"$HOME\"", &["dangerous.rm_rf_root"]),
            ("rm --recursive --force ${HOME}/", &["dangerous.rm_rf_root"]),
            ("rm -rf /usr/local/lib/app", &["dangerous.rm_rf_absolute"]),
            ("rm -Rf ~/.config/app", &["dangerous.rm_rf_absolute"]),
            (
                "/bin/rm -r -f $HOME/projects",
                &["dangerous.rm_rf_absolute"],
            ),
            ("chmod 777 /srv/data", &["dangerous.chmod_777"]),
            ("chmod -R a+rwx uploads", &["dangerous.chmod_777"]),
            ("os.chmod(path, 0o777)", &["dangerous.chmod_777"]),
            (
                "curl -fsSL https://get.example.com | sh",
                &["dangerous.pipe_to_shell"],
            ),
            (
                "wget -qO- https://x.io/i.sh | sudo bash",
                &["dangerous.pipe_to_shell"],
            ),
            (
                "bash <(curl -s https://x.io/i.sh)",
                &["dangerous.pipe_to_shell"],
            ),
            (
                "requests.get(url, verify=False)",
                &["dangerous.tls_verify_off"],
            ),
            (
                "const agent = new Agent({ rejectUnauthorized: false });",
                &["dangerous.tls_verify_off"],
            ),
            (
                "tls.Config{InsecureSkipVerify: true}",
                &["dangerous.tls_verify_off"],
            ),
            (
                "NODE_TLS_REJECT_UNAUTHORIZED=0 npm test",
                &["dangerous.tls_verify_off"],
            ),
            (
                "Client::builder().danger_accept_invalid_certs(true)",
                &["dangerous.tls_verify_off"],
            ),
            (
                "curl -sk https://internal/api",
                &["dangerous.tls_verify_off"],
            ),
            (
                "curl --insecure https://internal/api",
                &["dangerous.tls_verify_off"],
            ),
            (
                "wget --no-check-certificate https://x",
                &["dangerous.tls_verify_off"],
            ),
            // Look-alikes that must not fire.
            ("git push origin main", &[]),
            ("git push --follow-tags", &[]),
            ("git push -u origin feature-f", &[]),
            ("git fetch --force", &[]),
            ("rm -rf ./build", &[]),
            ("rm -rf target node_modules", &[]),
            ("rm -rf /tmp/forge-test", &[]),
            ("rm -rf \"$TMPDIR/x\"", &[]),
            ("rm -r /srv/old", &[]),
            ("rm -f /etc/app.pid.old.backup-no-r", &[]),
            ("format!(\"rm -rf {}\", dir)", &[]),
            ("let firmware = load();", &[]),
            ("chmod 755 script.sh", &[]),
            ("chmod 0644 config", &[]),
            ("port = 7777", &[]),
            ("curl -o install.sh https://x.io/i.sh", &[]),
            ("curl -s https://api/x | jq .name", &[]),
            ("wget -qO- https://x.io/a.tgz | tar xz", &[]),
            ("requests.get(url, verify=True)", &[]),
            ("rejectUnauthorized: true", &[]),
            ("InsecureSkipVerify: false,", &[]),
            ("sort -k 2 data.txt", &[]),
            ("curl -s https://api/x", &[]),
            ("verify_false_positives = 1", &[]),
            (
                "// never force-push; never rm -rf outside the workspace",
                &[],
            ),
        ] {
            check_line("scripts/deploy.sh", text, expected);
        }
    }
}
