//! The password of a queue URL that carries none, as libpq finds it: `PGPASSWORD`, else the
//! password file (`PGPASSFILE`, else `~/.pgpass`), so a password never needs to be in a
//! command line, where `ps` shows it to every user of the machine.

use std::path::PathBuf;

/// What a connection is for, as a password file's lines match it.
pub(crate) struct Wanted<'a> {
    pub host: &'a str,
    pub port: u16,
    pub dbname: &'a str,
    pub user: &'a str,
}

/// The password from the environment `env` or the password file, if any.
pub(crate) fn find(wanted: &Wanted<'_>, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let set = |name: &str| env(name).filter(|v| !v.is_empty());
    if let Some(password) = set("PGPASSWORD") {
        return Some(password);
    }
    let file = set("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| set("HOME").map(|h| PathBuf::from(h).join(".pgpass")))?;
    let text = std::fs::read_to_string(file).ok()?;
    from_passfile(&text, wanted)
}

/// The first line of a password file (`hostname:port:database:username:password`, `*`
/// matching anything, `\:` and `\\` escaped, `#` comments) that matches `wanted`.
pub(crate) fn from_passfile(text: &str, wanted: &Wanted<'_>) -> Option<String> {
    let port = wanted.port.to_string();
    let want = [wanted.host, port.as_str(), wanted.dbname, wanted.user];
    text.lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .find_map(|line| {
            let fields = split_fields(line);
            let [host, port, db, user, password] = fields.as_slice() else {
                return None;
            };
            let matches = [host, port, db, user]
                .iter()
                .zip(want)
                .all(|(field, want)| field.as_str() == "*" || field.as_str() == want);
            matches.then(|| password.clone())
        })
}

fn split_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let (Some(next), Some(field)) = (chars.next(), fields.last_mut()) {
                    field.push(next);
                }
            }
            ':' => fields.push(String::new()),
            c => {
                if let Some(field) = fields.last_mut() {
                    field.push(c);
                }
            }
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_matching_line_wins() {
        let wanted = Wanted {
            host: "db.internal",
            port: 5432,
            dbname: "forge",
            user: "worker",
        };
        let check = |text: &str, expected: Option<&str>| {
            assert_eq!(from_passfile(text, &wanted).as_deref(), expected, "{text}");
        };
        check("db.internal:5432:forge:worker:s3cret\n", Some("s3cret"));
        check("*:*:*:worker:any\n", Some("any"));
        check(
            "# db.internal:5432:forge:worker:commented\n*:*:*:*:fallback\n",
            Some("fallback"),
        );
        check(
            "db.internal:5432:forge:worker:pa\\:ss\\\\word\n",
            Some("pa:ss\\word"),
        );
        check(
            "other:5432:forge:worker:x\ndb.internal:5432:forge:worker:second\n",
            Some("second"),
        );
        // Look-alikes that must not match: another port, user, database; a short line.
        check("db.internal:5433:forge:worker:x\n", None);
        check("db.internal:5432:forge:admin:x\n", None);
        check("db.internal:5432:other:worker:x\n", None);
        check("db.internal:5432:forge:worker\n", None);
        check("", None);
    }
}
