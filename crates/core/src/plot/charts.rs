//! Charts for the benchmark suites' analysis pages, drawn with `plotters` into SVG strings:
//! lines of series over a shared x axis (linear or logarithmic on either axis), grouped bars,
//! and a heatmap with its values written in the cells. The suites give data and labels; the
//! look (palette, sizes, fonts) is decided here once, so every suite's page looks alike.
//!
//! SVG text is laid out by the browser, so plotters' own text measure is only an estimate:
//! labels are kept short and margins generous.

use plotters::coord::combinators::BindKeyPoints;
use plotters::coord::ranged1d::{IntoSegmentedCoord, SegmentValue};
use plotters::prelude::*;

/// Why a chart could not be drawn (an empty data set is not an error: it gives a chart that
/// says so).
#[derive(Debug, thiserror::Error)]
#[error("cannot draw the chart '{title}': {message}")]
pub struct ChartError {
    pub title: String,
    pub message: String,
}

/// One line: its name in the legend and its points (x, y); points that a log axis cannot show
/// (≤ 0, not finite) are left out.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A chart of lines.
#[derive(Debug, Clone)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub log_y: bool,
    pub series: Vec<Series>,
    /// A horizontal reference line (e.g. ratio 1), drawn dashed.
    pub reference_y: Option<f64>,
}

/// Groups of bars: one group per category, one bar per series in each.
#[derive(Debug, Clone)]
pub struct BarChart {
    pub title: String,
    pub y_label: String,
    pub categories: Vec<String>,
    /// (series name, one value per category; `None` for a missing bar).
    pub series: Vec<(String, Vec<Option<f64>>)>,
    pub reference_y: Option<f64>,
}

/// A grid of values: rows × columns, each cell coloured by its value on a log scale around
/// `centre` (blue below, red above) and labelled with it.
#[derive(Debug, Clone)]
pub struct Heatmap {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub columns: Vec<String>,
    pub rows: Vec<String>,
    /// `values[row][column]`; `None` for an empty cell.
    pub values: Vec<Vec<Option<f64>>>,
    pub centre: f64,
}

/// One palette for every suite chart (colour-blind friendly Tableau 10).
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0x9c, 0x75, 0x5f),
];

const WIDTH: u32 = 720;
const HEIGHT: u32 = 440;

fn error(title: &str, e: impl std::fmt::Display) -> ChartError {
    ChartError {
        title: title.to_string(),
        message: e.to_string(),
    }
}

fn usable(v: f64, log: bool) -> bool {
    v.is_finite() && (!log || v > 0.0)
}

/// The range of `values` padded for drawing: a factor on a log axis, a share on a linear one.
fn padded_range(values: impl Iterator<Item = f64>, log: bool) -> Option<(f64, f64)> {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !(lo.is_finite() && hi.is_finite()) {
        return None;
    }
    Some(if log {
        let (lo, hi) = if lo == hi {
            (lo / 2.0, hi * 2.0)
        } else {
            (lo, hi)
        };
        (lo / 1.25, hi * 1.25)
    } else {
        let span = if hi > lo { hi - lo } else { hi.abs().max(1.0) };
        let lo = if lo >= 0.0 && lo - 0.05 * span < 0.0 {
            0.0
        } else {
            lo - 0.05 * span
        };
        (lo, hi + 0.08 * span)
    })
}

/// A number as an axis label: short, no trailing zeros.
pub fn axis_number(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".to_string()
    } else if a >= 1e6 {
        format!("{:.3}M", v / 1e6)
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
            + ""
    } else if a >= 1e3 {
        format!("{:.2}k", v / 1e3).replace(".00k", "k")
    } else if a >= 1.0 {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else if a >= 1e-4 {
        // Two significant digits: 0.5, 0.25, 0.002.
        let decimals = (-a.log10()).ceil() as usize + 1;
        let s = format!("{v:.decimals$}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{v:.1e}")
    }
}

