//! [`SharedText`]: assistant text held once by everything that needs it.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Text shared between an event and the run's accumulator: a clone is a reference count,
/// not a second copy of a text that can run to tens of megabytes. Built from a `String`
/// without copying it (an `Arc<String>`, not an `Arc<str>`, which would copy). Serialises as
/// the plain string.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SharedText(Arc<String>);

impl SharedText {
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The text as an owned `String`: moved out when nothing else holds it, else copied.
    pub fn into_string(self) -> String {
        Arc::try_unwrap(self.0).unwrap_or_else(|shared| shared.as_ref().clone())
    }
}

impl Deref for SharedText {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl From<String> for SharedText {
    fn from(text: String) -> Self {
        SharedText(Arc::new(text))
    }
}

impl From<&str> for SharedText {
    fn from(text: &str) -> Self {
        SharedText(Arc::new(text.to_owned()))
    }
}

impl PartialEq<str> for SharedText {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl fmt::Debug for SharedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for SharedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clone_shares_the_text_and_the_last_holder_moves_it_out() {
        let text = SharedText::from(String::from("hello"));
        let clone = text.clone();
        assert!(std::ptr::eq(text.as_str(), clone.as_str()));
        assert_eq!(clone.into_string(), "hello");
        let pointer = text.as_ptr();
        let owned = text.into_string();
        assert_eq!(owned.as_ptr(), pointer, "moved, not copied");
    }

    #[test]
    fn serialises_as_the_plain_string() {
        let text = SharedText::from("a \"quoted\" line");
        let json = serde_json::to_string(&text).unwrap();
        assert_eq!(json, r#""a \"quoted\" line""#);
        assert_eq!(serde_json::from_str::<SharedText>(&json).unwrap(), text);
    }
}
