//! Page formats, styles and profiles of a PDF book, and the Typst preamble they make.

/// A paper size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PageFormat {
    /// ISO A4, 210 × 297 mm.
    A4,
    /// ISO A5, 148 × 210 mm (the default).
    #[default]
    A5,
    /// ISO A6, 105 × 148 mm.
    A6,
    /// ISO B5, 176 × 250 mm.
    B5,
    /// US Letter, 8.5 × 11 in.
    Letter,
}

impl PageFormat {
    /// Parses `a4`, `a5`, `a6`, `b5` or `letter` (ASCII case-insensitive).
    ///
    /// Errors: `INVALID_ARGUMENT` for anything else.
    pub fn parse(s: &str) -> Result<PageFormat, String> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "a4" => PageFormat::A4,
            "a5" => PageFormat::A5,
            "a6" => PageFormat::A6,
            "b5" => PageFormat::B5,
            "letter" => PageFormat::Letter,
            _ => {
                return Err(format!(
                    "`pageFormat` `{s}` is not one of a4, a5, a6, b5, letter"
                ));
            }
        })
    }

    /// Width and height in millimetres.
    pub fn size_mm(self) -> (f64, f64) {
        match self {
            PageFormat::A4 => (210.0, 297.0),
            PageFormat::A5 => (148.0, 210.0),
            PageFormat::A6 => (105.0, 148.0),
            PageFormat::B5 => (176.0, 250.0),
            PageFormat::Letter => (215.9, 279.4),
        }
    }
}

/// A typographic style.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Style {
    /// Small margins and type, sans-serif (the default).
    #[default]
    Compact,
    /// Serif, justified, generous margins, centred first-level headings.
    Classic,
    /// Sans-serif with coloured headings.
    Modern,
    /// Sans-serif, numbered headings, framed code.
    Technical,
    /// New Computer Modern, justified with indented paragraphs, numbered headings.
    Academic,
}

impl Style {
    /// Parses `compact`, `classic`, `modern`, `technical` or `academic`.
    ///
    /// Errors: `INVALID_ARGUMENT` for anything else.
    pub fn parse(s: &str) -> Result<Style, String> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "compact" => Style::Compact,
            "classic" => Style::Classic,
            "modern" => Style::Modern,
            "technical" => Style::Technical,
            "academic" => Style::Academic,
            _ => {
                return Err(format!(
                    "`style` `{s}` is not one of compact, classic, modern, technical, academic"
                ));
            }
        })
    }

    /// Margin in millimetres on an A5 page (scaled with the page width).
    fn margin_a5_mm(self) -> f64 {
        match self {
            Style::Compact => 12.0,
            Style::Classic => 18.0,
            Style::Modern => 15.0,
            Style::Technical => 14.0,
            Style::Academic => 17.0,
        }
    }

    /// Body text size in points on an A5 page.
    fn size_a5_pt(self) -> f64 {
        match self {
            Style::Compact => 9.5,
            Style::Classic | Style::Academic => 10.5,
            Style::Modern => 10.0,
            Style::Technical => 9.5,
        }
    }

    fn serif(self) -> bool {
        matches!(self, Style::Classic | Style::Academic)
    }
}

/// An image quality preset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Profile {
    /// 96 DPI, JPEG quality 65.
    Screen,
    /// 150 DPI, JPEG quality 82 (the default).
    #[default]
    Standard,
    /// 300 DPI, JPEG quality 95.
    Print,
}

