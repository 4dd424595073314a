//! Go's `omitempty` for serde: the zero values that `encoding/json` leaves out of the output.
//!
//! Strings, slices and maps are covered by `String::is_empty`, `Vec::is_empty` and `BTreeMap::is_empty`;
//! pointers by `Option::is_none`. Structs are never omitted by Go, so no helper exists for them.

/// `omitempty` on an integer.
pub(crate) fn is_zero_i32(v: &i32) -> bool {
    *v == 0
}

/// `omitempty` on a bool.
pub(crate) fn is_false(v: &bool) -> bool {
    !*v
}

/// `omitempty` on an int64.
pub(crate) fn is_zero_i64(v: &i64) -> bool {
    *v == 0
}
