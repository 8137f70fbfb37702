//! GitLab's draft rule: a merge request is a draft while its title starts with `Draft:`,
//! `[Draft]` or `(Draft)` (any case, repeated); forge writes `Draft: ` and removes every
//! prefix to mark it ready — GitLab's API has no draft flag to set.

/// The prefixes GitLab reads as "draft", lower case.
const PREFIXES: [&str; 3] = ["draft:", "[draft]", "(draft)"];

/// What forge puts before a held change's title.
pub(crate) const DRAFT: &str = "Draft: ";

/// `title` without the draft prefixes GitLab recognises.
pub(crate) fn without_draft(title: &str) -> &str {
    let mut rest = title.trim_start();
    loop {
        let stripped = PREFIXES.iter().find_map(|p| {
            let head = rest.get(..p.len())?;
            head.eq_ignore_ascii_case(p).then(|| &rest[p.len()..])
        });
        match stripped {
            Some(after) => rest = after.trim_start(),
            None => return rest,
        }
    }
}

/// `title` as a draft (`Draft: TITLE`) or ready (no prefix).
pub(crate) fn with_draft(title: &str, draft: bool) -> String {
    let bare = without_draft(title);
    if draft {
        format!("{DRAFT}{bare}")
    } else {
        bare.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(title: &str, draft: &str, ready: &str) {
        assert_eq!(with_draft(title, true), draft, "{title:?} as a draft");
        assert_eq!(with_draft(title, false), ready, "{title:?} ready");
    }

    #[test]
    fn draft_prefixes_in_and_out() {
        check("fix: x", "Draft: fix: x", "fix: x");
        check("Draft: fix: x", "Draft: fix: x", "fix: x");
        check("draft:fix", "Draft: fix", "fix");
        check("DRAFT: [Draft] (draft) fix", "Draft: fix", "fix");
        check("  Draft:   fix", "Draft: fix", "fix");
        // Look-alikes GitLab does not read as drafts stay.
        check(
            "Drafting the docs",
            "Draft: Drafting the docs",
            "Drafting the docs",
        );
        check(
            "docs: Draft: later",
            "Draft: docs: Draft: later",
            "docs: Draft: later",
        );
        check("WIP: fix", "Draft: WIP: fix", "WIP: fix");
        // Multi-byte text right after a prefix-length cut is no panic.
        check("Dräft: x", "Draft: Dräft: x", "Dräft: x");
        check("", "Draft: ", "");
    }
}
