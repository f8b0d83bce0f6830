//! Receipt files: which types are accepted, decided by the file's first
//! bytes (never by its name or a declared content type), how large one may
//! be, and the one form a stored file's name takes.

/// Largest accepted receipt: 10 MB.
pub const MAX_BYTES: u64 = 10 * 1024 * 1024;

/// Leading bytes that are enough to recognise every accepted type (an
/// ISO-BMFF `ftyp` box with up to 12 compatible brands).
pub const SNIFF_BYTES: usize = 64;

/// Bytes of randomness in a file name: 128 bits, written as 32 hex digits.
pub const NAME_RANDOM_BYTES: usize = 16;

/// The accepted types, for messages.
pub const ACCEPTED: &str = "JPEG, PNG, PDF, HEIC or WebP";

/// Brands of an ISO-BMFF `ftyp` box that mark a HEIF/HEIC image.
const HEIF_BRANDS: [&[u8; 4]; 10] = [
    b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"hevm", b"hevs", b"mif1", b"msf1",
];

/// AVIF files are HEIF containers too (they list `mif1`) but are not HEIC
/// and are not accepted.
const AVIF_BRANDS: [&[u8; 4]; 2] = [b"avif", b"avis"];

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReceiptKind {
    Jpeg,
    Png,
    Pdf,
    Heic,
    Webp,
}

impl ReceiptKind {
    pub const ALL: [ReceiptKind; 5] = [
        ReceiptKind::Jpeg,
        ReceiptKind::Png,
        ReceiptKind::Pdf,
        ReceiptKind::Heic,
        ReceiptKind::Webp,
    ];

    /// The type of a file from its leading bytes (at least
    /// [`SNIFF_BYTES`] of them when the file is that long); `None` for
    /// anything that is not an accepted type.
    pub fn sniff(head: &[u8]) -> Option<Self> {
        if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
            Some(ReceiptKind::Jpeg)
        } else if head.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(ReceiptKind::Png)
        } else if head.starts_with(b"%PDF-") {
            Some(ReceiptKind::Pdf)
        } else if head.len() >= 12 && head.starts_with(b"RIFF") && &head[8..12] == b"WEBP" {
            Some(ReceiptKind::Webp)
        } else if is_heic(head) {
            Some(ReceiptKind::Heic)
        } else {
            None
        }
    }

    /// Extension of stored files of this type.
    pub fn extension(self) -> &'static str {
        match self {
            ReceiptKind::Jpeg => "jpg",
            ReceiptKind::Png => "png",
            ReceiptKind::Pdf => "pdf",
            ReceiptKind::Heic => "heic",
            ReceiptKind::Webp => "webp",
        }
    }

    /// The `Content-Type` the file is served with.
    pub fn content_type(self) -> &'static str {
        match self {
            ReceiptKind::Jpeg => "image/jpeg",
            ReceiptKind::Png => "image/png",
            ReceiptKind::Pdf => "application/pdf",
            ReceiptKind::Heic => "image/heic",
            ReceiptKind::Webp => "image/webp",
        }
    }

    fn from_extension(extension: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.extension() == extension)
    }
}

/// An ISO-BMFF file whose `ftyp` box names a HEIF/HEIC brand, as major or
/// compatible brand, and no AVIF brand.
fn is_heic(head: &[u8]) -> bool {
    if head.len() < 16 || &head[4..8] != b"ftyp" {
        return false;
    }
    let size = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
    // Box header, major brand and minor version, then whole 4-byte brands.
    if size < 16 || !size.is_multiple_of(4) {
        return false;
    }
    let end = size.min(head.len());
    let brands = std::iter::once(&head[8..12]).chain(head[16..end].chunks_exact(4));
    let mut heif = false;
    for brand in brands {
        if AVIF_BRANDS.iter().any(|b| b.as_slice() == brand) {
            return false;
        }
        heif |= HEIF_BRANDS.iter().any(|b| b.as_slice() == brand);
    }
    heif
}

/// The stored name of a receipt: the random bytes in lowercase hex and the
/// type's extension.
pub fn file_name(random: &[u8; NAME_RANDOM_BYTES], kind: ReceiptKind) -> String {
    let mut name = crate::text::hex(random);
    name.push('.');
    name.push_str(kind.extension());
    name
}

