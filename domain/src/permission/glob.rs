//! The path in a `Read(…)` / `Edit(…)` rule, read as Claude Code reads it (gitignore-like):
//! `//abs/path` from the file system's root, `/path` and `./path` from the workspace, a name
//! without a slash at any depth (`.env`, `*.pem`); `**` any number of directories, `*` and
//! `?` within one name; a pattern that names a directory covers everything below it.

/// Where a pattern is anchored.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Anchor {
    Root,
    Workspace,
    AnyDepth,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PathPattern {
    anchor: Anchor,
    segments: Vec<String>,
}

impl PathPattern {
    /// Reads a rule's path.
    ///
    /// # Errors
    /// A reason for what forge does not read: `~` (the rule would mean another home on
    /// another machine), `..`, `[…]` classes, an empty path.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        if text.starts_with('~') {
            return Err(
                "a path under ~ is not supported here; write it from the root \
                 (//home/me/…) or from the workspace (./…)"
                    .to_owned(),
            );
        }
        if text.contains('[') || text.contains(']') {
            return Err("character classes […] are not supported in a path".to_owned());
        }
        let (anchor, rest) = if let Some(rest) = text.strip_prefix("//") {
            (Anchor::Root, rest)
        } else if let Some(rest) = text.strip_prefix("./") {
            (Anchor::Workspace, rest)
        } else if let Some(rest) = text.strip_prefix('/') {
            (Anchor::Workspace, rest)
        } else if text.trim_end_matches('/').contains('/') {
            (Anchor::Workspace, text)
        } else {
            (Anchor::AnyDepth, text)
        };
        let mut segments: Vec<String> = rest
            .split('/')
            .filter(|s| !s.is_empty() && *s != ".")
            .map(str::to_owned)
            .collect();
        if segments.iter().any(|s| s == "..") {
            return Err("`..` is not allowed in a rule's path".to_owned());
        }
        if segments.is_empty() {
            if anchor == Anchor::AnyDepth {
                return Err("empty path".to_owned());
            }
            segments.push("**".to_owned());
        }
        Ok(Self { anchor, segments })
    }

    /// Whether `path` (absolute, or relative to `workspace`, an absolute directory) is
    /// covered. A path that leaves the workspace matches only a root-anchored pattern.
    pub(crate) fn matches(&self, path: &str, workspace: &str) -> bool {
        let Some(absolute) = normalise(path, workspace) else {
            return false;
        };
        if self.anchor == Anchor::Root {
            return covers(&self.segments, &absolute);
        }
        let Some(base) = normalise(workspace, "/") else {
            return false;
        };
        let Some(inside) = absolute.strip_prefix(base.as_slice()) else {
            return false;
        };
        match self.anchor {
            Anchor::AnyDepth => inside
                .iter()
                .any(|name| self.segments.len() == 1 && name_matches(&self.segments[0], name)),
            _ => covers(&self.segments, inside),
        }
    }
}

/// The absolute path's names, `..` taken back lexically; `None` when it climbs past the root.
fn normalise<'a>(path: &'a str, base: &'a str) -> Option<Vec<&'a str>> {
    let mut names: Vec<&str> = Vec::new();
    let joined: Vec<&str> = if path.starts_with('/') {
        path.split('/').collect()
    } else {
        base.split('/').chain(path.split('/')).collect()
    };
    for name in joined {
        match name {
            "" | "." => {}
            ".." => {
                names.pop()?;
            }
            name => names.push(name),
        }
    }
    Some(names)
}

/// The pattern matches the path or a directory above it (which covers what is below).
fn covers(pattern: &[String], names: &[&str]) -> bool {
    (0..=names.len()).any(|end| walk(pattern, &names[..end]))
}

fn walk(pattern: &[String], names: &[&str]) -> bool {
    match pattern.split_first() {
        None => names.is_empty(),
        Some((first, rest)) if first == "**" => {
            (0..=names.len()).any(|skip| walk(rest, &names[skip..]))
        }
        Some((first, rest)) => match names.split_first() {
            Some((name, tail)) => name_matches(first, name) && walk(rest, tail),
            None => false,
        },
    }
}

/// `*` (any run of characters) and `?` (one) within one name.
fn name_matches(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
            }
            Some(&c) if c == '?' || c == n[ni] => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}
