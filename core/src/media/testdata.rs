//! Small images made in memory for tests: each format with known pixels.

use std::io::Cursor;

use image::{Rgb, RgbImage, Rgba, RgbaImage};

/// A `w`×`h` PNG filled with `rgb`.
pub fn png(w: u32, h: u32, rgb: [u8; 3]) -> Vec<u8> {
    encode(
        &RgbImage::from_pixel(w, h, Rgb(rgb)),
        image::ImageFormat::Png,
    )
}

/// A `w`×`h` baseline JPEG filled with `rgb` (no EXIF, ICC or Adobe segments).
pub fn jpeg(w: u32, h: u32, rgb: [u8; 3]) -> Vec<u8> {
    encode(
        &RgbImage::from_pixel(w, h, Rgb(rgb)),
        image::ImageFormat::Jpeg,
    )
}

/// A `w`×`h` lossless WebP filled with `rgb`.
pub fn webp(w: u32, h: u32, rgb: [u8; 3]) -> Vec<u8> {
    let img = RgbaImage::from_pixel(w, h, Rgba([rgb[0], rgb[1], rgb[2], 255]));
    let mut out = Vec::new();
    image::codecs::webp::WebPEncoder::new_lossless(&mut out)
        .encode(img.as_raw(), w, h, image::ExtendedColorType::Rgba8)
        .unwrap();
    out
}

/// A `w`×`h` GIF with two frames: the first filled with `first`, the second with `second`.
pub fn gif(w: u32, h: u32, first: [u8; 3], second: [u8; 3]) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut encoder = image::codecs::gif::GifEncoder::new(&mut out);
        encoder
            .set_repeat(image::codecs::gif::Repeat::Infinite)
            .unwrap();
        for rgb in [first, second] {
            let img = RgbaImage::from_pixel(w, h, Rgba([rgb[0], rgb[1], rgb[2], 255]));
            encoder.encode_frame(image::Frame::new(img)).unwrap();
        }
    }
    out
}

fn encode(img: &RgbImage, format: image::ImageFormat) -> Vec<u8> {
    let mut out = Vec::new();
    img.write_to(&mut Cursor::new(&mut out), format).unwrap();
    out
}

#[cfg(feature = "pdf-book")]
/// A deterministic photo-like image: smooth gradients with fine noise, which compresses
/// about as badly as a photograph.
pub fn photo(w: u32, h: u32) -> RgbImage {
    let mut state: u32 = 0x9e37_79b9;
    RgbImage::from_fn(w, h, |x, y| {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let noise = (state % 48) as i32 - 24;
        let fx = f64::from(x) / f64::from(w.max(1));
        let fy = f64::from(y) / f64::from(h.max(1));
        let base = [
            120.0 + 100.0 * (fx * 6.0).sin(),
            110.0 + 90.0 * (fy * 4.0 + fx).cos(),
            100.0 + 80.0 * ((fx + fy) * 3.0).sin(),
        ];
        let px = |v: f64| (v as i32 + noise).clamp(0, 255) as u8;
        Rgb([px(base[0]), px(base[1]), px(base[2])])
    })
}

#[cfg(feature = "pdf-book")]
/// [`photo`] as a JPEG of `quality` (no EXIF, ICC or Adobe segments).
pub fn noisy_jpeg(w: u32, h: u32, quality: u8) -> Vec<u8> {
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality)
        .encode_image(&photo(w, h))
        .unwrap();
    out
}

#[cfg(feature = "pdf-book")]
/// [`photo`] as a PNG without colour chunks.
pub fn noisy_png(w: u32, h: u32) -> Vec<u8> {
    encode(&photo(w, h), image::ImageFormat::Png)
}