/// The type of a stored name, when `name` has exactly the form
/// [`file_name`] produces (32 lowercase hex digits, a dot, a known
/// extension); `None` for anything else, so no other path is ever opened.
pub fn parse_name(name: &str) -> Option<ReceiptKind> {
    let (stem, extension) = name.split_once('.')?;
    let hex = |c: char| c.is_ascii_digit() || ('a'..='f').contains(&c);
    if stem.len() != 2 * NAME_RANDOM_BYTES || !stem.chars().all(hex) {
        return None;
    }
    ReceiptKind::from_extension(extension)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ftyp(major: &[u8; 4], compatible: &[&[u8; 4]]) -> Vec<u8> {
        let size = 16 + 4 * compatible.len() as u32;
        let mut out = size.to_be_bytes().to_vec();
        out.extend_from_slice(b"ftyp");
        out.extend_from_slice(major);
        out.extend_from_slice(&[0, 0, 0, 0]);
        for brand in compatible {
            out.extend_from_slice(*brand);
        }
        out.extend_from_slice(b"\0\0\x01\xadmeta");
        out
    }

    #[test]
    fn recognises_each_accepted_type_by_its_bytes() {
        let cases: [(&[u8], ReceiptKind); 5] = [
            (b"\xff\xd8\xff\xe0\0\x10JFIF\0", ReceiptKind::Jpeg),
            (b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", ReceiptKind::Png),
            (b"%PDF-1.4\n%\xe2\xe3\xcf\xd3", ReceiptKind::Pdf),
            (b"RIFF\xa6\0\0\0WEBPVP8 ", ReceiptKind::Webp),
            (
                &ftyp(b"heic", &[b"mif1", b"heic", b"miaf"]),
                ReceiptKind::Heic,
            ),
        ];
        for (bytes, kind) in cases {
            assert_eq!(ReceiptKind::sniff(bytes), Some(kind), "{bytes:?}");
        }
    }

    #[test]
    fn heif_brands_count_as_major_or_compatible_brand() {
        for brand in HEIF_BRANDS {
            assert_eq!(
                ReceiptKind::sniff(&ftyp(brand, &[])),
                Some(ReceiptKind::Heic)
            );
            assert_eq!(
                ReceiptKind::sniff(&ftyp(b"isom", &[b"iso2", brand])),
                Some(ReceiptKind::Heic)
            );
        }
    }

    #[test]
    fn refuses_other_iso_media_files() {
        // MP4 video, QuickTime, AVIF (a HEIF container listing mif1).
        assert_eq!(
            ReceiptKind::sniff(&ftyp(b"isom", &[b"iso2", b"mp41"])),
            None
        );
        assert_eq!(ReceiptKind::sniff(&ftyp(b"qt  ", &[b"qt  "])), None);
        assert_eq!(
            ReceiptKind::sniff(&ftyp(b"avif", &[b"avif", b"mif1", b"miaf"])),
            None
        );
        // Sizes that no ftyp box has.
        let mut odd = ftyp(b"heic", &[]);
        odd[3] = 17;
        assert_eq!(ReceiptKind::sniff(&odd), None);
        let mut tiny = ftyp(b"heic", &[]);
        tiny[3] = 8;
        assert_eq!(ReceiptKind::sniff(&tiny), None);
    }

    #[test]
    fn refuses_anything_else() {
        let cases: [&[u8]; 9] = [
            b"",
            b"\xff\xd8",
            b"\x89PNG",
            b"%PDF",
            b"RIFF\0\0\0\0WAVEfmt ",
            b"RIFF\0\0\0\0WEB",
            b"GIF89a\x01\0\x01\0",
            b"This is not a JPEG, just text.",
            b"<svg xmlns=\"http://www.w3.org/2000/svg\"/>",
        ];
        for bytes in cases {
            assert_eq!(ReceiptKind::sniff(bytes), None, "{bytes:?}");
        }
    }

    #[test]
    fn names_round_trip() {
        let random = [0xab; NAME_RANDOM_BYTES];
        for kind in ReceiptKind::ALL {
            let name = file_name(&random, kind);
            assert_eq!(name.len(), 33 + kind.extension().len());
            assert_eq!(parse_name(&name), Some(kind));
        }
        assert_eq!(
            file_name(&[0; NAME_RANDOM_BYTES], ReceiptKind::Png),
            "00000000000000000000000000000000.png"
        );
    }

    #[test]
    fn only_the_generated_form_is_a_name() {
        let stem = "0123456789abcdef0123456789abcdef";
        assert_eq!(parse_name(&format!("{stem}.pdf")), Some(ReceiptKind::Pdf));
        let bad = [
            String::new(),
            stem.to_owned(),
            format!("{stem}."),
            format!("{stem}.exe"),
            format!("{stem}.PDF"),
            format!("{stem}.pdf.pdf"),
            format!("{stem}.pdf/"),
            format!("{}.pdf", stem.to_uppercase()),
            format!("{}.pdf", &stem[1..]),
            format!("{stem}0.pdf"),
            format!("../{}.pdf", &stem[3..]),
            format!("..%2f{}.pdf", &stem[5..]),
            "../../etc/passwd".to_owned(),
            format!(".upload-{stem}.tmp"),
            format!("{}g.pdf", &stem[1..]),
            format!("{stem}\0.pdf"),
        ];
        for name in bad {
            assert_eq!(parse_name(&name), None, "{name:?}");
        }
    }
}
