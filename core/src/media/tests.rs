//! Formats, signatures and the checks every image operation shares.

use super::testdata::{gif, jpeg, png, webp};
use super::*;

fn refusal(r: Result<ImageFormat, ImageError>) -> (ErrorCode, String) {
    let e = r.unwrap_err();
    (e.code(), e.to_string())
}

#[test]
fn formats_are_told_by_extension_mime_type_and_signature() {
    assert_eq!(ImageFormat::from_path("a/B.JPEG"), Some(ImageFormat::Jpeg));
    assert_eq!(ImageFormat::from_path("a.Webp"), Some(ImageFormat::WebP));
    assert_eq!(ImageFormat::from_path("a.svg"), None);
    assert_eq!(ImageFormat::from_path("png"), None);
    assert_eq!(
        ImageFormat::from_mime("image/jpg; q=1"),
        Some(ImageFormat::Jpeg)
    );
    assert_eq!(ImageFormat::from_mime("text/plain"), None);
    assert_eq!(
        ImageFormat::sniff(&png(1, 1, [0, 0, 0])),
        Some(ImageFormat::Png)
    );
    assert_eq!(
        ImageFormat::sniff(&jpeg(1, 1, [0, 0, 0])),
        Some(ImageFormat::Jpeg)
    );
    assert_eq!(
        ImageFormat::sniff(&webp(1, 1, [0, 0, 0])),
        Some(ImageFormat::WebP)
    );
    assert_eq!(
        ImageFormat::sniff(&gif(1, 1, [0, 0, 0], [1, 1, 1])),
        Some(ImageFormat::Gif)
    );
    assert_eq!(ImageFormat::sniff(b"hello"), None);
}

#[test]
fn check_image_refuses_each_kind_of_bad_bytes_with_its_code() {
    let label = "`x.png`";
    assert_eq!(
        refusal(check_image(b"", Some(ImageFormat::Png), label)),
        (
            ErrorCode::UnsupportedFormat,
            "`x.png` is empty (0 bytes), not an image".into()
        )
    );
    assert_eq!(
        refusal(check_image(b"just text", Some(ImageFormat::Png), label)),
        (
            ErrorCode::UnsupportedFormat,
            "`x.png` is not a PNG, JPEG, WebP or GIF image (its first bytes carry no image signature)"
                .into()
        )
    );
    assert_eq!(
        refusal(check_image(
            &jpeg(2, 2, [9, 9, 9]),
            Some(ImageFormat::Png),
            label
        )),
        (
            ErrorCode::UnsupportedFormat,
            "`x.png` is named as PNG but its bytes are JPEG".into()
        )
    );
    assert_eq!(
        refusal(check_image(b"\x89PNG\r\n\x1a\ntruncated", None, label)).0,
        ErrorCode::UnsupportedFormat
    );
    let mut huge = png(1, 1, [0, 0, 0]);
    huge.resize(MAX_IMAGE_BYTES as usize + 1, 0);
    assert_eq!(
        refusal(check_image(&huge, None, label)),
        (
            ErrorCode::InvalidArgument,
            "`x.png` is 26214401 bytes; images are at most 25 MiB (26214400 bytes)".into()
        )
    );
    assert_eq!(
        check_image(&webp(3, 2, [1, 2, 3]), Some(ImageFormat::WebP), label),
        Ok(ImageFormat::WebP)
    );
}

#[test]
fn a_gif_shows_its_first_frame_as_png() {
    let animated = gif(4, 3, [255, 0, 0], [0, 0, 255]);
    let frame = first_frame_png(&animated, "`a.gif`").unwrap();
    assert_eq!(ImageFormat::sniff(&frame), Some(ImageFormat::Png));
    let frame = image::load_from_memory_with_format(&frame, image::ImageFormat::Png)
        .unwrap()
        .to_rgba8();
    assert_eq!(frame.dimensions(), (4, 3));
    assert!(frame.pixels().all(|p| p.0 == [255, 0, 0, 255]));
}
