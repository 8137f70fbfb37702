//! Identifier newtypes. A raw `String` never crosses a port where one of these fits.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Why an identifier was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("{what} must not be empty")]
    Empty { what: &'static str },
    #[error("{what} {value:?} has a character outside [{allowed}]")]
    BadCharacter {
        what: &'static str,
        value: String,
        allowed: &'static str,
    },
    #[error("{what} is longer than {max} characters")]
    TooLong { what: &'static str, max: usize },
}

pub(crate) fn check(
    what: &'static str,
    value: &str,
    max: usize,
    allowed: &'static str,
    ok: impl Fn(char) -> bool,
) -> Result<(), IdError> {
    if value.is_empty() {
        return Err(IdError::Empty { what });
    }
    if value.len() > max {
        return Err(IdError::TooLong { what, max });
    }
    // Ids are nearly always ASCII: a byte loop, no UTF-8 decoding.
    let fine = if value.is_ascii() {
        value.bytes().all(|b| ok(char::from(b)))
    } else {
        value.chars().all(ok)
    };
    if !fine {
        return Err(IdError::BadCharacter {
            what,
            value: value.to_owned(),
            allowed,
        });
    }
    Ok(())
}

macro_rules! id_type {
    ($(#[$meta:meta])* $name:ident, $what:literal, $max:expr, $allowed:literal, $ok:expr) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// Checks and wraps `value`.
            ///
            /// # Errors
            /// [`IdError`] when the value is empty, too long or has a character outside the
            /// allowed set.
            pub fn new(value: impl Into<String>) -> Result<Self, IdError> {
                let value = value.into();
                check($what, &value, $max, $allowed, $ok)?;
                Ok(Self(value))
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::str::FromStr for $name {
            type Err = IdError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::new(s)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                Self::new(s).map_err(serde::de::Error::custom)
            }
        }
    };
}

id_type!(
    /// A provider's registry name: `claude`, `codex`, `gemini`, or a third party's.
    ProviderId,
    "provider id",
    64,
    "a-z0-9_-",
    |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_'
);

id_type!(
    /// One forge run; names its artifact directory `.forgecode/runs/<run_id>/`, so it is
    /// restricted to characters that are safe in a single path component.
    RunId,
    "run id",
    128,
    "A-Za-z0-9_.-",
    |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.'
);

id_type!(
    /// A CLI's own session (Claude session id, Codex thread id, Gemini session id). Opaque,
    /// but never contains whitespace or control characters so it is safe in argv.
    SessionId,
    "session id",
    512,
    "printable, no whitespace",
    // ASCII first (ids nearly always are): one range check instead of the Unicode tables.
    |c: char| if c.is_ascii() {
        c.is_ascii_graphic()
    } else {
        !c.is_whitespace() && !c.is_control()
    }
);

impl RunId {
    /// A run id must not be `.` or `..`, which would name a directory other than its own.
    pub fn is_path_safe(&self) -> bool {
        self.0 != "." && self.0 != ".."
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_ids_are_lowercase_names() {
        assert!(ProviderId::new("claude").is_ok());
        assert!(ProviderId::new("my-acp_2").is_ok());
        assert_eq!(
            ProviderId::new(""),
            Err(IdError::Empty {
                what: "provider id"
            })
        );
        assert!(matches!(
            ProviderId::new("Claude"),
            Err(IdError::BadCharacter { .. })
        ));
    }

    #[test]
    fn run_ids_refuse_path_separators() {
        assert!(RunId::new("0193-abc").is_ok());
        assert!(RunId::new("a/b").is_err());
        assert!(!RunId::new("..").unwrap().is_path_safe());
    }

    #[test]
    fn session_ids_refuse_whitespace_and_deserialize_checked() {
        assert!(SessionId::new("ca495d3c-2670").is_ok());
        assert!(SessionId::new("a b").is_err());
        // Every ASCII character is judged as the Unicode rule would judge it.
        for b in 0u8..0x80 {
            let c = char::from(b);
            assert_eq!(
                SessionId::new(format!("a{c}")).is_ok(),
                !c.is_whitespace() && !c.is_control(),
                "{b:#x}"
            );
        }
        assert!(SessionId::new("sessão-ü").is_ok());
        assert!(SessionId::new("a\u{a0}b").is_err());
        assert!(SessionId::new("a\u{85}b").is_err());
        let bad: Result<SessionId, _> = serde_json::from_str("\"a\\nb\"");
        assert!(bad.is_err());
    }
}
