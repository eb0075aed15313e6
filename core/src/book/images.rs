//! Images of a book: their printed size, and their bytes reduced to a profile's
//! resolution.
//!
//! Every image is printed at its natural size (one pixel is 1/96 inch), no wider than the
//! text and no taller than 60 % of the text height; this size does not depend on the
//! profile. A JPEG or PNG with more pixels than the profile's DPI needs at that size is
//! scaled down (Lanczos) and re-encoded: a JPEG at the profile's quality, a PNG
//! losslessly. The original bytes are kept when the image is small enough already, when
//! the re-encoded file would not be smaller, for JPEGs with EXIF, ICC or Adobe segments
//! and for PNGs with explicit colour information (`iCCP`, `sRGB`, `gAMA`, `cHRM`,
//! `cICP`), so that orientation and colour never change. WebP and GIF go to the
//! renderer as they are.

use std::io::Cursor;

use super::style::Profile;
use crate::media::ImageFormat;

/// Pixels per inch of an image's natural size.
const NATURAL_DPI: f64 = 96.0;

/// The printed width of an image of `px` pixels, in points.
pub fn printed_width_pt(px: (u32, u32), text_w_pt: f64, text_h_pt: f64) -> f64 {
    let (w, h) = (f64::from(px.0.max(1)), f64::from(px.1.max(1)));
    let natural = w * 72.0 / NATURAL_DPI;
    let mut width = natural.min(text_w_pt);
    let max_h = text_h_pt * 0.6;
    if width * h / w > max_h {
        width = max_h * w / h;
    }
    width
}

/// True when a JPEG carries EXIF (`APP1 Exif`), ICC (`APP2 ICC_PROFILE`) or Adobe
/// (`APP14 Adobe`) segments before its image data.
pub fn jpeg_has_colour_or_orientation_data(bytes: &[u8]) -> bool {
    let mut i = 2;
    while i + 4 <= bytes.len() {
        if bytes[i] != 0xff {
            return false;
        }
        let marker = bytes[i + 1];
        if marker == 0xd8 || marker == 0x01 || (0xd0..=0xd7).contains(&marker) {
            i += 2;
            continue;
        }
        if marker == 0xda || marker == 0xd9 {
            return false;
        }
        let len = usize::from(u16::from_be_bytes([bytes[i + 2], bytes[i + 3]]));
        let body = &bytes[(i + 4).min(bytes.len())..(i + 2 + len).min(bytes.len())];
        let tagged = match marker {
            0xe1 => body.starts_with(b"Exif\0"),
            0xe2 => body.starts_with(b"ICC_PROFILE\0"),
            0xee => body.starts_with(b"Adobe"),
            _ => false,
        };
        if tagged {
            return true;
        }
        i += 2 + len;
    }
    false
}

/// True when a PNG has a chunk that states its colour space before its image data.
pub fn png_has_colour_data(bytes: &[u8]) -> bool {
    let mut i = 8;
    while i + 8 <= bytes.len() {
        let len = u32::from_be_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]) as usize;
        let kind = &bytes[i + 4..i + 8];
        match kind {
            b"iCCP" | b"sRGB" | b"gAMA" | b"cHRM" | b"cICP" => return true,
            b"IDAT" | b"IEND" => return false,
            _ => {}
        }
        i = i.saturating_add(12).saturating_add(len);
    }
    false
}

/// What [`prepare`] did with one image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Treatment {
    /// Passed on as it is.
    Kept,
    /// Kept because it carries colour or orientation data.
    Protected,
    /// Scaled down to the given pixel width and re-encoded.
    Reduced(u32),
}

/// The bytes to embed for an image of `format` with `px` pixels, printed `width_pt` wide,
/// under `profile`.
pub fn prepare(
    bytes: &[u8],
    format: ImageFormat,
    px: (u32, u32),
    width_pt: f64,
    profile: Profile,
) -> (Vec<u8>, Treatment) {
    let target_w = (width_pt / 72.0 * profile.dpi()).ceil().max(1.0) as u32;
    if px.0 <= target_w || !matches!(format, ImageFormat::Jpeg | ImageFormat::Png) {
        return (bytes.to_vec(), Treatment::Kept);
    }
    let protected = match format {
        ImageFormat::Jpeg => jpeg_has_colour_or_orientation_data(bytes),
        _ => png_has_colour_data(bytes),
    };
    if protected {
        return (bytes.to_vec(), Treatment::Protected);
    }
    let target_h =
        ((f64::from(px.1) * f64::from(target_w) / f64::from(px.0)).round() as u32).max(1);
    let Some(reduced) = reencode(bytes, format, target_w, target_h, profile) else {
        return (bytes.to_vec(), Treatment::Kept);
    };
    if reduced.len() >= bytes.len() {
        return (bytes.to_vec(), Treatment::Kept);
    }
    (reduced, Treatment::Reduced(target_w))
}

