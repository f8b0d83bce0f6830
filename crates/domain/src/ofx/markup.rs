//! The markup layer of OFX: bytes to text, and text to a tree of elements.
//!
//! One tolerant reader covers both dialects. OFX 1.x is SGML: a header of
//! `KEY:VALUE` lines, then tags where a leaf ("element") has no end tag
//! (`<TRNAMT>-12.34`) and only aggregates must be closed. OFX 2.x is XML:
//! processing instructions first, every tag closed. A start tag followed by
//! text is a leaf; an element that is closed only implicitly (by the end tag
//! of an enclosing aggregate) was an empty leaf, so anything nested under it
//! is handed back to its parent. An aggregate still open at the end means a
//! cut-short file, which is an error rather than a partial import.

use std::borrow::Cow;

use super::OfxError;

/// Deeper than any real statement (about 10 levels), and low enough that
/// walking the tree recursively is always safe.
pub const MAX_DEPTH: usize = 64;

/// An element of the document. Names are upper case; a leaf's value has its
/// entities decoded, control characters blanked and its ends trimmed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Element {
    pub name: String,
    pub value: Option<String>,
    pub children: Vec<Element>,
    /// Line of the start tag, 1-based.
    pub line: usize,
}

impl Element {
    /// The first child called `name`.
    pub fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    /// The value of the first child leaf called `name` that has one.
    pub fn leaf(&self, name: &str) -> Option<&str> {
        self.children
            .iter()
            .filter(|c| c.name == name)
            .find_map(|c| c.value.as_deref())
    }
}

/// The text of a file: UTF-8 when the bytes are valid UTF-8 (a leading
/// byte-order mark dropped), else Windows-1252, the `CHARSET:1252` of
/// Brazilian banks, which is also a superset of Latin-1's printable range.
pub fn decode(bytes: &[u8]) -> Cow<'_, str> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => Cow::Owned(bytes.iter().map(|&b| windows_1252(b)).collect()),
    }
}

/// Windows-1252 differs from Latin-1 only in 0x80..=0x9F; its five unused
/// bytes there map to the C1 controls, as browsers do.
fn windows_1252(byte: u8) -> char {
    const HIGH: [char; 32] = [
        '\u{20AC}', '\u{0081}', '\u{201A}', '\u{0192}', '\u{201E}', '\u{2026}', '\u{2020}',
        '\u{2021}', '\u{02C6}', '\u{2030}', '\u{0160}', '\u{2039}', '\u{0152}', '\u{008D}',
        '\u{017D}', '\u{008F}', '\u{0090}', '\u{2018}', '\u{2019}', '\u{201C}', '\u{201D}',
        '\u{2022}', '\u{2013}', '\u{2014}', '\u{02DC}', '\u{2122}', '\u{0161}', '\u{203A}',
        '\u{0153}', '\u{009D}', '\u{017E}', '\u{0178}',
    ];
    match byte {
        0x80..=0x9F => HIGH[usize::from(byte - 0x80)],
        _ => char::from(byte),
    }
}

/// Parses a document into a nameless root element holding its top-level
/// elements. Text outside any element (the SGML header) is ignored.
pub fn parse(text: &str) -> Result<Element, OfxError> {
    let mut tokens = Tokenizer {
        text,
        pos: 0,
        line: 1,
    };
    let mut stack = vec![Element::default()];
    // A leaf completed by its text: its XML end tag, if any, comes next.
    let mut open_leaf: Option<String> = None;
    while let Some((token, line)) = tokens.next_token()? {
        match token {
            Token::Open { name, empty } => {
                open_leaf = None;
                if stack.len() > MAX_DEPTH {
                    return Err(OfxError::TooDeep { line });
                }
                let element = Element {
                    name: name.to_ascii_uppercase(),
                    line,
                    ..Element::default()
                };
                if empty {
                    attach(&mut stack, element);
                } else {
                    stack.push(element);
                }
            }
            Token::Text(raw) => take_text(&mut stack, &mut open_leaf, &decode_entities(raw)),
            Token::CData(raw) => take_text(&mut stack, &mut open_leaf, raw),
            Token::Close(name) => {
                let name = name.to_ascii_uppercase();
                if open_leaf.take().as_deref() == Some(name.as_str()) {
                    continue;
                }
                // Index 0 of the search is stack[1]: the root never closes.
                let Some(index) = stack.iter().skip(1).rposition(|e| e.name == name) else {
                    return Err(OfxError::StrayClose {
                        element: name,
                        line,
                    });
                };
                while stack.len() > index + 2 {
                    close_implicitly(&mut stack);
                }
                if let Some(element) = stack.pop() {
                    attach(&mut stack, element);
                }
            }
        }
    }
    while stack.len() > 1 {
        if stack.last().is_some_and(|e| !e.children.is_empty()) {
            let element = stack.pop().unwrap_or_default();
            return Err(OfxError::Unclosed {
                element: element.name,
                line: element.line,
            });
        }
        close_implicitly(&mut stack);
    }
    Ok(stack.pop().unwrap_or_default())
}

