//! Image files: PNG, JPEG, WebP and GIF anywhere under the root.
//!
//! The rules every image operation shares, as plain functions: which extensions and MIME
//! types name which format, the signature check ([`check_image`]: not empty, at most
//! [`MAX_IMAGE_BYTES`], a known signature, the format the name says, a readable header),
//! a GIF's first frame as PNG, the listing order and its cursors ([`list`]), and the names
//! and Markdown references of saved images ([`names`]). The operations themselves, with
//! the path policy and the writer, are in `host::images`; downloads are in
//! [`crate::fetch`].

pub mod list;
pub mod names;

use std::io::Cursor;

use crate::codes::ErrorCode;

/// The largest image any image operation accepts: 25 MiB.
pub const MAX_IMAGE_BYTES: u64 = 25 * 1024 * 1024;

/// The folder images are saved to when no target path is given.
pub const DEFAULT_FOLDER: &str = "images";

/// The supported extensions, for messages.
pub const SUPPORTED: &str = ".png, .jpg, .jpeg, .webp or .gif";

/// A supported image format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImageFormat {
    /// PNG.
    Png,
    /// JPEG.
    Jpeg,
    /// WebP.
    WebP,
    /// GIF (87a or 89a).
    Gif,
}

impl ImageFormat {
    /// The MIME type, e.g. `image/png`.
    pub fn mime_type(self) -> &'static str {
        match self {
            ImageFormat::Png => "image/png",
            ImageFormat::Jpeg => "image/jpeg",
            ImageFormat::WebP => "image/webp",
            ImageFormat::Gif => "image/gif",
        }
    }

    /// The extension new files get, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            ImageFormat::Png => "png",
            ImageFormat::Jpeg => "jpg",
            ImageFormat::WebP => "webp",
            ImageFormat::Gif => "gif",
        }
    }

    /// A short name for messages.
    pub fn name(self) -> &'static str {
        match self {
            ImageFormat::Png => "PNG",
            ImageFormat::Jpeg => "JPEG",
            ImageFormat::WebP => "WebP",
            ImageFormat::Gif => "GIF",
        }
    }

    /// The format a file name's extension names (ASCII case-insensitive), if supported.
    pub fn from_path(path: &str) -> Option<ImageFormat> {
        let name = path.rsplit('/').next().unwrap_or(path);
        let (_, ext) = name.rsplit_once('.')?;
        match ext.to_ascii_lowercase().as_str() {
            "png" => Some(ImageFormat::Png),
            "jpg" | "jpeg" => Some(ImageFormat::Jpeg),
            "webp" => Some(ImageFormat::WebP),
            "gif" => Some(ImageFormat::Gif),
            _ => None,
        }
    }

    /// The format of a MIME type (parameters ignored; `image/jpg` is accepted for JPEG).
    pub fn from_mime(mime: &str) -> Option<ImageFormat> {
        let essence = mime.split(';').next().unwrap_or(mime).trim();
        match essence.to_ascii_lowercase().as_str() {
            "image/png" => Some(ImageFormat::Png),
            "image/jpeg" | "image/jpg" | "image/pjpeg" => Some(ImageFormat::Jpeg),
            "image/webp" => Some(ImageFormat::WebP),
            "image/gif" => Some(ImageFormat::Gif),
            _ => None,
        }
    }

    /// The format whose signature `bytes` start with.
    pub fn sniff(bytes: &[u8]) -> Option<ImageFormat> {
        if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(ImageFormat::Png)
        } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
            Some(ImageFormat::Jpeg)
        } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
            Some(ImageFormat::WebP)
        } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
            Some(ImageFormat::Gif)
        } else {
            None
        }
    }

    fn codec(self) -> image::ImageFormat {
        match self {
            ImageFormat::Png => image::ImageFormat::Png,
            ImageFormat::Jpeg => image::ImageFormat::Jpeg,
            ImageFormat::WebP => image::ImageFormat::WebP,
            ImageFormat::Gif => image::ImageFormat::Gif,
        }
    }
}