fn reencode(
    bytes: &[u8],
    format: ImageFormat,
    w: u32,
    h: u32,
    profile: Profile,
) -> Option<Vec<u8>> {
    let codec = match format {
        ImageFormat::Jpeg => image::ImageFormat::Jpeg,
        _ => image::ImageFormat::Png,
    };
    let mut reader = image::ImageReader::with_format(Cursor::new(bytes), codec);
    reader.limits(image::Limits::default());
    let img = reader.decode().ok()?;
    let small = img.resize_exact(w, h, image::imageops::FilterType::Lanczos3);
    let mut out = Vec::new();
    match format {
        ImageFormat::Jpeg => {
            let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(
                &mut out,
                profile.jpeg_quality(),
            );
            let rgb = match small.color() {
                image::ColorType::L8 | image::ColorType::L16 => {
                    image::DynamicImage::ImageLuma8(small.to_luma8())
                }
                _ => image::DynamicImage::ImageRgb8(small.to_rgb8()),
            };
            rgb.write_with_encoder(encoder).ok()?;
        }
        _ => {
            let encoder = image::codecs::png::PngEncoder::new_with_quality(
                &mut out,
                image::codecs::png::CompressionType::Best,
                image::codecs::png::FilterType::Adaptive,
            );
            small.write_with_encoder(encoder).ok()?;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::testdata;

    #[test]
    fn printed_size_is_natural_then_capped_by_the_text_area() {
        // 96 px is one inch, 72 pt.
        assert_eq!(printed_width_pt((96, 48), 300.0, 500.0), 72.0);
        assert_eq!(printed_width_pt((4000, 3000), 300.0, 500.0), 300.0);
        // A tall image is capped at 60 % of the text height.
        assert_eq!(printed_width_pt((1000, 4000), 300.0, 500.0), 75.0);
    }

    #[test]
    fn colour_and_orientation_segments_are_found() {
        let plain = testdata::jpeg(8, 8, [1, 2, 3]);
        assert!(!jpeg_has_colour_or_orientation_data(&plain));
        // SOI, then an APP1 Exif segment, then the rest of a plain JPEG.
        let mut exif = vec![0xff, 0xd8, 0xff, 0xe1, 0x00, 0x08];
        exif.extend_from_slice(b"Exif\0\0");
        exif.extend_from_slice(&plain[2..]);
        assert!(jpeg_has_colour_or_orientation_data(&exif));
        let mut adobe = vec![0xff, 0xd8, 0xff, 0xee, 0x00, 0x07];
        adobe.extend_from_slice(b"Adobe");
        adobe.extend_from_slice(&plain[2..]);
        assert!(jpeg_has_colour_or_orientation_data(&adobe));

        let png = testdata::png(8, 8, [1, 2, 3]);
        assert!(!png_has_colour_data(&png));
        // Insert an sRGB chunk after IHDR (8-byte signature + 25-byte IHDR chunk).
        let mut srgb = png[..33].to_vec();
        srgb.extend_from_slice(&[0, 0, 0, 1]);
        srgb.extend_from_slice(b"sRGB\0");
        srgb.extend_from_slice(&[0xae, 0xce, 0x1c, 0xe9]);
        srgb.extend_from_slice(&png[33..]);
        assert!(png_has_colour_data(&srgb));
    }

    #[test]
    fn large_images_are_reduced_small_and_protected_ones_kept() {
        let big = testdata::noisy_jpeg(1200, 800, 95);
        // Printed 144 pt (2 in) wide: 192 px at screen, 300 at standard, 600 at print.
        for (profile, want) in [
            (Profile::Screen, 192),
            (Profile::Standard, 300),
            (Profile::Print, 600),
        ] {
            let (bytes, treatment) = prepare(&big, ImageFormat::Jpeg, (1200, 800), 144.0, profile);
            assert_eq!(treatment, Treatment::Reduced(want), "{profile:?}");
            let img = image::load_from_memory(&bytes).unwrap();
            assert_eq!(
                (img.width(), img.height()),
                (want, (800.0 * f64::from(want) / 1200.0).round() as u32)
            );
            assert!(bytes.len() < big.len());
        }
        let small = testdata::jpeg(100, 50, [1, 2, 3]);
        assert_eq!(
            prepare(&small, ImageFormat::Jpeg, (100, 50), 144.0, Profile::Screen),
            (small.clone(), Treatment::Kept)
        );
        let mut exif = vec![0xff, 0xd8, 0xff, 0xe1, 0x00, 0x08];
        exif.extend_from_slice(b"Exif\0\0");
        exif.extend_from_slice(&big[2..]);
        assert_eq!(
            prepare(
                &exif,
                ImageFormat::Jpeg,
                (1200, 800),
                144.0,
                Profile::Screen
            ),
            (exif.clone(), Treatment::Protected)
        );
        let gif = testdata::gif(1200, 10, [0, 0, 0], [1, 1, 1]);
        assert_eq!(
            prepare(&gif, ImageFormat::Gif, (1200, 10), 144.0, Profile::Screen).1,
            Treatment::Kept
        );
        let png = testdata::noisy_png(1000, 1000);
        let (reduced, treatment) = prepare(
            &png,
            ImageFormat::Png,
            (1000, 1000),
            72.0,
            Profile::Standard,
        );
        assert_eq!(treatment, Treatment::Reduced(150));
        assert_eq!(image::load_from_memory(&reduced).unwrap().width(), 150);
    }
}
