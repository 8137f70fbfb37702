//! Every relative link of README.md, ARCHITECTURE.md and docs/*.md leads somewhere: the
//! file exists, and a `#fragment` names a heading of it (GitHub's slugs). A newcomer finds
//! any feature from README in one click only while the links hold.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a panic is how a test fails"
)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The `(target)` of each `[text](target)` outside code blocks and code spans.
fn links(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            out.push(after[..end].to_owned());
            rest = &after[end..];
        }
    }
    out
}

/// GitHub's anchor of a heading: lowercase, spaces to `-`, punctuation other than `-` and
/// `_` dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut out = BTreeSet::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.insert(slug(line.trim_start_matches('#')));
        }
    }
    out
}

fn documents(root: &Path) -> Vec<PathBuf> {
    let mut docs = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    pages.sort();
    docs.extend(pages);
    docs
}

/// The broken links of the document at `path`: `file: target (why)`.
fn broken(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let dir = path.parent().unwrap();
    let mut out = Vec::new();
    for target in links(&text) {
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (file, fragment) = target.split_once('#').unwrap_or((&target, ""));
        let linked = if file.is_empty() {
            path.to_path_buf()
        } else {
            dir.join(file)
        };
        if !linked.exists() {
            out.push(format!("{}: {target} (no such file)", path.display()));
            continue;
        }
        if !fragment.is_empty() && linked.extension().is_some_and(|x| x == "md") {
            let headings = anchors(&std::fs::read_to_string(&linked).unwrap());
            if !headings.contains(fragment) {
                out.push(format!("{}: {target} (no such heading)", path.display()));
            }
        }
    }
    out
}

#[test]
fn every_relative_link_of_the_docs_resolves() {
    let root = workspace_root();
    let broken: Vec<String> = documents(&root).iter().flat_map(|p| broken(p)).collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn readme_links_every_docs_page() {
    let root = workspace_root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let linked: BTreeSet<String> = links(&readme).into_iter().collect();
    for page in documents(&root).iter().skip(2) {
        let name = format!("docs/{}", page.file_name().unwrap().to_string_lossy());
        assert!(
            linked.contains(&name),
            "README.md does not link {name}: a page nobody can find from the front door"
        );
    }
}

/// The checker itself: links in prose are found, code is not prose, and a wrong file or
/// heading is reported while the right ones are not.
#[test]
fn the_checker_finds_broken_links_and_only_those() {
    let text = "See [a](a.md) and [b](b.md#two).\n`[c](c.md)` is code.\n```\n[d](d.md)\n```\n[e](https://x/y) [f](#top)\n";
    assert_eq!(
        links(text),
        ["a.md", "b.md#two", "https://x/y", "#top"].map(str::to_owned)
    );
    assert_eq!(
        slug(" What the repository decides, and what the worker decides"),
        "what-the-repository-decides-and-what-the-worker-decides"
    );
    assert_eq!(
        slug(" Running agents: `run`, `stream`"),
        "running-agents-run-stream"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("b.md"), "# One\n## Two\n").unwrap();
    let doc = dir.path().join("doc.md");
    std::fs::write(
        &doc,
        "# Top\n[a](a.md) [b](b.md#two) [b3](b.md#three) [f](#top)\n",
    )
    .unwrap();
    let got = broken(&doc);
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got[0].ends_with("a.md (no such file)"), "{got:?}");
    assert!(got[1].ends_with("b.md#three (no such heading)"), "{got:?}");
}