/// Why bytes are not an image folio accepts. `label` names the bytes in the message
/// (`` `images/a.png` ``, `the downloaded file`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    /// Zero bytes.
    #[error("{label} is empty (0 bytes), not an image")]
    Empty {
        /// What the bytes are.
        label: String,
    },
    /// Over [`MAX_IMAGE_BYTES`].
    #[error("{label} is {bytes} bytes; images are at most 25 MiB ({MAX_IMAGE_BYTES} bytes)")]
    TooLarge {
        /// What the bytes are.
        label: String,
        /// Their size.
        bytes: u64,
    },
    /// No PNG, JPEG, WebP or GIF signature.
    #[error(
        "{label} is not a PNG, JPEG, WebP or GIF image (its first bytes carry no image signature)"
    )]
    NoSignature {
        /// What the bytes are.
        label: String,
    },
    /// The name or declared MIME type says another format than the signature.
    #[error("{label} is {said} as {} but its bytes are {}", named.name(), actual.name())]
    Mismatch {
        /// What the bytes are.
        label: String,
        /// `named` or `declared`.
        said: &'static str,
        /// The format the name or MIME type says.
        named: ImageFormat,
        /// The format of the signature.
        actual: ImageFormat,
    },
    /// The signature is right but the codec cannot read the header or frame.
    #[error("{label} starts like a {} file but cannot be read as one: {reason}", format.name())]
    Unreadable {
        /// What the bytes are.
        label: String,
        /// The format of the signature.
        format: ImageFormat,
        /// The codec's message.
        reason: String,
    },
}

impl ImageError {
    /// The stable code: `INVALID_ARGUMENT` for the size, `UNSUPPORTED_FORMAT` otherwise.
    pub fn code(&self) -> ErrorCode {
        match self {
            ImageError::TooLarge { .. } => ErrorCode::InvalidArgument,
            _ => ErrorCode::UnsupportedFormat,
        }
    }
}

/// Checks `bytes` as a supported image: not empty, at most [`MAX_IMAGE_BYTES`], a known
/// signature, the same format as `named` (the format its file name says, when there is
/// one) and a header the codec reads. Returns the format.
pub fn check_image(
    bytes: &[u8],
    named: Option<ImageFormat>,
    label: &str,
) -> Result<ImageFormat, ImageError> {
    let label = label.to_string();
    if bytes.is_empty() {
        return Err(ImageError::Empty { label });
    }
    if bytes.len() as u64 > MAX_IMAGE_BYTES {
        return Err(ImageError::TooLarge {
            label,
            bytes: bytes.len() as u64,
        });
    }
    let Some(format) = ImageFormat::sniff(bytes) else {
        return Err(ImageError::NoSignature { label });
    };
    if let Some(named) = named
        && named != format
    {
        return Err(ImageError::Mismatch {
            label,
            said: "named",
            named,
            actual: format,
        });
    }
    dimensions(bytes, format).map_err(|reason| ImageError::Unreadable {
        label,
        format,
        reason,
    })?;
    Ok(format)
}

/// Pixel width and height from the header, read within the codec's memory limits.
pub fn dimensions(bytes: &[u8], format: ImageFormat) -> Result<(u32, u32), String> {
    let mut reader = image::ImageReader::with_format(Cursor::new(bytes), format.codec());
    reader.limits(image::Limits::default());
    reader.into_dimensions().map_err(|e| e.to_string())
}

/// The first frame of a GIF, encoded as PNG (still, no animation).
pub fn first_frame_png(gif: &[u8], label: &str) -> Result<Vec<u8>, ImageError> {
    let unreadable = |e: image::ImageError| ImageError::Unreadable {
        label: label.to_string(),
        format: ImageFormat::Gif,
        reason: e.to_string(),
    };
    let mut reader = image::ImageReader::with_format(Cursor::new(gif), image::ImageFormat::Gif);
    reader.limits(image::Limits::default());
    let frame = reader.decode().map_err(unreadable)?;
    let mut png = Vec::new();
    frame
        .write_to(&mut Cursor::new(&mut png), image::ImageFormat::Png)
        .map_err(unreadable)?;
    Ok(png)
}

#[cfg(test)]
pub(crate) mod testdata;

#[cfg(test)]
mod tests;
