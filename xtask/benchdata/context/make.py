#!/usr/bin/env python3
"""Builds the `cargo xtask bench --context` data from git repositories (how the stored
files were made; not run by the bench).

    make.py NAME GIT_DIR [CASES]

For the newest CASES (default 30) commits of GIT_DIR's HEAD that qualify (not a merge,
not by a bot, at most 12 files changed, at least one changed file present in the parent:
the truth is the commits' changed files that exist in its parent), it writes NAME.json.gz:

    {"name", "source", "base": <commit>, "blobs": {sha1: text}, "tree": {path: sha1},
     "cases": [{"commit", "subject", "truth": [paths], "overlay": {path: sha1 | null}}]}

`tree` is the repository at `base`, the parent of the oldest case; each case's repository
(its commit's parent) is `tree` with its `overlay` applied (null: the file is gone). Text
files only: a binary or >1 MiB file is kept by path with empty content (the map shows such
files by path alone too), and so is a lockfile (`*.lock`, `go.sum`, `package-lock.json`:
hundreds of KB per version, and both rankers see the same empty text).
"""
import gzip, json, subprocess, sys

MAX_BYTES = 1 << 20


def git(gd, *args, text=True):
    out = subprocess.run(["git", "--git-dir", gd, *args], check=True, capture_output=True)
    return out.stdout.decode("utf-8", "replace") if text else out.stdout


def tree(gd, commit):
    """path -> blob sha of every file at commit."""
    out = {}
    for line in git(gd, "ls-tree", "-r", "-z", commit).split("\0"):
        if not line:
            continue
        meta, path = line.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind == "blob" and mode != "120000":
            out[path] = sha
    return out


def is_lock(path):
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".lock") or name in ("go.sum", "package-lock.json", "pnpm-lock.yaml")


def main():
    name, gd = sys.argv[1], sys.argv[2]
    want = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    log = git(gd, "log", "--no-merges", "--format=%H%x00%P%x00%an%x00%s", "-n", "400", "HEAD")
    cases = []
    for line in log.splitlines():
        commit, parents, author, subject = line.split("\0")
        if "[bot]" in author or "dependabot" in author.lower() or not parents:
            continue
        parent = parents.split()[0]
        changed = [p for p in git(gd, "diff", "--name-only", "-z", parent, commit).split("\0") if p]
        if not changed or len(changed) > 12:
            continue
        before = tree(gd, parent)
        truth = sorted(p for p in changed if p in before)
        if not truth:
            continue
        cases.append({"commit": commit, "parent": parent, "subject": subject, "truth": truth, "tree": before})
        if len(cases) == want:
            break
    cases.reverse()
    base = cases[0]["parent"]
    base_tree = cases[0]["tree"]
    blobs = {}
    shas = set(base_tree.values())
    out_cases = []
    for c in cases:
        overlay = {p: s for p, s in c["tree"].items() if base_tree.get(p) != s}
        overlay.update({p: None for p in base_tree if p not in c["tree"]})
        shas.update(s for s in overlay.values() if s)
        out_cases.append({"commit": c["commit"], "subject": c["subject"], "truth": c["truth"], "overlay": overlay})
    locks = set()
    for t in [base_tree] + [c["overlay"] for c in out_cases]:
        locks.update(s for p, s in t.items() if s and is_lock(p))
    for sha in sorted(shas):
        if sha in locks:
            blobs[sha] = ""
            continue
        data = git(gd, "cat-file", "blob", sha, text=False)
        blobs[sha] = "" if len(data) > MAX_BYTES or b"\0" in data[:8192] else data.decode("utf-8", "replace")
    doc = {"name": name, "source": sys.argv[4] if len(sys.argv) > 4 else name, "base": base,
           "blobs": blobs, "tree": base_tree, "cases": out_cases}
    with gzip.open(f"{name}.json.gz", "wt", compresslevel=9) as f:
        json.dump(doc, f, separators=(",", ":"), sort_keys=True)


if __name__ == "__main__":
    main()
