//! The order yaml.v2 writes mapping keys in (its `sorter.go`), for string keys.
//!
//! It is a "natural" order: letters compare by code point, letters sort after non-letters, and
//! runs of digits compare by numeric value, so `a2` comes before `a10`.

/// Sorts keys as yaml.v2 does.
///
/// yaml.v2's comparison is not guaranteed to be a total order for every input, so this uses a
/// plain insertion sort (the algorithm Go's `sort.Sort` uses for the short slices typical of
/// objects) rather than a library sort that may reject an inconsistent comparator.
pub(crate) fn sort(keys: &mut [&String]) {
    for i in 1..keys.len() {
        let mut j = i;
        while j > 0 && less(keys[j], keys[j - 1]) {
            keys.swap(j, j - 1);
            j -= 1;
        }
    }
}

/// yaml.v2's `keyList.Less` for two strings.
///
/// Works on chars without collecting them: digits are ASCII, so digit runs can be scanned on bytes.
pub(crate) fn less(a: &str, b: &str) -> bool {
    let mut ai = a.char_indices();
    let mut bi = b.chars();
    loop {
        let (Some((pos, ac)), Some(bc)) = (ai.next(), bi.next()) else {
            return a.chars().count() < b.chars().count();
        };
        if ac == bc {
            continue;
        }
        let al = ac.is_alphabetic();
        let bl = bc.is_alphabetic();
        if al && bl {
            return ac < bc;
        }
        if al || bl {
            return bl;
        }
        // Both non-letters: compare the digit runs starting here by value. A run starting with
        // `0` in the middle of a number (preceded by a non-zero digit) is not a leading zero.
        // `a` and `b` share the same bytes up to `pos`.
        let (ab, bb) = (a.as_bytes(), b.as_bytes());
        let (mut an, mut bn) = (0i64, 0i64);
        if ac == '0' || bc == '0' {
            let preceding = ab[..pos].iter().rev().take_while(|c| c.is_ascii_digit());
            if preceding.clone().any(|&c| c != b'0') {
                an = 1;
                bn = 1;
            }
        }
        let run = |bytes: &[u8], n: &mut i64| {
            let len = bytes.iter().take_while(|c| c.is_ascii_digit()).count();
            for &d in &bytes[..len] {
                *n = n.wrapping_mul(10).wrapping_add(i64::from(d - b'0'));
            }
            len
        };
        let alen = run(&ab[pos..], &mut an);
        let blen = run(&bb[pos..], &mut bn);
        if an != bn {
            return an < bn;
        }
        if alen != blen {
            return alen < blen;
        }
        return ac < bc;
    }
}