impl Profile {
    /// Parses `screen`, `standard` or `print`.
    ///
    /// Errors: `INVALID_ARGUMENT` for anything else.
    pub fn parse(s: &str) -> Result<Profile, String> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "screen" => Profile::Screen,
            "standard" => Profile::Standard,
            "print" => Profile::Print,
            _ => {
                return Err(format!(
                    "`profile` `{s}` is not one of screen, standard, print"
                ));
            }
        })
    }

    /// The resolution images are reduced to, in pixels per inch of printed size.
    pub fn dpi(self) -> f64 {
        match self {
            Profile::Screen => 96.0,
            Profile::Standard => 150.0,
            Profile::Print => 300.0,
        }
    }

    /// The quality (1–100) of re-encoded JPEGs.
    pub fn jpeg_quality(self) -> u8 {
        match self {
            Profile::Screen => 65,
            Profile::Standard => 82,
            Profile::Print => 95,
        }
    }
}

/// Page format, style and profile of one export.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BookOptions {
    /// The paper size.
    pub page_format: PageFormat,
    /// The typographic style.
    pub style: Style,
    /// The image preset.
    pub profile: Profile,
}

/// The language a document is mostly written in, for line breaking, quotes and the
/// table of contents' title.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    /// English or another language without CJK characters.
    En,
    /// Japanese (any kana).
    Ja,
    /// Chinese (Han without kana).
    Zh,
    /// Korean (Hangul).
    Ko,
}

impl Lang {
    /// Guesses from the characters of `text`.
    pub fn detect(text: &str) -> Lang {
        let (mut kana, mut han, mut hangul) = (0usize, 0usize, 0usize);
        for c in text.chars() {
            match c as u32 {
                0x3040..=0x30ff | 0x31f0..=0x31ff | 0xff66..=0xff9f => kana += 1,
                0x4e00..=0x9fff | 0x3400..=0x4dbf | 0xf900..=0xfaff => han += 1,
                0xac00..=0xd7af | 0x1100..=0x11ff | 0x3130..=0x318f => hangul += 1,
                _ => {}
            }
        }
        if kana > 0 {
            Lang::Ja
        } else if hangul > han && hangul > 0 {
            Lang::Ko
        } else if han > 0 {
            Lang::Zh
        } else {
            Lang::En
        }
    }

    fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Ja => "ja",
            Lang::Zh => "zh",
            Lang::Ko => "ko",
        }
    }
}

/// Fonts tried in order for each kind of text; families not installed are left out by
/// [`preamble`]'s caller (`book::render`), and Typst falls back to any installed font for
/// characters none of them covers.
pub struct FontStacks {
    /// Body text.
    pub body: Vec<&'static str>,
    /// Code.
    pub mono: Vec<&'static str>,
}

const CJK_SANS_JA: [&str; 6] = [
    "Noto Sans CJK JP",
    "Noto Sans CJK SC",
    "Noto Sans CJK TC",
    "Noto Sans CJK KR",
    "WenQuanYi Micro Hei",
    "Droid Sans Fallback",
];
const CJK_SERIF_JA: [&str; 4] = [
    "Noto Serif CJK JP",
    "Noto Serif CJK SC",
    "Noto Serif CJK TC",
    "Noto Serif CJK KR",
];

/// The font stacks of `style` for a document in `lang`.
pub fn font_stacks(style: Style, lang: Lang) -> FontStacks {
    let mut cjk_sans: Vec<&'static str> = CJK_SANS_JA.to_vec();
    let mut cjk_serif: Vec<&'static str> = CJK_SERIF_JA.to_vec();
    // Han characters take the shapes of the document's language.
    let first = match lang {
        Lang::Zh => Some(1),
        Lang::Ko => Some(3),
        _ => None,
    };
    if let Some(i) = first {
        cjk_sans.swap(0, i);
        cjk_serif.swap(0, i);
    }
    let latin_sans = ["Noto Sans", "DejaVu Sans", "Liberation Sans"];
    let mut body: Vec<&'static str> = Vec::new();
    match style {
        Style::Academic => {
            body.push("New Computer Modern");
            body.extend(cjk_serif.iter().copied());
        }
        Style::Classic => {
            body.push("Libertinus Serif");
            body.extend(cjk_serif.iter().copied());
        }
        _ => body.extend(latin_sans),
    }
    body.extend(cjk_sans.iter().copied());
    body.push("Libertinus Serif");
    let mut mono = vec!["DejaVu Sans Mono", "Liberation Mono"];
    mono.extend(cjk_sans.iter().copied());
    FontStacks { body, mono }
}

