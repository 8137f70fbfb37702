//! The workspace sandbox against a real directory tree with real symlinks.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use forge_adapter_fs::FsWorkspace;
use forge_domain::ForgeError;
use forge_ports::Workspace;

/// A workspace `ws/` with `ws/src/lib.rs`, next to an `outside/` directory holding
/// `secret.txt`, and links inside `ws/` pointing in and out.
struct Tree {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
}

fn tree() -> Tree {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = base.join("ws");
    let outside = base.join("outside");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(root.join("src/lib.rs"), "fn main() {}").unwrap();
    std::fs::write(outside.join("secret.txt"), "secret").unwrap();
    symlink(outside.join("secret.txt"), root.join("file_link_out")).unwrap();
    symlink(&outside, root.join("dir_link_out")).unwrap();
    symlink(root.join("src"), root.join("dir_link_in")).unwrap();
    symlink("src/lib.rs", root.join("file_link_in")).unwrap();
    symlink(outside.join("missing"), root.join("dangling")).unwrap();
    Tree {
        _tmp: tmp,
        root,
        outside,
    }
}

/// `Ok(path relative to the root)` or `Err(error kind)`.
async fn resolve(t: &Tree, requested: &str) -> Result<String, &'static str> {
    match FsWorkspace::new()
        .resolve(&t.root, Path::new(requested))
        .await
    {
        Ok(p) => Ok(p
            .strip_prefix(&t.root)
            .unwrap_or_else(|_| panic!("{requested} resolved outside: {}", p.display()))
            .display()
            .to_string()),
        Err(e) => Err(e.kind()),
    }
}

async fn check(t: &Tree, requested: &str, want: Result<&str, &'static str>) {
    let got = resolve(t, requested).await;
    assert_eq!(got.as_deref().map_err(|e| *e), want, "{requested}");
}

const REFUSED: Result<&str, &str> = Err("workspace_security");

#[tokio::test]
async fn escapes_are_refused_and_inside_paths_resolve() {
    let t = tree();
    let abs_inside = t.root.join("src/lib.rs").display().to_string();
    let abs_outside = t.outside.join("secret.txt").display().to_string();

    check(&t, "src/lib.rs", Ok("src/lib.rs")).await;
    check(&t, "src/../src/lib.rs", Ok("src/lib.rs")).await;
    check(&t, "./new/dir/file.txt", Ok("new/dir/file.txt")).await;
    check(&t, "", Ok("")).await;
    check(&t, &abs_inside, Ok("src/lib.rs")).await;
    check(&t, "dir_link_in/lib.rs", Ok("src/lib.rs")).await;
    check(&t, "file_link_in", Ok("src/lib.rs")).await;
    check(&t, "dir_link_in/new.rs", Ok("src/new.rs")).await;

    check(&t, "../x", REFUSED).await;
    check(&t, "src/../../outside/secret.txt", REFUSED).await;
    check(&t, "/etc/passwd", REFUSED).await;
    check(&t, &abs_outside, REFUSED).await;
    check(&t, "file_link_out", REFUSED).await;
    check(&t, "dir_link_out", REFUSED).await;
    check(&t, "dir_link_out/secret.txt", REFUSED).await;
    check(&t, "dir_link_out/new/file.txt", REFUSED).await;
    check(&t, "dangling", REFUSED).await;
}

#[tokio::test]
async fn a_root_given_through_a_symlink_accepts_both_spellings() {
    let t = tree();
    let alias = t.root.parent().unwrap().join("alias");
    symlink(&t.root, &alias).unwrap();
    let ws = FsWorkspace::new();
    for spelled in [alias.join("src/lib.rs"), t.root.join("src/lib.rs")] {
        let got = ws.resolve(&alias, &spelled).await.unwrap();
        assert_eq!(got, t.root.join("src/lib.rs"), "{}", spelled.display());
    }
}

#[tokio::test]
async fn reads_and_writes_go_through_the_sandbox() {
    let t = tree();
    let ws = FsWorkspace::new();
    ws.write_file(&t.root, Path::new("a/b/c.txt"), b"hello")
        .await
        .unwrap();
    assert_eq!(
        ws.read_file(&t.root, Path::new("a/b/c.txt")).await.unwrap(),
        b"hello"
    );
    ws.write_file(&t.root, Path::new("a/b/c.txt"), b"again")
        .await
        .unwrap();
    assert_eq!(std::fs::read(t.root.join("a/b/c.txt")).unwrap(), b"again");

    let refused = ws
        .write_file(&t.root, Path::new("dir_link_out/planted.txt"), b"x")
        .await;
    assert!(matches!(refused, Err(ForgeError::WorkspaceSecurity { .. })));
    assert!(!t.outside.join("planted.txt").exists());

    let refused = ws.read_file(&t.root, Path::new("file_link_out")).await;
    assert!(matches!(refused, Err(ForgeError::WorkspaceSecurity { .. })));

    let missing = ws.read_file(&t.root, Path::new("nope.txt")).await;
    assert!(matches!(missing, Err(ForgeError::Io { .. })), "{missing:?}");
    let into_dir = ws.write_file(&t.root, Path::new("src"), b"x").await;
    assert!(
        matches!(into_dir, Err(ForgeError::Io { .. })),
        "{into_dir:?}"
    );
}

#[tokio::test]
async fn open_checks_the_root() {
    let t = tree();
    let ws = FsWorkspace::new();
    assert_eq!(ws.open(&t.root.join("src/../")).await.unwrap(), t.root);
    let missing = ws.open(&t.root.join("missing")).await;
    assert!(matches!(missing, Err(ForgeError::InvalidRequest { .. })));
    let file = ws.open(&t.root.join("src/lib.rs")).await;
    assert!(matches!(file, Err(ForgeError::InvalidRequest { .. })));
}