fn empty_chart(title: &str, why: &str) -> Result<String, ChartError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, 120)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| error(title, e))?;
        root.draw(&Text::new(
            format!("{title}: {why}"),
            (20, 50),
            ("sans-serif", 16).into_font(),
        ))
        .map_err(|e| error(title, e))?;
        root.present().map_err(|e| error(title, e))?;
    }
    Ok(svg)
}
/// The y range grown at the top so the legend (upper left, one line per series) sits above the
/// data instead of over it.
fn legend_headroom(range: (f64, f64), log: bool, series: usize) -> (f64, f64) {
    // The legend's share of the plot's height: about 22 px a line plus its frame, of ~330 px.
    let share = ((series as f64 * 22.0 + 14.0) / 330.0).min(0.6);
    let grow = share / (1.0 - share);
    if log {
        (range.0, range.1 * (range.1 / range.0).powf(grow))
    } else {
        (range.0, range.1 + (range.1 - range.0) * grow)
    }
}

/// Key points of a log axis that holds no power of ten or only one (plotters labels only
/// those): the data's own values when there are a few (`data`, the T of a scan), else 1-2-5
/// steps inside the range. `None` keeps plotters' own.
fn log_key_points(
    range: (f64, f64),
    log: bool,
    data: impl Iterator<Item = f64>,
) -> Option<Vec<f64>> {
    let (lo, hi) = range;
    if !(log && lo > 0.0 && hi > lo) {
        return None;
    }
    let decades = (lo.log10().floor() as i32 + 1..=hi.log10().floor() as i32).count();
    if decades >= 2 {
        return None;
    }
    let mut values: Vec<f64> = data.filter(|v| *v >= lo && *v <= hi).collect();
    values.sort_by(f64::total_cmp);
    values.dedup();
    if (2..=12).contains(&values.len()) {
        return Some(values);
    }
    let mut steps = Vec::new();
    let mut decade = 10f64.powi(lo.log10().floor() as i32);
    while decade <= hi {
        for m in [1.0, 2.0, 5.0] {
            let v = m * decade;
            if v >= lo && v <= hi {
                steps.push(v);
            }
        }
        decade *= 10.0;
    }
    (steps.len() >= 2).then_some(steps)
}

/// Draws `chart` as an SVG document.
pub fn line_chart(chart: &LineChart) -> Result<String, ChartError> {
    let title = chart.title.as_str();
    let points: Vec<(f64, f64)> = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .filter(|&(x, y)| usable(x, chart.log_x) && usable(y, chart.log_y))
        .collect();
    let ys = points
        .iter()
        .map(|p| p.1)
        .chain(chart.reference_y.filter(|&r| usable(r, chart.log_y)));
    let (Some(x_range), Some(y_range)) = (
        padded_range(points.iter().map(|p| p.0), chart.log_x),
        padded_range(ys, chart.log_y),
    ) else {
        return empty_chart(title, "no data to draw");
    };
    let y_range = legend_headroom(y_range, chart.log_y, chart.series.len());
    let x_keys = log_key_points(x_range, chart.log_x, points.iter().map(|p| p.0));
    let y_keys = log_key_points(y_range, chart.log_y, std::iter::empty());
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| error(title, e))?;
        macro_rules! draw {
            ($x:expr, $y:expr) => {{
                let mut ctx = ChartBuilder::on(&root)
                    .caption(title, ("sans-serif", 18))
                    .margin(12)
                    .x_label_area_size(44)
                    .y_label_area_size(70)
                    .build_cartesian_2d($x, $y)
                    .map_err(|e| error(title, e))?;
                ctx.configure_mesh()
                    .label_style(("sans-serif", 15))
                    .axis_desc_style(("sans-serif", 16))
                    .x_desc(chart.x_label.as_str())
                    .y_desc(chart.y_label.as_str())
                    .x_labels(12)
                    .y_labels(6)
                    .x_label_formatter(&|v| axis_number(*v))
                    .y_label_formatter(&|v| axis_number(*v))
                    .light_line_style(WHITE)
                    .bold_line_style(RGBColor(0xe4, 0xe4, 0xe4))
                    .draw()
                    .map_err(|e| error(title, e))?;
                if let Some(r) = chart.reference_y.filter(|&r| usable(r, chart.log_y)) {
                    ctx.draw_series(DashedLineSeries::new(
                        vec![(x_range.0, r), (x_range.1, r)],
                        6,
                        4,
                        BLACK.mix(0.5).stroke_width(1),
                    ))
                    .map_err(|e| error(title, e))?;
                }
                for (i, s) in chart.series.iter().enumerate() {
                    let colour = PALETTE[i % PALETTE.len()];
                    let mut pts: Vec<(f64, f64)> = s
                        .points
                        .iter()
                        .copied()
                        .filter(|&(x, y)| usable(x, chart.log_x) && usable(y, chart.log_y))
                        .collect();
                    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                    ctx.draw_series(LineSeries::new(pts.clone(), colour.stroke_width(2)))
                        .map_err(|e| error(title, e))?
                        .label(s.name.as_str())
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(2))
                        });
                    ctx.draw_series(pts.iter().map(|&p| Circle::new(p, 3, colour.filled())))
                        .map_err(|e| error(title, e))?;
                }
                ctx.configure_series_labels()
                    .label_font(("sans-serif", 15))
                    .background_style(WHITE.mix(0.85))
                    .border_style(RGBColor(0xcc, 0xcc, 0xcc))
                    .position(SeriesLabelPosition::UpperLeft)
                    .draw()
                    .map_err(|e| error(title, e))?;
            }};
        }
        // A log axis spanning less than about a decade has no power of ten to label: it gets
        // its own key points instead (the data's x values, or 1-2-5 steps).
        let log_x = || (x_range.0..x_range.1).log_scale();
        let log_y = || (y_range.0..y_range.1).log_scale();
        match (chart.log_x, chart.log_y, x_keys, y_keys) {
            (true, true, Some(xk), Some(yk)) => {
                draw!(log_x().with_key_points(xk), log_y().with_key_points(yk))
            }
            (true, true, Some(xk), None) => draw!(log_x().with_key_points(xk), log_y()),
            (true, true, None, Some(yk)) => draw!(log_x(), log_y().with_key_points(yk)),
            (true, true, None, None) => draw!(log_x(), log_y()),
            (true, false, Some(xk), _) => {
                draw!(log_x().with_key_points(xk), y_range.0..y_range.1)
            }
            (true, false, None, _) => draw!(log_x(), y_range.0..y_range.1),
            (false, true, _, Some(yk)) => {
                draw!(x_range.0..x_range.1, log_y().with_key_points(yk))
            }
            (false, true, _, None) => draw!(x_range.0..x_range.1, log_y()),
            (false, false, _, _) => draw!(x_range.0..x_range.1, y_range.0..y_range.1),
        }
        root.present().map_err(|e| error(title, e))?;
    }
    Ok(svg)
}