/// Text right after a start tag is that leaf's value, and ends the leaf.
/// Other text (the SGML header, blanks between tags, text after children)
/// is noise.
fn take_text(stack: &mut Vec<Element>, open_leaf: &mut Option<String>, raw: &str) {
    let value = clean(raw);
    if value.is_empty() || stack.len() < 2 {
        return;
    }
    let Some(top) = stack.last_mut() else { return };
    if top.value.is_some() || !top.children.is_empty() {
        return;
    }
    top.value = Some(value);
    *open_leaf = Some(top.name.clone());
    close_implicitly(stack);
}

fn attach(stack: &mut [Element], element: Element) {
    if let Some(parent) = stack.last_mut() {
        parent.children.push(element);
    }
}

/// Pops the top element, which ends without an end tag: a leaf. Elements
/// read as its children were its siblings, so they go to its parent.
fn close_implicitly(stack: &mut Vec<Element>) {
    if stack.len() < 2 {
        return;
    }
    if let Some(mut element) = stack.pop() {
        let adopted = std::mem::take(&mut element.children);
        attach(stack, element);
        if let Some(parent) = stack.last_mut() {
            parent.children.extend(adopted);
        }
    }
}

/// Control characters (a NUL cannot even be stored) become spaces; the
/// ends are trimmed.
fn clean(text: &str) -> String {
    let text = text.trim();
    if text.chars().any(char::is_control) {
        text.chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect::<String>()
            .trim()
            .to_owned()
    } else {
        text.to_owned()
    }
}

/// Decodes `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;`, `&nbsp;` and
/// numeric references. Anything else keeps its `&`: SGML files often carry
/// a bare one ("C&A").
pub fn decode_entities(text: &str) -> Cow<'_, str> {
    if !text.contains('&') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let entity = rest
            .char_indices()
            .take(12)
            .find(|&(_, c)| c == ';')
            .and_then(|(end, _)| entity_char(&rest[1..end]).map(|c| (c, end)));
        match entity {
            Some((c, end)) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

fn entity_char(name: &str) -> Option<char> {
    let code = match name {
        "amp" => return Some('&'),
        "lt" => return Some('<'),
        "gt" => return Some('>'),
        "quot" => return Some('"'),
        "apos" => return Some('\''),
        "nbsp" => return Some(' '),
        _ => {
            let number = name.strip_prefix('#')?;
            match number.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => number.parse::<u32>().ok()?,
            }
        }
    };
    char::from_u32(code).filter(|&c| c != '\0')
}

