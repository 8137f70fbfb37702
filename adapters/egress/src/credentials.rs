//! The placeholder → key swap on a route's requests: the real key is added outside the
//! sandbox, so the agent never holds it.

use http::header::{HeaderMap, HeaderValue};
use http::uri::{PathAndQuery, Uri};

use forge_domain::sandbox::{EgressKey, KeySlot};

/// Puts each credential's key where its placeholder is. Only the named header or query
/// parameter is touched; anything else carrying the placeholder is left as it is.
pub(crate) fn apply(credentials: &[EgressKey], headers: &mut HeaderMap, uri: &mut Uri) {
    for credential in credentials {
        match &credential.slot {
            KeySlot::Header(name) => replace_header(headers, name, credential),
            KeySlot::Query(name) => replace_query(uri, name, credential),
        }
    }
}

fn replace_header(headers: &mut HeaderMap, name: &str, credential: &EgressKey) {
    let Ok(name) = http::HeaderName::from_bytes(name.as_bytes()) else {
        return;
    };
    let http::header::Entry::Occupied(mut entry) = headers.entry(name) else {
        return;
    };
    for value in entry.iter_mut() {
        let Ok(text) = value.to_str() else {
            continue;
        };
        if !text.contains(&credential.placeholder) {
            continue;
        }
        let swapped = text.replace(&credential.placeholder, &credential.value);
        if let Ok(mut new) = HeaderValue::from_str(&swapped) {
            new.set_sensitive(true);
            *value = new;
        }
    }
}

fn replace_query(uri: &mut Uri, name: &str, credential: &EgressKey) {
    let Some(query) = uri.query() else {
        return;
    };
    let mut changed = false;
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((key, value)) if key == name && value == credential.placeholder => {
                changed = true;
                format!("{key}={}", encode_query_value(&credential.value))
            }
            _ => pair.to_owned(),
        })
        .collect();
    if !changed {
        return;
    }
    let path_and_query = format!("{}?{}", uri.path(), pairs.join("&"));
    let Ok(path_and_query) = PathAndQuery::try_from(path_and_query) else {
        return;
    };
    let mut parts = std::mem::take(uri).into_parts();
    parts.path_and_query = Some(path_and_query);
    if let Ok(new) = Uri::from_parts(parts) {
        *uri = new;
    }
}

/// Percent-encodes what is not an unreserved character (RFC 3986), so a key with `&` or `=`
/// stays one value.
fn encode_query_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "a panic is how a test fails")]

    use super::*;

    fn key(slot: KeySlot) -> EgressKey {
        EgressKey {
            slot,
            placeholder: "PH".to_owned(),
            value: "real&key".to_owned(),
        }
    }

    /// (slot, header name+value or uri, expected header value or uri)
    fn check(slot: KeySlot, header: Option<(&str, &str)>, uri: &str, expected: (&str, &str)) {
        let mut headers = HeaderMap::new();
        if let Some((name, value)) = header {
            headers.insert(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        let mut uri: Uri = uri.parse().unwrap();
        apply(&[key(slot)], &mut headers, &mut uri);
        let got_header = header
            .and_then(|(name, _)| headers.get(name))
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default();
        assert_eq!((got_header.as_str(), uri.to_string().as_str()), expected);
    }

    #[test]
    fn placeholders_are_swapped_only_in_their_slot() {
        use KeySlot::{Header, Query};
        let h = |n: &str| Header(n.to_owned());
        let q = |n: &str| Query(n.to_owned());
        check(
            h("x-api-key"),
            Some(("x-api-key", "PH")),
            "/v1/messages",
            ("real&key", "/v1/messages"),
        );
        check(
            h("X-Api-Key"),
            Some(("x-api-key", "PH")),
            "/",
            ("real&key", "/"),
        );
        check(
            h("authorization"),
            Some(("authorization", "Bearer PH")),
            "/v1/responses",
            ("Bearer real&key", "/v1/responses"),
        );
        check(
            h("x-goog-api-key"),
            Some(("x-goog-api-key", "PH")),
            "/",
            ("real&key", "/"),
        );
        check(
            q("key"),
            None,
            "/v1beta/m:gen?alt=sse&key=PH",
            ("", "/v1beta/m:gen?alt=sse&key=real%26key"),
        );
        // Look-alikes that must not be touched.
        check(h("x-api-key"), Some(("x-other", "PH")), "/", ("PH", "/"));
        check(
            h("x-api-key"),
            Some(("x-api-key", "not-the-placeholder")),
            "/",
            ("not-the-placeholder", "/"),
        );
        check(
            q("key"),
            None,
            "/a?apikey=PH&key=PHX",
            ("", "/a?apikey=PH&key=PHX"),
        );
        check(
            q("key"),
            Some(("x-api-key", "PH")),
            "/a?x=1",
            ("PH", "/a?x=1"),
        );
        check(h("authorization"), None, "/a?key=PH", ("", "/a?key=PH"));
    }
}