/// Draws `chart` as an SVG document.
pub fn bar_chart(chart: &BarChart) -> Result<String, ChartError> {
    let title = chart.title.as_str();
    let values = chart
        .series
        .iter()
        .flat_map(|(_, v)| v.iter().flatten().copied())
        .filter(|v| v.is_finite())
        .chain(chart.reference_y);
    let Some((_, top)) = padded_range(values.chain(std::iter::once(0.0)), false) else {
        return empty_chart(title, "no data to draw");
    };
    if chart.categories.is_empty() || chart.series.is_empty() {
        return empty_chart(title, "no data to draw");
    }
    let n_series = chart.series.len() as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| error(title, e))?;
        let n_cat = chart.categories.len() as u32;
        let mut ctx = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d((0..n_cat * (n_series + 1)).into_segmented(), 0.0..top)
            .map_err(|e| error(title, e))?;
        let categories = chart.categories.clone();
        let group = n_series + 1;
        ctx.configure_mesh()
            .label_style(("sans-serif", 15))
            .axis_desc_style(("sans-serif", 16))
            .disable_x_mesh()
            .y_desc(chart.y_label.as_str())
            .y_label_formatter(&|v| axis_number(*v))
            .x_labels((n_cat * group) as usize)
            .x_label_formatter(&move |v| match v {
                SegmentValue::CenterOf(i) if i % group == n_series / 2 => categories
                    .get((i / group) as usize)
                    .cloned()
                    .unwrap_or_default(),
                _ => String::new(),
            })
            .light_line_style(RGBColor(0xee, 0xee, 0xee))
            .draw()
            .map_err(|e| error(title, e))?;
        for (s, (name, values)) in chart.series.iter().enumerate() {
            let colour = PALETTE[s % PALETTE.len()];
            let bars = values.iter().enumerate().filter_map(|(c, v)| {
                let v = (*v)?;
                v.is_finite().then(|| {
                    let slot = c as u32 * group + s as u32;
                    Rectangle::new(
                        [
                            (SegmentValue::Exact(slot), 0.0),
                            (SegmentValue::Exact(slot + 1), v),
                        ],
                        colour.filled(),
                    )
                })
            });
            ctx.draw_series(bars)
                .map_err(|e| error(title, e))?
                .label(name.as_str())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled())
                });
        }
        if let Some(r) = chart.reference_y {
            ctx.draw_series(std::iter::once(PathElement::new(
                vec![
                    (SegmentValue::Exact(0), r),
                    (SegmentValue::Exact(n_cat * group), r),
                ],
                BLACK.mix(0.5).stroke_width(1),
            )))
            .map_err(|e| error(title, e))?;
        }
        ctx.configure_series_labels()
            .label_font(("sans-serif", 15))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(0xcc, 0xcc, 0xcc))
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(|e| error(title, e))?;
        root.present().map_err(|e| error(title, e))?;
    }
    Ok(svg)
}

