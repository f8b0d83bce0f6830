//! The one `Range` header form receipts answer: a single byte range
//! (RFC 9110, section 14). Pure functions, so every edge is unit-tested.

use std::ops::Range;

/// One range of a `Range: bytes=...` header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByteRange {
    /// `a-b`: bytes a to b, both included.
    FromTo(u64, u64),
    /// `a-`: from byte a to the end.
    From(u64),
    /// `-n`: the last n bytes.
    Last(u64),
}

/// What a `Range` header asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeRequest {
    /// No header, another unit, several ranges or a malformed one: the
    /// whole file is sent with 200 (RFC 9110 lets a server ignore a
    /// `Range` it does not support or cannot parse).
    Whole,
    One(ByteRange),
}

/// Reads a `Range` header value.
pub fn parse(header: Option<&str>) -> RangeRequest {
    let Some(value) = header else {
        return RangeRequest::Whole;
    };
    let Some((unit, set)) = value.trim().split_once('=') else {
        return RangeRequest::Whole;
    };
    if !unit.trim().eq_ignore_ascii_case("bytes") || set.contains(',') {
        return RangeRequest::Whole;
    }
    let Some((first, last)) = set.trim().split_once('-') else {
        return RangeRequest::Whole;
    };
    let number = |text: &str| -> Option<u64> {
        let text = text.trim();
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        text.parse().ok()
    };
    let range = match (first.trim().is_empty(), last.trim().is_empty()) {
        (true, true) => return RangeRequest::Whole,
        (true, false) => number(last).map(ByteRange::Last),
        (false, true) => number(first).map(ByteRange::From),
        (false, false) => match (number(first), number(last)) {
            (Some(a), Some(b)) if a <= b => Some(ByteRange::FromTo(a, b)),
            _ => None,
        },
    };
    range.map_or(RangeRequest::Whole, RangeRequest::One)
}

impl ByteRange {
    /// The bytes this range selects of a file of `len` bytes (end
    /// excluded), or `None` when it selects none (a 416).
    pub fn resolve(self, len: u64) -> Option<Range<u64>> {
        match self {
            ByteRange::FromTo(a, _) | ByteRange::From(a) if a >= len => None,
            ByteRange::FromTo(a, b) => Some(a..b.saturating_add(1).min(len)),
            ByteRange::From(a) => Some(a..len),
            ByteRange::Last(n) if n == 0 || len == 0 => None,
            ByteRange::Last(n) => Some(len.saturating_sub(n)..len),
        }
    }
}

/// The `Content-Range` of a 206.
pub fn content_range(range: &Range<u64>, len: u64) -> String {
    format!(
        "bytes {}-{}/{len}",
        range.start,
        range.end.saturating_sub(1)
    )
}

/// The `Content-Range` of a 416.
pub fn unsatisfied(len: u64) -> String {
    format!("bytes */{len}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(range: ByteRange) -> RangeRequest {
        RangeRequest::One(range)
    }

    #[test]
    fn parses_the_three_forms_of_one_range() {
        assert_eq!(parse(Some("bytes=0-99")), one(ByteRange::FromTo(0, 99)));
        assert_eq!(parse(Some("bytes=5-5")), one(ByteRange::FromTo(5, 5)));
        assert_eq!(parse(Some("bytes=100-")), one(ByteRange::From(100)));
        assert_eq!(parse(Some("bytes=-20")), one(ByteRange::Last(20)));
        assert_eq!(parse(Some(" Bytes = 1 - 2 ")), one(ByteRange::FromTo(1, 2)));
        assert_eq!(parse(Some("bytes=-0")), one(ByteRange::Last(0)));
    }

    #[test]
    fn anything_else_means_the_whole_file() {
        for value in [
            "",
            "bytes",
            "bytes=",
            "bytes=-",
            "bytes=5-2",
            "bytes=a-b",
            "bytes=1-2,4-5",
            "bytes=+1-2",
            "bytes=1--2",
            "items=0-1",
            "bytes=99999999999999999999-",
        ] {
            assert_eq!(parse(Some(value)), RangeRequest::Whole, "{value:?}");
        }
        assert_eq!(parse(None), RangeRequest::Whole);
    }

    #[test]
    fn resolves_against_the_file_length() {
        assert_eq!(ByteRange::FromTo(0, 99).resolve(1000), Some(0..100));
        assert_eq!(ByteRange::FromTo(990, 2000).resolve(1000), Some(990..1000));
        assert_eq!(ByteRange::FromTo(0, u64::MAX).resolve(10), Some(0..10));
        assert_eq!(ByteRange::FromTo(1000, 1001).resolve(1000), None);
        assert_eq!(ByteRange::From(999).resolve(1000), Some(999..1000));
        assert_eq!(ByteRange::From(1000).resolve(1000), None);
        assert_eq!(ByteRange::Last(10).resolve(1000), Some(990..1000));
        assert_eq!(ByteRange::Last(5000).resolve(1000), Some(0..1000));
        assert_eq!(ByteRange::Last(0).resolve(1000), None);
        assert_eq!(ByteRange::Last(3).resolve(0), None);
    }

    #[test]
    fn content_ranges() {
        assert_eq!(content_range(&(0..100), 1000), "bytes 0-99/1000");
        assert_eq!(content_range(&(999..1000), 1000), "bytes 999-999/1000");
        assert_eq!(unsatisfied(1000), "bytes */1000");
    }
}
