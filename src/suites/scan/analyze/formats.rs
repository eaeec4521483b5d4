//! The plots' file formats (the seed's `--format pdf|png|svg`): every plot is drawn once as
//! SVG (what `index.html` shows) and, for `pdf` or `png`, converted from that SVG with the
//! typst project's converters (`svg2pdf`, `resvg`), which share one SVG parser (`usvg`).
//! Text is laid out with the system's fonts (the first of DejaVu Sans, Liberation Sans, Noto
//! Sans, Arial found stands for `sans-serif`).

use std::str::FromStr;
use std::sync::{Arc, OnceLock};

use resvg::{tiny_skia, usvg};

/// A format of the plot files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlotFormat {
    Svg,
    Pdf,
    Png,
}

/// PNG pixels per SVG unit (the plots are 800 units wide: 1600 pixels).
const PNG_SCALE: f32 = 2.0;

impl FromStr for PlotFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "svg" => Ok(PlotFormat::Svg),
            "pdf" => Ok(PlotFormat::Pdf),
            "png" => Ok(PlotFormat::Png),
            _ => Err(format!("unknown format '{s}' (accepted: svg, pdf, png)")),
        }
    }
}

impl PlotFormat {
    pub fn extension(self) -> &'static str {
        match self {
            PlotFormat::Svg => "svg",
            PlotFormat::Pdf => "pdf",
            PlotFormat::Png => "png",
        }
    }

    /// The bytes of the file of this format for the plot `svg`.
    pub fn render(self, svg: &str) -> Result<Vec<u8>, String> {
        match self {
            PlotFormat::Svg => Ok(svg.as_bytes().to_vec()),
            PlotFormat::Pdf => {
                let tree = parse(svg)?;
                svg2pdf::to_pdf(
                    &tree,
                    svg2pdf::ConversionOptions::default(),
                    svg2pdf::PageOptions::default(),
                )
                .map_err(|e| format!("cannot convert the SVG to PDF: {e}"))
            }
            PlotFormat::Png => {
                let tree = parse(svg)?;
                let size = tree.size().to_int_size().scale_by(PNG_SCALE);
                let size = size.ok_or("the plot has no size")?;
                let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
                    .ok_or("the plot is too large for a PNG")?;
                pixmap.fill(tiny_skia::Color::WHITE);
                resvg::render(
                    &tree,
                    tiny_skia::Transform::from_scale(PNG_SCALE, PNG_SCALE),
                    &mut pixmap.as_mut(),
                );
                pixmap
                    .encode_png()
                    .map_err(|e| format!("cannot encode the PNG: {e}"))
            }
        }
    }
}

/// The system's fonts, loaded once per process.
fn fonts() -> Arc<usvg::fontdb::Database> {
    static FONTS: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let mut db = usvg::fontdb::Database::new();
            db.load_system_fonts();
            let has = |name: &str| {
                db.faces()
                    .any(|f| f.families.iter().any(|(family, _)| family == name))
            };
            let sans = ["DejaVu Sans", "Liberation Sans", "Noto Sans", "Arial"]
                .into_iter()
                .find(|name| has(name));
            if let Some(sans) = sans {
                db.set_sans_serif_family(sans);
            }
            Arc::new(db)
        })
        .clone()
}

fn parse(svg: &str) -> Result<usvg::Tree, String> {
    let options = usvg::Options {
        fontdb: fonts(),
        ..usvg::Options::default()
    };
    usvg::Tree::from_str(svg, &options).map_err(|e| format!("cannot read the SVG: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SVG: &str = r#"<svg xmlns="http://www.w3.org/2000/svg" width="80" height="40" viewBox="0 0 80 40"><rect x="5" y="5" width="30" height="30" fill="red"/><text x="40" y="25" font-family="sans-serif" font-size="12">T</text></svg>"#;

    #[test]
    fn an_svg_becomes_a_pdf_and_a_png() {
        let pdf = PlotFormat::Pdf.render(SVG).unwrap();
        assert!(pdf.starts_with(b"%PDF-"), "{:?}", &pdf[..8]);
        let png = PlotFormat::Png.render(SVG).unwrap();
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
        // 2 pixels per unit.
        let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
        assert_eq!(width, 160);
        assert_eq!("PDF".parse::<PlotFormat>(), Ok(PlotFormat::Pdf));
        assert!("jpg".parse::<PlotFormat>().is_err());
    }
}
