//! `index.html`: the headline figures, every plot (the SVG files beside it) and every table,
//! in one page that fetches nothing else.

use std::fmt::Write as _;
use std::path::Path;

use replay_core::plot::escape;
use serde_json::Value;

use super::plots::Plot;
use super::summary::AnalyzeSummary;
use super::tables::Table;

fn cell(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(f) if n.is_f64() => {
                if f != 0.0 && (f.abs() >= 1e6 || f.abs() < 1e-3) {
                    format!("{f:.3e}")
                } else {
                    format!("{}", (f * 1e4).round() / 1e4)
                }
            }
            _ => n.to_string(),
        },
        Some(Value::String(s)) => escape(s),
        Some(other) => escape(&other.to_string()),
    }
}

fn table_html(out: &mut String, table: &Table) {
    let _ = writeln!(
        out,
        "<h3 id=\"{0}\">{0}</h3>\n<div class=\"scroll\"><table>\n<tr>{1}</tr>",
        escape(table.file),
        table
            .columns
            .iter()
            .map(|c| format!("<th>{}</th>", escape(c)))
            .collect::<String>()
    );
    for row in &table.rows {
        let _ = writeln!(
            out,
            "<tr>{}</tr>",
            table
                .columns
                .iter()
                .map(|c| format!("<td>{}</td>", cell(row.get(c))))
                .collect::<String>()
        );
    }
    out.push_str("</table></div>\n");
}

pub fn render(input: &Path, summary: &AnalyzeSummary, tables: &[&Table], plots: &[Plot]) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<title>replay bench scan: analysis</title>\n<style>\
body{{font-family:system-ui,sans-serif;margin:24px;max-width:1500px;color:#222}}\
h1{{font-size:22px}} h2{{font-size:18px;margin-top:28px}} h3{{font-size:15px}}\
.plots{{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:16px}}\
figure{{margin:0;border:1px solid #ddd;padding:8px}} figure img{{width:100%}}\
figcaption{{font-size:13px;color:#555}}\
table{{border-collapse:collapse;font-size:12px}} td,th{{border:1px solid #ddd;padding:2px 6px;text-align:right}}\
th{{background:#f4f4f4}} .scroll{{max-height:360px;overflow:auto}} ul{{font-size:14px}}\
</style></head><body>\n<h1>Semiring scan: analysis of {}</h1>\n<p>{} timed configurations (status ok). \
Tables and plots as the seed's <code>analyze_benchmarks.py</code> makes them; ratios against <b>{}</b>.</p>\n",
        escape(&input.display().to_string()),
        summary.rows,
        escape(&summary.baseline)
    );
    out.push_str("<h2>Headline</h2>\n<ul>\n");
    for (backend, pps) in &summary.throughput {
        let _ = writeln!(
            out,
            "<li>{}: median throughput {:.3} M positions/s</li>",
            escape(backend),
            pps / 1e6
        );
    }
    for (backend, ratio) in &summary.against_baseline {
        let words = if *ratio < 1.0 {
            format!("{:.1}× faster", 1.0 / ratio)
        } else {
            format!("{ratio:.2}× slower")
        };
        let _ = writeln!(
            out,
            "<li>{} against {}: median time ratio {ratio:.4} ({words})</li>",
            escape(backend),
            escape(&summary.baseline)
        );
    }
    for (backend, ratio) in &summary.backward_forward {
        let _ = writeln!(
            out,
            "<li>{}: backward takes {ratio:.2}× the forward (mean)</li>",
            escape(backend)
        );
    }
    out.push_str("</ul>\n<h2>Plots</h2>\n<div class=\"plots\">\n");
    for plot in plots {
        let _ = writeln!(
            out,
            "<figure><img src=\"{0}\" alt=\"{1}\"><figcaption>{1} (<a href=\"{0}\">{0}</a>)</figcaption></figure>",
            escape(&plot.file),
            escape(&plot.caption)
        );
    }
    out.push_str("</div>\n<h2>Tables</h2>\n");
    for table in tables {
        table_html(&mut out, table);
    }
    out.push_str("</body></html>\n");
    out
}
