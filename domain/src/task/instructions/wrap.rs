//! Forge's section around a pre-existing instruction file.
//!
//! Layout of the file while a task runs:
//!
//! ```text
//! <!-- forge-code-agent:begin len=<section bytes> original=<present|absent> … -->\n
//! <section>
//! <!-- forge-code-agent:end -->\n
//! <the original file's bytes, untouched>
//! ```
//!
//! The section's byte length in the begin marker makes [`unwrap`] independent of what the
//! section says (research notes may quote anything, this marker included): it skips exactly
//! that many bytes, checks the end marker there and hands back the rest byte for byte.
//! `original=absent` tells a file forge created (to be removed) from an empty one.

const BEGIN: &str = "<!-- forge-code-agent:begin len=";
const END: &str = "<!-- forge-code-agent:end -->\n";
const NOTE: &str = " (generated for a forge task; removed when it ends) -->\n";

/// Why a file could not be unwrapped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnwrapError {
    #[error("the file does not start with forge's begin marker")]
    NotWrapped,
    #[error("forge's begin marker is malformed")]
    BadMarker,
    #[error("forge's section was edited: the end marker is not where the begin marker says")]
    SectionEdited,
}

/// `section` around `original` (`None`: there was no file).
pub fn wrap(section: &str, original: Option<&[u8]>) -> Vec<u8> {
    let state = if original.is_some() {
        "present"
    } else {
        "absent"
    };
    let header = format!("{BEGIN}{} original={state}{NOTE}", section.len());
    let original = original.unwrap_or_default();
    let mut out = Vec::with_capacity(header.len() + section.len() + END.len() + original.len());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(section.as_bytes());
    out.extend_from_slice(END.as_bytes());
    out.extend_from_slice(original);
    out
}

/// Whether `bytes` is a file [`wrap`] wrote.
pub fn is_wrapped(bytes: &[u8]) -> bool {
    bytes.starts_with(BEGIN.as_bytes())
}

/// The original file: `Some(bytes)` to write back, `None` when there was none (remove the
/// file).
///
/// # Errors
/// [`UnwrapError`] when `bytes` is not a wrapped file or forge's section was edited.
pub fn unwrap(bytes: &[u8]) -> Result<Option<Vec<u8>>, UnwrapError> {
    let rest = bytes
        .strip_prefix(BEGIN.as_bytes())
        .ok_or(UnwrapError::NotWrapped)?;
    let header_end = rest
        .iter()
        .position(|&b| b == b'\n')
        .ok_or(UnwrapError::BadMarker)?;
    let header = std::str::from_utf8(&rest[..header_end]).map_err(|_| UnwrapError::BadMarker)?;
    let (len, tail) = header.split_once(' ').ok_or(UnwrapError::BadMarker)?;
    let len: usize = len.parse().map_err(|_| UnwrapError::BadMarker)?;
    let present = if tail.starts_with("original=present") {
        true
    } else if tail.starts_with("original=absent") {
        false
    } else {
        return Err(UnwrapError::BadMarker);
    };
    let body = &rest[header_end + 1..];
    let after_section = body.get(len..).ok_or(UnwrapError::SectionEdited)?;
    let original = after_section
        .strip_prefix(END.as_bytes())
        .ok_or(UnwrapError::SectionEdited)?;
    Ok(present.then(|| original.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwrap_restores_the_exact_original_bytes() {
        let tricky_section = format!("rules\n{END}{BEGIN}9 original=absent\n");
        for (section, original) in [
            ("# forge\n", None),
            ("# forge\n", Some(&b""[..])),
            (
                "# forge\n",
                Some(&b"# Project rules\r\nno trailing newline"[..]),
            ),
            (
                "no newline at end",
                Some(&b"\xff\xfe binary \x00 bytes\n\n"[..]),
            ),
            (tricky_section.as_str(), Some(END.as_bytes())),
            ("ü — unicode section\n", Some("ü original\n".as_bytes())),
        ] {
            let wrapped = wrap(section, original);
            assert!(is_wrapped(&wrapped));
            assert_eq!(
                unwrap(&wrapped),
                Ok(original.map(<[u8]>::to_vec)),
                "{section:?}"
            );
            if let Some(o) = original {
                assert!(wrapped.ends_with(o));
            }
        }
    }

    #[test]
    fn unwrap_refuses_what_it_did_not_write() {
        let wrapped = wrap("# forge\n", Some(b"orig"));
        let mut edited = wrapped.clone();
        let section_start = wrapped.iter().position(|&b| b == b'\n').unwrap() + 1;
        edited.insert(section_start + 3, b'x');
        for (bytes, expected) in [
            (&b"# Project rules\n"[..], UnwrapError::NotWrapped),
            (b"", UnwrapError::NotWrapped),
            (BEGIN.as_bytes(), UnwrapError::BadMarker),
            (
                b"<!-- forge-code-agent:begin len=x original=present -->\n",
                UnwrapError::BadMarker,
            ),
            (
                b"<!-- forge-code-agent:begin len=3 original=maybe -->\nabc",
                UnwrapError::BadMarker,
            ),
            (
                b"<!-- forge-code-agent:begin len=99 original=present -->\nabc",
                UnwrapError::SectionEdited,
            ),
            (&edited, UnwrapError::SectionEdited),
        ] {
            assert_eq!(
                unwrap(bytes),
                Err(expected),
                "{:?}",
                String::from_utf8_lossy(bytes)
            );
        }
    }
}

#[cfg(test)]
mod properties {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn wrap_then_unwrap_is_the_identity(
            section in any::<String>(),
            original in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..200)),
        ) {
            let wrapped = wrap(&section, original.as_deref());
            prop_assert_eq!(unwrap(&wrapped), Ok(original));
        }
    }
}