/// The colour of `value` on a log scale around `centre`: white at the centre, deeper blue
/// below and deeper red above, saturating at a factor of 10.
fn heat_colour(value: f64, centre: f64) -> RGBColor {
    let t = ((value / centre).log10()).clamp(-1.0, 1.0);
    let mix = |full: u8, t: f64| (255.0 - (255.0 - f64::from(full)) * t).round() as u8;
    if t < 0.0 {
        RGBColor(mix(0x4e, -t), mix(0x79, -t), mix(0xa7, -t))
    } else {
        RGBColor(mix(0xe1, t), mix(0x57, t), mix(0x59, t))
    }
}

/// Draws `map` as an SVG document.
pub fn heatmap(map: &Heatmap) -> Result<String, ChartError> {
    let title = map.title.as_str();
    if map.rows.is_empty() || map.columns.is_empty() {
        return empty_chart(title, "no data to draw");
    }
    let (n_rows, n_cols) = (map.rows.len() as u32, map.columns.len() as u32);
    let height = (120 + 48 * n_rows).max(220);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| error(title, e))?;
        let columns = map.columns.clone();
        let rows = map.rows.clone();
        let mut ctx = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(90)
            // A segmented integer range holds both its ends (0..n is n + 1 cells): 0..n-1 is n.
            .build_cartesian_2d(
                (0..n_cols - 1).into_segmented(),
                (0..n_rows - 1).into_segmented(),
            )
            .map_err(|e| error(title, e))?;
        ctx.configure_mesh()
            .label_style(("sans-serif", 15))
            .axis_desc_style(("sans-serif", 16))
            .disable_mesh()
            .x_desc(map.x_label.as_str())
            .y_desc(map.y_label.as_str())
            .x_labels(n_cols as usize)
            .y_labels(n_rows as usize)
            .x_label_formatter(&move |v| match v {
                SegmentValue::CenterOf(i) => columns.get(*i as usize).cloned().unwrap_or_default(),
                _ => String::new(),
            })
            .y_label_formatter(&move |v| match v {
                SegmentValue::CenterOf(i) => rows.get(*i as usize).cloned().unwrap_or_default(),
                _ => String::new(),
            })
            .draw()
            .map_err(|e| error(title, e))?;
        for (r, row) in map.values.iter().enumerate() {
            for (c, value) in row.iter().enumerate() {
                let (r, c) = (r as u32, c as u32);
                let cell = [
                    (SegmentValue::Exact(c), SegmentValue::Exact(r)),
                    (SegmentValue::Exact(c + 1), SegmentValue::Exact(r + 1)),
                ];
                let fill = match value {
                    Some(v) if v.is_finite() && *v > 0.0 => heat_colour(*v, map.centre),
                    _ => RGBColor(0xf3, 0xf3, 0xf3),
                };
                ctx.draw_series(std::iter::once(Rectangle::new(cell.clone(), fill.filled())))
                    .map_err(|e| error(title, e))?;
                // Grey borders: a cell at the centre value is white and would vanish otherwise.
                ctx.draw_series(std::iter::once(Rectangle::new(
                    cell,
                    RGBColor(0xd0, 0xd0, 0xd0).stroke_width(1),
                )))
                .map_err(|e| error(title, e))?;
                if let Some(v) = value.filter(|v| v.is_finite()) {
                    ctx.draw_series(std::iter::once(Text::new(
                        format!("{v:.2}"),
                        (SegmentValue::CenterOf(c), SegmentValue::CenterOf(r)),
                        ("sans-serif", 13).into_font().color(&BLACK).pos(
                            plotters::style::text_anchor::Pos::new(
                                plotters::style::text_anchor::HPos::Center,
                                plotters::style::text_anchor::VPos::Center,
                            ),
                        ),
                    )))
                    .map_err(|e| error(title, e))?;
                }
            }
        }
        root.present().map_err(|e| error(title, e))?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_svg(s: &str) -> bool {
        s.contains("<svg") && s.trim_end().ends_with("</svg>")
    }

    /// plotters writes each text element's content on a line of its own.
    fn has_text(svg: &str, text: &str) -> bool {
        svg.contains(&format!(">\n{text}\n</text>"))
    }

    #[test]
    fn a_log_log_line_chart_draws_every_series_and_its_legend() {
        let svg = line_chart(&LineChart {
            title: "time against T".into(),
            x_label: "T".into(),
            y_label: "ms".into(),
            log_x: true,
            log_y: true,
            series: vec![
                Series {
                    name: "cpu".into(),
                    points: vec![(128.0, 0.2), (256.0, 0.4), (512.0, 0.8)],
                },
                Series {
                    name: "torch".into(),
                    points: vec![(128.0, 20.0), (256.0, 41.0), (0.0, 3.0)],
                },
            ],
            reference_y: None,
        })
        .unwrap();
        assert!(is_svg(&svg));
        assert!(has_text(&svg, "cpu") && has_text(&svg, "torch"), "legend");
        assert!(svg.contains("time against T"));
        // Three dots for cpu, two for torch (T = 0 cannot sit on a log axis).
        assert_eq!(svg.matches("<circle").count(), 5);
    }

    #[test]
    fn a_log_axis_under_a_decade_is_labelled_at_its_data_and_the_legend_clears_the_data() {
        // T from 128 to 256: no power of ten inside, so plotters alone labels nothing.
        assert_eq!(
            log_key_points((102.0, 320.0), true, [128.0, 256.0].into_iter()),
            Some(vec![128.0, 256.0])
        );
        assert_eq!(
            log_key_points((0.3, 4.0), true, std::iter::empty()),
            Some(vec![0.5, 1.0, 2.0])
        );
        assert_eq!(
            log_key_points((1.0, 1000.0), true, std::iter::empty()),
            None
        );
        assert_eq!(log_key_points((1.0, 2.0), false, std::iter::empty()), None);
        let svg = line_chart(&LineChart {
            title: "time".into(),
            x_label: "T".into(),
            y_label: "ms".into(),
            log_x: true,
            log_y: true,
            series: vec![Series {
                name: "cpu".into(),
                points: vec![(128.0, 1.0), (256.0, 2.0)],
            }],
            reference_y: None,
        })
        .unwrap();
        assert!(has_text(&svg, "128") && has_text(&svg, "256"), "x labels");
        // The top of the data is below the legend: the y range grows by the legend's share.
        let (lo, hi) = legend_headroom((1.0, 2.0), false, 2);
        assert!(lo == 1.0 && hi > 2.0 + 0.15, "{hi}");
        let (_, hi) = legend_headroom((1.0, 10.0), true, 1);
        assert!(hi > 10.0 * 1.1, "{hi}");
    }

    #[test]
    fn a_chart_without_data_says_so() {
        let svg = line_chart(&LineChart {
            title: "nothing".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            log_x: true,
            log_y: true,
            series: vec![Series {
                name: "a".into(),
                points: vec![(-1.0, 2.0)],
            }],
            reference_y: None,
        })
        .unwrap();
        assert!(is_svg(&svg) && svg.contains("no data to draw"));
    }

    /// The numbers of `key="…"` in an SVG element.
    fn attr(element: &str, key: &str) -> Option<f64> {
        let start = element.find(&format!(" {key}=\""))? + key.len() + 3;
        let end = start + element[start..].find('"')?;
        element[start..end].parse().ok()
    }

    #[test]
    fn heatmap_cells_fill_the_axes_with_no_empty_row_or_column() {
        // A segmented range 0..n has n + 1 cells: the map once drew an empty row and column.
        let svg = heatmap(&Heatmap {
            title: "ratio".into(),
            x_label: "KC".into(),
            y_label: "backend".into(),
            columns: vec!["12".into(), "24".into()],
            rows: vec!["cpu".into(), "torch".into()],
            values: vec![vec![Some(0.01), Some(0.02)], vec![Some(1.0), Some(1.0)]],
            centre: 1.0,
        })
        .unwrap();
        // The filled cells (the background is the one at x = 0).
        let cells: Vec<(f64, f64, f64, f64)> = svg
            .split('<')
            .filter(|e| e.starts_with("rect ") && e.contains("stroke=\"none\""))
            .filter_map(|e| {
                Some((
                    attr(e, "x")?,
                    attr(e, "y")?,
                    attr(e, "width")?,
                    attr(e, "height")?,
                ))
            })
            .filter(|c| c.0 > 0.0)
            .collect();
        assert_eq!(cells.len(), 4, "{cells:?}");
        let right = cells.iter().map(|c| c.0 + c.2).fold(0.0, f64::max);
        let top = cells.iter().map(|c| c.1).fold(f64::MAX, f64::min);
        // The axes: the y axis is the vertical polyline from the top of the plot, the x axis
        // the horizontal one to its right end.
        let lines: Vec<Vec<(f64, f64)>> = svg
            .split("points=\"")
            .skip(1)
            .map(|rest| {
                rest[..rest.find('"').unwrap()]
                    .split_whitespace()
                    .filter_map(|p| {
                        let (x, y) = p.split_once(',')?;
                        Some((x.parse().ok()?, y.parse().ok()?))
                    })
                    .collect()
            })
            .collect();
        let axis_top = lines
            .iter()
            .filter(|l| l.len() == 2 && l[0].0 == l[1].0)
            .map(|l| l[0].1.min(l[1].1))
            .fold(f64::MAX, f64::min);
        let axis_right = lines
            .iter()
            .filter(|l| l.len() == 2 && l[0].1 == l[1].1)
            .map(|l| l[0].0.max(l[1].0))
            .fold(0.0, f64::max);
        assert!(
            (right - axis_right).abs() <= 2.0,
            "cells end at {right}, the x axis at {axis_right}"
        );
        assert!(
            (top - axis_top).abs() <= 2.0,
            "cells start at {top}, the y axis at {axis_top}"
        );
    }

    #[test]
    fn heatmap_cells_carry_their_values_and_colours_around_the_centre() {
        let svg = heatmap(&Heatmap {
            title: "ratio".into(),
            x_label: "KC".into(),
            y_label: "backend".into(),
            columns: vec!["12".into(), "24".into()],
            rows: vec!["cpu".into()],
            values: vec![vec![Some(0.05), None]],
            centre: 1.0,
        })
        .unwrap();
        assert!(is_svg(&svg));
        assert!(has_text(&svg, "0.05"));
        assert_eq!(heat_colour(1.0, 1.0), RGBColor(255, 255, 255));
        assert_eq!(heat_colour(0.01, 1.0), PALETTE[0]);
        assert_eq!(heat_colour(100.0, 1.0), PALETTE[3]);
    }

    #[test]
    fn bars_are_drawn_per_series_and_category() {
        let svg = bar_chart(&BarChart {
            title: "overhead".into(),
            y_label: "x Log".into(),
            categories: vec!["Max".into(), "Entropy".into()],
            series: vec![
                ("cpu".into(), vec![Some(1.1), Some(2.0)]),
                ("torch".into(), vec![Some(0.9), None]),
            ],
            reference_y: Some(1.0),
        })
        .unwrap();
        assert!(is_svg(&svg));
        assert!(has_text(&svg, "Max") && has_text(&svg, "Entropy"));
    }

    #[test]
    fn axis_numbers_are_short() {
        assert_eq!(axis_number(0.0), "0");
        assert_eq!(axis_number(128.0), "128");
        assert_eq!(axis_number(2.5), "2.5");
        assert_eq!(axis_number(1500.0), "1.50k");
        assert_eq!(axis_number(2000.0), "2k");
        assert_eq!(axis_number(0.004), "0.004");
        assert_eq!(axis_number(0.25), "0.25");
        assert_eq!(axis_number(0.00002), "2.0e-5");
    }
}
