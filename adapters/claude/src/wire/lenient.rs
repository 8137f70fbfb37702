//! Field types that never fail on a wrong JSON type.
//!
//! The CLI adds and reshapes fields every week. A derived struct with `String` or `u64`
//! fields rejects a whole line when one field changes type (or when an unknown event reuses
//! a field name with another shape), which would turn a harmless drift into a parse error.
//! Every field here reads what it understands and skips anything else, in the same single
//! borrowed pass (`deserialize_any` + `IgnoredAny` for skipped subtrees).

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A JSON value read leniently: each hook gets one JSON shape; the defaults drop it.
pub trait Leaf<'de>: Sized + Default {
    fn from_bool(_: bool) -> Self {
        Self::default()
    }
    fn from_u64(_: u64) -> Self {
        Self::default()
    }
    fn from_i64(_: i64) -> Self {
        Self::default()
    }
    fn from_f64(_: f64) -> Self {
        Self::default()
    }
    fn from_str(_: Cow<'de, str>) -> Self {
        Self::default()
    }
    fn from_seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Self::default())
    }
    fn from_map<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Self::default())
    }
}

/// Drives a [`Leaf`] from whatever JSON shape comes.
pub struct LeafVisitor<T>(PhantomData<T>);

pub fn deserialize_leaf<'de, T: Leaf<'de>, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    d.deserialize_any(LeafVisitor(PhantomData))
}