/// The measures of a page in one format and style.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Geometry {
    /// Page width in points.
    pub page_w_pt: f64,
    /// Page height in points.
    pub page_h_pt: f64,
    /// Margin on every side in points.
    pub margin_pt: f64,
    /// Body text size in points.
    pub text_pt: f64,
}

const PT_PER_MM: f64 = 72.0 / 25.4;

impl Geometry {
    /// The geometry of `format` in `style`.
    pub fn new(format: PageFormat, style: Style) -> Geometry {
        let (w, h) = format.size_mm();
        let scale = w / 148.0;
        Geometry {
            page_w_pt: w * PT_PER_MM,
            page_h_pt: h * PT_PER_MM,
            margin_pt: style.margin_a5_mm() * scale * PT_PER_MM,
            text_pt: (style.size_a5_pt() * (0.85 + 0.15 * scale) * 10.0).round() / 10.0,
        }
    }

    /// The width of the text area in points.
    pub fn text_width_pt(&self) -> f64 {
        self.page_w_pt - 2.0 * self.margin_pt
    }

    /// The height of the text area in points.
    pub fn text_height_pt(&self) -> f64 {
        self.page_h_pt - 2.0 * self.margin_pt
    }
}

/// A Typst string literal holding `s`.
pub fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn array(items: &[&str]) -> String {
    let inner: Vec<String> = items.iter().map(|s| string(s)).collect();
    // A one-element array needs a trailing comma in Typst.
    format!("({},)", inner.join(", "))
}

