//! The provider's words kept with a report (`Report::detail`): a bounce's
//! diagnostic, an error code. They go to the decision trace, so they are
//! kept short and on one line.

/// The most characters of a detail kept.
pub const MAX_DETAIL_CHARS: usize = 200;

/// `s` on one line (control characters as spaces), trimmed, at most
/// [`MAX_DETAIL_CHARS`] characters (an ellipsis ends a cut one).
pub fn short(s: &str) -> String {
    let flat: String = s
        .trim()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() <= MAX_DETAIL_CHARS {
        return flat;
    }
    let mut cut: String = flat.chars().take(MAX_DETAIL_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_are_one_short_line() {
        assert_eq!(
            short("  550 5.1.1\r\nno such user "),
            "550 5.1.1  no such user"
        );
        let long = "x".repeat(500);
        let s = short(&long);
        assert_eq!(s.chars().count(), MAX_DETAIL_CHARS);
        assert!(s.ends_with('…'));
    }
}