impl<'de, T: Leaf<'de>> Visitor<'de> for LeafVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<T, E> {
        Ok(T::from_bool(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<T, E> {
        Ok(T::from_u64(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<T, E> {
        Ok(T::from_i64(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<T, E> {
        Ok(T::from_f64(v))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<T, E> {
        Ok(T::from_str(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<T, E> {
        Ok(T::from_str(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<T, E> {
        Ok(T::from_str(Cow::Owned(v)))
    }
    fn visit_unit<E>(self) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_none<E>(self) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        deserialize_leaf(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        T::from_seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::from_map(map)
    }
}

/// Implements `Deserialize` through [`Leaf`].
macro_rules! leaf_deserialize {
    ($ty:ident $(<$lt:lifetime>)?) => {
        impl<'de $(: $lt)? $(, $lt)?> Deserialize<'de> for $ty $(<$lt>)? {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                deserialize_leaf(d)
            }
        }
    };
}

/// A string, or `None` for null, absent or any other type.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Str<'a>(pub Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Leaf<'de> for Str<'a> {
    fn from_str(v: Cow<'de, str>) -> Self {
        Str(Some(v))
    }
}
leaf_deserialize!(Str<'a>);

impl<'a> Str<'a> {
    pub fn as_deref(&self) -> Option<&str> {
        self.0.as_deref()
    }
    pub fn is(&self, want: &str) -> bool {
        self.as_deref() == Some(want)
    }
    pub fn owned(&self) -> Option<String> {
        self.0.as_ref().map(|s| s.clone().into_owned())
    }
    /// Moves the string out (borrowed text is copied once, here).
    pub fn take(&mut self) -> Option<String> {
        self.0.take().map(Cow::into_owned)
    }
}

/// A non-negative integer (whole floats accepted), or `None`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct U64(pub Option<u64>);

impl<'de> Leaf<'de> for U64 {
    fn from_u64(v: u64) -> Self {
        U64(Some(v))
    }
    fn from_i64(v: i64) -> Self {
        U64(u64::try_from(v).ok())
    }
    fn from_f64(v: f64) -> Self {
        // Checked first: finite, whole, non-negative and in range, so the cast is exact.
        let whole = v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v < u64::MAX as f64;
        U64(whole.then_some(v as u64))
    }
}
leaf_deserialize!(U64);

impl U64 {
    pub fn get(self) -> Option<u64> {
        self.0
    }
    pub fn get_u32(self) -> Option<u32> {
        self.0.and_then(|v| u32::try_from(v).ok())
    }
}

/// A number, or `None`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct F64(pub Option<f64>);

impl<'de> Leaf<'de> for F64 {
    fn from_u64(v: u64) -> Self {
        F64(Some(v as f64))
    }
    fn from_i64(v: i64) -> Self {
        F64(Some(v as f64))
    }
    fn from_f64(v: f64) -> Self {
        F64(Some(v))
    }
}
leaf_deserialize!(F64);

/// A boolean, or `None`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bool(pub Option<bool>);

impl<'de> Leaf<'de> for Bool {
    fn from_bool(v: bool) -> Self {
        Bool(Some(v))
    }
}
leaf_deserialize!(Bool);

impl Bool {
    pub fn is_true(self) -> bool {
        self.0 == Some(true)
    }
}

/// An object read as `T` (a derived struct of lenient fields), or `None` for other types.
#[derive(Debug, Clone, PartialEq)]
pub struct Obj<T>(pub Option<T>);

impl<T> Default for Obj<T> {
    fn default() -> Self {
        Obj(None)
    }
}

impl<'de, T: Deserialize<'de>> Leaf<'de> for Obj<T> {
    fn from_map<A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map)).map(|t| Obj(Some(t)))
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        deserialize_leaf(d)
    }
}

/// An array whose elements are read as `T` (itself lenient), or empty for other types.
#[derive(Debug, Clone, PartialEq)]
pub struct List<T>(pub Vec<T>);

impl<T> Default for List<T> {
    fn default() -> Self {
        List(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>> Leaf<'de> for List<T> {
    fn from_seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        // serde_json gives no size hint. Empty lists (most of them) allocate nothing; a
        // non-empty one starts at about 512 bytes: eight small items (the CLI's string lists,
        // tools), two content blocks. Staying under glibc's 1 KiB per-thread cache limit
        // matters: a larger request on every line sends malloc down its slow path
        // (consolidating freed chunks) far more often than the lists ever need the room.
        let first = (512 / std::mem::size_of::<T>().max(1)).clamp(1, 8);
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<T>()? {
            if items.is_empty() {
                items.reserve(seq.size_hint().unwrap_or(first));
            }
            items.push(item);
        }
        Ok(List(items))
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        deserialize_leaf(d)
    }
}

impl<'a> List<Str<'a>> {
    /// The string elements, in order; other elements are skipped.
    pub fn strings(&self) -> impl Iterator<Item = &str> {
        self.0.iter().filter_map(Str::as_deref)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Default)]
    #[serde(default)]
    struct Probe<'a> {
        #[serde(borrow)]
        s: Str<'a>,
        n: U64,
        f: F64,
        b: Bool,
        #[serde(borrow)]
        l: List<Str<'a>>,
    }

    fn check(json: &str, s: Option<&str>, n: Option<u64>, b: Option<bool>, l: &[&str]) {
        let p: Probe<'_> = serde_json::from_str(json).unwrap();
        assert_eq!(p.s.as_deref(), s, "{json}");
        assert_eq!(p.n.get(), n, "{json}");
        assert_eq!(p.b.0, b, "{json}");
        assert_eq!(p.l.strings().collect::<Vec<_>>(), l, "{json}");
    }

    #[test]
    fn wrong_types_read_as_absent() {
        check(
            r#"{"s":"x","n":3,"b":true,"l":["a",1,"b"]}"#,
            Some("x"),
            Some(3),
            Some(true),
            &["a", "b"],
        );
        check(
            r#"{"s":{"deep":[1,{"x":2}]},"n":"3","b":1,"l":{"a":1}}"#,
            None,
            None,
            None,
            &[],
        );
        check(
            r#"{"s":null,"n":-1,"b":null,"l":null}"#,
            None,
            None,
            None,
            &[],
        );
        check(r#"{"n":2.0,"f":1}"#, None, Some(2), None, &[]);
        check(r#"{"n":2.5}"#, None, None, None, &[]);
    }

    #[test]
    fn strings_without_escapes_are_borrowed() {
        let p: Probe<'_> = serde_json::from_str(r#"{"s":"plain"}"#).unwrap();
        assert!(matches!(p.s.0, Some(Cow::Borrowed("plain"))));
        let p: Probe<'_> = serde_json::from_str(r#"{"s":"a\nb"}"#).unwrap();
        assert_eq!(p.s.as_deref(), Some("a\nb"));
    }
}