/// The Typst preamble: document metadata, page, text, paragraphs, headings, code,
/// quotes, tables and links for `options`, with the font families given (already
/// filtered to installed ones).
pub fn preamble(
    options: &BookOptions,
    title: &str,
    lang: Lang,
    body_fonts: &[&str],
    mono_fonts: &[&str],
) -> String {
    let style = options.style;
    let g = Geometry::new(options.page_format, style);
    let mut out = String::new();
    out.push_str(&format!(
        "#set document(title: {}, keywords: ({},), date: none)\n",
        string(title),
        string(super::BOOK_MARK)
    ));
    out.push_str(&format!(
        "#set page(width: {:.2}pt, height: {:.2}pt, margin: {:.2}pt, numbering: \"1\", number-align: center + bottom)\n",
        g.page_w_pt, g.page_h_pt, g.margin_pt
    ));
    out.push_str(&format!(
        "#set text(font: {}, size: {}pt, lang: \"{}\", fallback: true)\n",
        array(body_fonts),
        g.text_pt,
        lang.code()
    ));
    let (justify, leading, spacing, indent) = match style {
        Style::Compact => (false, 0.55, 0.9, 0.0),
        Style::Classic => (true, 0.7, 1.0, 0.0),
        Style::Modern => (false, 0.65, 1.1, 0.0),
        Style::Technical => (false, 0.6, 1.0, 0.0),
        Style::Academic => (true, 0.65, 0.65, 1.2),
    };
    out.push_str(&format!(
        "#set par(justify: {justify}, leading: {leading}em, spacing: {spacing}em, first-line-indent: {indent}em)\n"
    ));
    out.push_str(&format!(
        "#show raw: set text(font: {}, size: 0.88em)\n",
        array(mono_fonts)
    ));
    let code_block = match style {
        Style::Technical => {
            "block(fill: luma(248), stroke: 0.5pt + luma(190), inset: 7pt, radius: 2pt, width: 100%, it)"
        }
        _ => "block(fill: luma(244), inset: 7pt, radius: 3pt, width: 100%, it)",
    };
    out.push_str(&format!(
        "#show raw.where(block: true): it => {code_block}\n"
    ));
    out.push_str("#show quote.where(block: true): set text(fill: luma(70))\n");
    out.push_str("#set table(stroke: 0.5pt + luma(170), inset: 5pt)\n");
    out.push_str("#show table.cell.where(y: 0): set text(weight: \"bold\")\n");
    out.push_str("#show figure: set block(breakable: false)\n");
    let link_colour = match style {
        Style::Modern => "rgb(\"#0b5394\")",
        _ => "rgb(\"#1a4fa0\")",
    };
    out.push_str(&format!(
        "#show link: it => if type(it.dest) == str {{ text(fill: {link_colour}, it) }} else {{ it }}\n"
    ));
    if matches!(style, Style::Technical | Style::Academic) {
        out.push_str("#set heading(numbering: \"1.1\")\n");
    }
    out.push_str("#show heading: set block(above: 1.3em, below: 0.7em)\n");
    match style {
        Style::Compact => {
            out.push_str("#show heading.where(level: 1): set text(size: 1.45em)\n");
            out.push_str("#show heading.where(level: 2): set text(size: 1.2em)\n");
        }
        Style::Classic => {
            out.push_str("#show heading.where(level: 1): set align(center)\n");
            out.push_str(
                "#show heading.where(level: 1): set text(size: 1.6em, weight: \"regular\")\n",
            );
            out.push_str("#show heading.where(level: 2): set text(size: 1.25em)\n");
        }
        Style::Modern => {
            out.push_str("#show heading: set text(fill: rgb(\"#0b5394\"))\n");
            out.push_str("#show heading.where(level: 1): set text(size: 1.7em)\n");
            out.push_str("#show heading.where(level: 2): set text(size: 1.3em)\n");
        }
        Style::Technical => {
            out.push_str("#show heading.where(level: 1): set text(size: 1.5em)\n");
            out.push_str("#show heading.where(level: 2): set text(size: 1.2em)\n");
        }
        Style::Academic => {
            out.push_str("#show heading.where(level: 1): set text(size: 1.4em)\n");
            out.push_str("#show heading.where(level: 2): set text(size: 1.15em)\n");
        }
    }
    if !style.serif() {
        out.push_str("#show heading: set text(weight: \"bold\")\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_options_and_rejects_others() {
        assert_eq!(PageFormat::parse("B5").unwrap(), PageFormat::B5);
        assert_eq!(Style::parse("academic").unwrap(), Style::Academic);
        assert_eq!(Profile::parse("print").unwrap().dpi(), 300.0);
        assert_eq!(
            PageFormat::parse("a3").unwrap_err(),
            "`pageFormat` `a3` is not one of a4, a5, a6, b5, letter"
        );
        assert_eq!(
            (
                Profile::Screen.jpeg_quality(),
                Profile::Standard.jpeg_quality()
            ),
            (65, 82)
        );
    }

    #[test]
    fn strings_and_languages() {
        assert_eq!(string("a \"b\" \\ c\n"), "\"a \\\"b\\\" \\\\ c\\n\"");
        assert_eq!(string("#set x \u{1}"), "\"#set x \\u{1}\"");
        assert_eq!(Lang::detect("日本語のテキスト"), Lang::Ja);
        assert_eq!(Lang::detect("中文文本"), Lang::Zh);
        assert_eq!(Lang::detect("plain text"), Lang::En);
        assert_eq!(Lang::detect("한국어 문장"), Lang::Ko);
    }

    #[test]
    fn geometry_scales_with_the_page() {
        let a5 = Geometry::new(PageFormat::A5, Style::Compact);
        assert!((a5.margin_pt - 12.0 * PT_PER_MM).abs() < 1e-9);
        assert_eq!(a5.text_pt, 9.5);
        let a4 = Geometry::new(PageFormat::A4, Style::Compact);
        assert!(a4.text_width_pt() > a5.text_width_pt());
    }
}