#[derive(Debug)]
enum Token<'a> {
    Open { name: &'a str, empty: bool },
    Close(&'a str),
    Text(&'a str),
    CData(&'a str),
}

struct Tokenizer<'a> {
    text: &'a str,
    pos: usize,
    line: usize,
}

impl<'a> Tokenizer<'a> {
    /// Moves to `to`, counting the lines passed.
    fn advance(&mut self, to: usize) {
        let to = to.min(self.text.len());
        self.line += self.text[self.pos..to].matches('\n').count();
        self.pos = to;
    }

    /// Skips past `end` (or to the end of the text when it never comes).
    fn skip_past(&mut self, end: &str) {
        let to = self.text[self.pos..]
            .find(end)
            .map_or(self.text.len(), |i| self.pos + i + end.len());
        self.advance(to);
    }

    fn next_token(&mut self) -> Result<Option<(Token<'a>, usize)>, OfxError> {
        loop {
            let rest = &self.text[self.pos..];
            if rest.is_empty() {
                return Ok(None);
            }
            let line = self.line;
            if !starts_markup(rest) {
                let end = text_end(rest);
                let text = &rest[..end];
                self.advance(self.pos + end);
                return Ok(Some((Token::Text(text), line)));
            }
            if rest.starts_with("<!--") {
                self.skip_past("-->");
            } else if let Some(body) = rest.strip_prefix("<![CDATA[") {
                let end = body.find("]]>").unwrap_or(body.len());
                let text = &body[..end];
                self.skip_past("]]>");
                return Ok(Some((Token::CData(text), line)));
            } else if rest.starts_with("<?") {
                self.skip_past("?>");
            } else if rest.starts_with("<!") {
                self.skip_past(">");
            } else {
                let Some(end) = rest.find('>') else {
                    return Err(OfxError::UnterminatedTag { line });
                };
                let inner = &rest[1..end];
                self.advance(self.pos + end + 1);
                let token = match inner.strip_prefix('/') {
                    Some(name) => Token::Close(tag_name(name)),
                    None => Token::Open {
                        name: tag_name(inner),
                        empty: inner.ends_with('/'),
                    },
                };
                return Ok(Some((token, line)));
            }
        }
    }
}

/// Whether `text` starts with a tag, comment or declaration (a `<` before
/// anything else, like "<3", is text).
fn starts_markup(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next() == Some('<')
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || matches!(c, '/' | '!' | '?'))
}

/// Length of the text run at the start of `text`: up to the next markup.
fn text_end(text: &str) -> usize {
    let mut from = text.chars().next().map_or(0, char::len_utf8);
    while let Some(i) = text[from..].find('<') {
        let at = from + i;
        if starts_markup(&text[at..]) {
            return at;
        }
        from = at + 1;
    }
    text.len()
}

/// The name of a tag, without attributes or a trailing `/`.
fn tag_name(inner: &str) -> &str {
    let end = inner
        .find(|c: char| c.is_whitespace() || c == '/')
        .unwrap_or(inner.len());
    &inner[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(element: &Element) -> Vec<&str> {
        element.children.iter().map(|c| c.name.as_str()).collect()
    }

    #[test]
    fn sgml_leaves_need_no_end_tag() {
        let root = parse("HEADER:1\n\n<A>\n<B>one\n<C>two\n</A>").unwrap();
        let a = &root.children[0];
        assert_eq!(names(a), ["B", "C"]);
        assert_eq!(a.leaf("B"), Some("one"));
        assert_eq!(a.leaf("C"), Some("two"));
        assert_eq!(a.child("C").map(|c| c.line), Some(5));
    }

    #[test]
    fn an_empty_sgml_leaf_does_not_swallow_its_siblings() {
        let root = parse("<A><MEMO><FITID>1<NAME>x</A>").unwrap();
        assert_eq!(names(&root.children[0]), ["MEMO", "FITID", "NAME"]);
        assert_eq!(root.children[0].leaf("MEMO"), None);
    }

    #[test]
    fn xml_end_tags_of_leaves_are_accepted() {
        let root = parse("<?xml version=\"1.0\"?><A><B>1</B><C></C><D/></A>").unwrap();
        assert_eq!(names(&root.children[0]), ["B", "C", "D"]);
        assert_eq!(root.children[0].leaf("B"), Some("1"));
    }

    #[test]
    fn cut_short_and_stray_tags_are_errors() {
        assert_eq!(
            parse("<A>\n<B>\n<C>1").unwrap_err(),
            OfxError::Unclosed {
                element: "B".into(),
                line: 2
            }
        );
        assert_eq!(
            parse("<A></B></A>").unwrap_err(),
            OfxError::StrayClose {
                element: "B".into(),
                line: 1
            }
        );
        assert_eq!(
            parse("<A>\n<B").unwrap_err(),
            OfxError::UnterminatedTag { line: 2 }
        );
    }

    #[test]
    fn entities_comments_and_cdata() {
        let root =
            parse("<A><!-- x --><B>C&amp;A &lt;3 &#233;&#xE7; R&D<C><![CDATA[a&b]]></A>").unwrap();
        assert_eq!(root.children[0].leaf("B"), Some("C&A <3 éç R&D"));
        assert_eq!(root.children[0].leaf("C"), Some("a&b"));
        assert_eq!(decode_entities("&#0; &bogus; &"), "&#0; &bogus; &");
    }

    #[test]
    fn bytes_are_utf8_when_valid_else_windows_1252() {
        assert_eq!(decode("Pão".as_bytes()), "Pão");
        assert_eq!(decode(b"\xEF\xBB\xBFok"), "ok");
        assert_eq!(decode(b"P\xE3o \x80 \x93x\x94"), "Pão € \u{201C}x\u{201D}");
    }

    #[test]
    fn depth_is_bounded() {
        let deep = "<A>".repeat(100_000);
        assert!(matches!(parse(&deep), Err(OfxError::TooDeep { .. })));
    }
}
