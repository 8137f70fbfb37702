//! Which groups and scenarios a command line selects, and `--list`.

use anyhow::bail;

use super::{E2eArgs, Group, PROVIDERS, say};

/// A group with the scenarios selected in it.
pub type Plan = Vec<(&'static Group, Vec<&'static str>)>;

/// The selected groups, each with its selected scenarios, in table order.
pub fn plan(args: &E2eArgs, groups: &'static [Group]) -> anyhow::Result<Plan> {
    for g in &args.group {
        if !groups.iter().any(|group| group.name == g) {
            bail!(
                "unknown group {g:?}: {}",
                names(groups.iter().map(|g| g.name))
            );
        }
    }
    for s in &args.scenario {
        let known = groups
            .iter()
            .any(|g| g.name == s || (g.scenarios)().contains(&s.as_str()));
        if !known {
            bail!("unknown scenario {s:?} (`cargo xtask e2e --list` shows them)");
        }
    }
    let mut plan = Vec::new();
    for group in groups {
        let all = (group.scenarios)();
        let whole = args.scenario.is_empty() || args.scenario.iter().any(|s| s == group.name);
        let scenarios: Vec<&'static str> = if whole {
            all.clone()
        } else {
            all.iter()
                .copied()
                .filter(|n| args.scenario.iter().any(|s| s == n))
                .collect()
        };
        let wanted = if args.group.is_empty() {
            whole || !scenarios.is_empty()
        } else {
            args.group.iter().any(|g| g == group.name)
        };
        if !wanted {
            continue;
        }
        if !all.is_empty() && scenarios.is_empty() {
            say(&format!(
                "{}: none of the -s scenarios is in it, skipped",
                group.name
            ));
            continue;
        }
        plan.push((group, scenarios));
    }
    Ok(plan)
}

pub fn providers(args: &E2eArgs) -> anyhow::Result<Vec<&'static str>> {
    for p in &args.provider {
        if !PROVIDERS.contains(&p.as_str()) {
            bail!("unknown provider {p:?}: {}", names(PROVIDERS));
        }
    }
    Ok(PROVIDERS
        .into_iter()
        .filter(|p| args.provider.is_empty() || args.provider.iter().any(|a| a == p))
        .collect())
}

/// `--list`: a line per group, the names `-s` takes in it below.
pub fn list(plan: &Plan) -> String {
    let mut out = String::new();
    for (group, scenarios) in plan {
        out.push_str(&format!("{:<13} {}\n", group.name, group.about));
        // The scenario names, wrapped under the description.
        let mut line = String::new();
        for name in scenarios {
            if !line.is_empty() && line.len() + name.len() > 80 {
                out.push_str(&format!("{:<14}{}\n", "", line.trim_end()));
                line.clear();
            }
            line.push_str(name);
            line.push(' ');
        }
        if !line.is_empty() {
            out.push_str(&format!("{:<14}{}\n", "", line.trim_end()));
        }
    }
    out
}

fn names<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    names.into_iter().collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::e2e::GROUPS;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: E2eArgs,
    }

    /// The plan for `line`, one `group[scenarios]` per group (`*`: all of its scenarios).
    fn check(line: &str, expected: &str) {
        let cli = Cli::parse_from(std::iter::once("e2e").chain(line.split_whitespace()));
        let shown = match plan(&cli.args, GROUPS) {
            Ok(plan) => plan
                .iter()
                .map(|(g, s)| {
                    let s = if *s == (g.scenarios)() {
                        "*".to_owned()
                    } else {
                        s.join(" ")
                    };
                    format!("{}[{s}]", g.name)
                })
                .collect::<Vec<_>>()
                .join(" "),
            Err(e) => format!("error: {e}"),
        };
        assert_eq!(shown, expected, "for {line:?}");
    }

    #[test]
    fn groups_and_scenarios_select_as_documented() {
        let everything = "cases[*] retry_events[*] resume_cost[*] serve[*] web[*] mcp[*] \
                          rate_limit[*] auto[*] task[*] warm[*] delivery[*] gitlab[*] pulls[*] poll[*] review[*] acp[*] \
                          queue[*] queue_serve[*] travel[*] sandbox[*] permissions[*] demo[*]";
        check("", everything);
        check("-p codex", everything);
        // -s alone: the groups owning the names, narrowed to them.
        check("-s shell_fail", "cases[shell_fail]");
        check("-s resume", "cases[resume] resume_cost[*]");
        check(
            "-s rate_limit_then_success",
            "cases[rate_limit_then_success] retry_events[rate_limit_then_success]",
        );
        check(
            "-s shell_fail -s fix_cycle",
            "cases[shell_fail] task[fix_cycle]",
        );
        // A group's name stands for all of its scenarios, or the group itself.
        check("-s auto", "auto[*]");
        check("-s auto_kill_resume", "auto[auto_kill_resume]");
        check("-s mcp", "mcp[*]");
        check("-s serve", "serve[*]");
        // --group picks groups; -s narrows those that have scenarios.
        check("--group task", "task[*]");
        check("--group serve --group web", "serve[*] web[*]");
        check("--group task -s fix_cycle", "task[fix_cycle]");
        check("--group serve -s shell_fail", "serve[*]");
        check("--group task -s shell_fail", "");
        // Look-alikes that must not select anything.
        check(
            "-s shell",
            "error: unknown scenario \"shell\" (`cargo xtask e2e --list` shows them)",
        );
        check(
            "--group tasks",
            "error: unknown group \"tasks\": cases, retry_events, resume_cost, serve, web, \
             mcp, rate_limit, auto, task, warm, delivery, gitlab, pulls, poll, review, acp, queue, queue_serve, \
             travel, sandbox, permissions, demo",
        );
    }

    /// `--latest` reaches the arguments with the usual selection, and refuses `--record`
    /// (fixtures are recorded from the pins).
    #[test]
    fn latest_is_an_argument_like_the_others() {
        let cli = Cli::parse_from(["e2e", "--latest", "-g", "acp", "-p", "gemini"]);
        assert!(cli.args.latest);
        assert_eq!(cli.args.group, ["acp"]);
        assert_eq!(providers(&cli.args).ok(), Some(vec!["gemini"]));
        assert!(!Cli::parse_from(["e2e"]).args.latest);
        assert!(Cli::try_parse_from(["e2e", "--latest", "--record"]).is_err());
    }

    #[test]
    fn providers_are_checked_and_kept_in_table_order() {
        let cli = Cli::parse_from(["e2e", "-p", "gemini", "-p", "claude"]);
        assert_eq!(providers(&cli.args).ok(), Some(vec!["claude", "gemini"]));
        let cli = Cli::parse_from(["e2e", "-p", "Claude"]);
        assert!(providers(&cli.args).is_err());
    }
}
