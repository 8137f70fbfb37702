//! The directories `serve` confines requests to when no `--root` is given.

use std::path::PathBuf;

use crate::config_load::user_config_file;
use crate::exit::Failure;

/// `[server] roots` of the user configuration file, else the current directory.
pub(super) fn configured() -> Result<Vec<PathBuf>, Failure> {
    let from_file = match user_config_file() {
        Some(path) => match std::fs::read_to_string(&path) {
            Ok(text) => roots_in(&text).map_err(|reason| {
                Failure::Usage(format!("file {}: server.roots: {reason}", path.display()))
            })?,
            Err(_) => Vec::new(),
        },
        None => Vec::new(),
    };
    if from_file.is_empty() {
        Ok(vec![std::env::current_dir()?])
    } else {
        Ok(from_file)
    }
}

/// The `roots` list of the `[server]` table of a config file's text.
fn roots_in(text: &str) -> Result<Vec<PathBuf>, String> {
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| e.message().to_owned())?;
    let Some(server) = table.get("server") else {
        return Ok(Vec::new());
    };
    let Some(roots) = server.get("roots") else {
        return Ok(Vec::new());
    };
    let Some(list) = roots.as_array() else {
        return Err("expected an array of directories".into());
    };
    list.iter()
        .map(|v| {
            v.as_str()
                .map(PathBuf::from)
                .ok_or_else(|| "expected an array of directories".to_owned())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::roots_in;
    use std::path::PathBuf;

    #[test]
    fn server_roots_come_from_the_server_table() {
        let check = |text: &str, expected: Result<Vec<&str>, ()>| {
            let got = roots_in(text).map_err(drop);
            let expected = expected.map(|v| v.into_iter().map(PathBuf::from).collect::<Vec<_>>());
            assert_eq!(got, expected, "{text}");
        };
        check(
            "[server]\nroots = [\"/srv/a\", \"/srv/b\"]\n",
            Ok(vec!["/srv/a", "/srv/b"]),
        );
        check("[server]\nroots = []\n", Ok(vec![]));
        check("default_provider = \"claude\"\n", Ok(vec![]));
        check("roots = [\"/srv/a\"]\n", Ok(vec![]));
        check("[server]\nroots = \"/srv/a\"\n", Err(()));
        check("[server]\nroots = [1]\n", Err(()));
        check("[server\n", Err(()));
    }
}
