//! The seed's plots, as SVG through the shared chart module (`replay_core::plot::charts`),
//! with the seed's file names (`.svg` where the seed writes `--format pdf|png|svg`).

use std::collections::BTreeMap;

use replay_core::plot::charts::{self, BarChart, ChartError, Heatmap, LineChart, Series};

use super::results::Measured;
use super::stats::{distinct, group_by, mean};
use super::tables::{BackwardForward, BaselineRatio, Overhead};

/// One drawn plot: its file name, a caption for the page, and the SVG.
pub struct Plot {
    pub file: String,
    pub caption: String,
    pub svg: String,
}

/// The value present in `values` closest to their median (the seed takes
/// `int(median)`, which need not be a value that was measured).
fn closest_to_median(mut values: Vec<u64>) -> Option<u64> {
    values.sort_unstable();
    let n = values.len();
    if n == 0 {
        return None;
    }
    let median = if n % 2 == 1 {
        values[n / 2] as f64
    } else {
        (values[n / 2 - 1] + values[n / 2]) as f64 / 2.0
    };
    values
        .into_iter()
        .min_by(|a, b| ((*a as f64 - median).abs()).total_cmp(&(*b as f64 - median).abs()))
}

/// A line per backend through the mean y of each x, in x's order (items without a y are left
/// out).
fn series_per_backend<'a, T: 'a>(
    items: impl IntoIterator<Item = &'a T>,
    backend: impl Fn(&'a T) -> &'a str,
    x: impl Fn(&T) -> u64,
    y: impl Fn(&T) -> Option<f64>,
) -> Vec<Series> {
    group_by(items, backend)
        .into_iter()
        .map(|(name, items)| {
            let mut at: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
            for item in items {
                if let Some(v) = y(item) {
                    at.entry(x(item)).or_default().push(v);
                }
            }
            Series {
                name: name.to_string(),
                points: at
                    .into_iter()
                    .filter_map(|(x, v)| Some((x as f64, mean(&v)?)))
                    .collect(),
            }
        })
        .collect()
}

/// Every plot for the rows of one semiring and phase.
pub fn per_semiring_phase(
    rows: &[Measured],
    ratios: &[BaselineRatio],
    baseline: &str,
    semiring: &str,
    phase: &str,
) -> Result<Vec<Plot>, ChartError> {
    let subset: Vec<&Measured> = rows
        .iter()
        .filter(|r| r.semiring == semiring && r.phase == phase)
        .collect();
    let mut plots = Vec::new();
    let Some(fixed_kc) = closest_to_median(subset.iter().map(|r| r.kc).collect()) else {
        return Ok(plots);
    };
    let fixed_t = closest_to_median(subset.iter().map(|r| r.t).collect()).unwrap_or(0);
    let largest_t = subset.iter().map(|r| r.t).max().unwrap_or(0);
    let tag = format!("{semiring}_{phase}");

    let line = |title: String, x: &str, y: &str, log_y: bool, series, reference_y| LineChart {
        title,
        x_label: x.to_string(),
        y_label: y.to_string(),
        log_x: true,
        log_y,
        series,
        reference_y,
    };
    let mut push = |file: String, caption: String, chart: &LineChart| -> Result<(), ChartError> {
        plots.push(Plot {
            file,
            caption,
            svg: charts::line_chart(chart)?,
        });
        Ok(())
    };

    push(
        format!("scalability_T_{tag}.svg"),
        format!("Time against sequence length T at KC = {fixed_kc} ({semiring}, {phase}); log-log: slope 1 is linear in T"),
        &line(
            format!("Time vs T (KC = {fixed_kc}, {semiring}, {phase})"),
            "sequence length T",
            "time (ms)",
            true,
            series_per_backend(subset.iter().copied().filter(|r| r.kc == fixed_kc), |r| &r.backend, |r| r.t, |r| Some(r.time_ms)),
            None,
        ),
    )?;
    push(
        format!("scalability_KC_{tag}_T{fixed_t}.svg"),
        format!("Time against state-space size KC at T = {fixed_t} ({semiring}, {phase})"),
        &line(
            format!("Time vs KC (T = {fixed_t}, {semiring}, {phase})"),
            "state-space size KC",
            "time (ms)",
            true,
            series_per_backend(
                subset.iter().copied().filter(|r| r.t == fixed_t),
                |r| &r.backend,
                |r| r.kc,
                |r| Some(r.time_ms),
            ),
            None,
        ),
    )?;
    push(
        format!("throughput_{tag}.svg"),
        format!("Throughput in million positions per second (B·T/s) against KC at T = {largest_t} ({semiring}, {phase})"),
        &line(
            format!("Throughput vs KC (T = {largest_t}, {semiring}, {phase})"),
            "state-space size KC",
            "M positions / s",
            true,
            series_per_backend(subset.iter().copied().filter(|r| r.t == largest_t), |r| &r.backend, |r| r.kc, |r| Some(r.positions_per_sec() / 1e6)),
            None,
        ),
    )?;
    push(
        format!("memory_efficiency_{tag}.svg"),
        format!("Peak memory per state-position (kB) against KC at T = {largest_t} ({semiring}, {phase}); flat means memory linear in T·KC"),
        &line(
            format!("Memory per state-position (T = {largest_t}, {semiring}, {phase})"),
            "state-space size KC",
            "kB per state-position",
            true,
            series_per_backend(subset.iter().copied().filter(|r| r.t == largest_t), |r| &r.backend, |r| r.kc, Measured::memory_per_state_kb),
            None,
        ),
    )?;

    let against: Vec<&BaselineRatio> = ratios
        .iter()
        .filter(|r| r.semiring == semiring && r.phase == phase && r.t == largest_t)
        .collect();
    if !against.is_empty() {
        for (metric, value) in [
            (
                "time",
                (|r: &BaselineRatio| Some(r.time_ratio)) as fn(&BaselineRatio) -> Option<f64>,
            ),
            ("memory", |r: &BaselineRatio| r.memory_ratio),
        ] {
            // Several (K, C) share a KC: one point per KC, their mean.
            let series =
                series_per_backend(against.iter().copied(), |r| &r.backend, |r| r.kc, value);
            push(
                format!("{metric}_ratio_baseline_{tag}.svg"),
                format!("{metric} over {baseline}'s at T = {largest_t} ({semiring}, {phase}); below 1 is better"),
                &line(
                    format!("{metric} ratio vs {baseline} (T = {largest_t}, {semiring}, {phase})"),
                    "state-space size KC",
                    &format!("{metric} / {baseline}"),
                    true,
                    series,
                    Some(1.0),
                ),
            )?;
        }
    }

    let all_t: Vec<&BaselineRatio> = ratios
        .iter()
        .filter(|r| r.semiring == semiring && r.phase == phase)
        .collect();
    if !all_t.is_empty() {
        let kcs = distinct(all_t.iter().map(|r| r.kc));
        let per_backend = group_by(all_t.iter().copied(), |r| r.backend.as_str());
        for (metric, value) in [
            (
                "time",
                (|r: &BaselineRatio| Some(r.time_ratio)) as fn(&BaselineRatio) -> Option<f64>,
            ),
            ("memory", |r: &BaselineRatio| r.memory_ratio),
        ] {
            let values = per_backend
                .values()
                .map(|rs| {
                    kcs.iter()
                        .map(|kc| {
                            let v: Vec<f64> = rs
                                .iter()
                                .filter(|r| r.kc == *kc)
                                .filter_map(|r| value(r))
                                .collect();
                            mean(&v)
                        })
                        .collect()
                })
                .collect();
            plots.push(Plot {
                file: format!("{metric}_ratio_heatmap_{tag}.svg"),
                caption: format!("{metric} over {baseline}'s per backend and KC, mean over T and the (K, C) of each KC ({semiring}, {phase})"),
                svg: charts::heatmap(&Heatmap {
                    title: format!("{metric} ratio vs {baseline} ({semiring}, {phase})"),
                    x_label: "state-space size KC".into(),
                    y_label: "backend".into(),
                    columns: kcs.iter().map(u64::to_string).collect(),
                    rows: per_backend.keys().map(|b| b.to_string()).collect(),
                    values,
                    centre: 1.0,
                })?,
            });
        }
    }
    Ok(plots)
}

/// `backward_forward_ratio_<semiring>.svg`: the ratio per backend against KC at the largest T.
pub fn backward_forward(
    pairs: &[BackwardForward],
    semiring: &str,
) -> Result<Option<Plot>, ChartError> {
    let subset: Vec<&BackwardForward> = pairs.iter().filter(|p| p.semiring == semiring).collect();
    let Some(largest_t) = subset.iter().map(|p| p.t).max() else {
        return Ok(None);
    };
    let series = series_per_backend(
        subset.iter().copied().filter(|p| p.t == largest_t),
        |p| &p.backend,
        |p| p.kc,
        |p| Some(p.ratio),
    );
    Ok(Some(Plot {
        file: format!("backward_forward_ratio_{semiring}.svg"),
        caption: format!(
            "Backward time over forward time against KC at T = {largest_t} ({semiring})"
        ),
        svg: charts::line_chart(&LineChart {
            title: format!("Backward / forward (T = {largest_t}, {semiring})"),
            x_label: "state-space size KC".into(),
            y_label: "backward / forward".into(),
            log_x: true,
            log_y: false,
            series,
            reference_y: Some(1.0),
        })?,
    }))
}

/// `semiring_overhead_<phase>.svg`: the mean time of Max and Entropy over Log's, per backend.
pub fn semiring_overhead(overheads: &[Overhead], phase: &str) -> Result<Option<Plot>, ChartError> {
    let subset: Vec<&Overhead> = overheads
        .iter()
        .filter(|o| o.phase == phase && o.semiring != "Log")
        .collect();
    let semirings = distinct(subset.iter().map(|o| o.semiring.clone()));
    if semirings.is_empty() {
        return Ok(None);
    }
    let series = group_by(subset.iter().copied(), |o| o.backend.as_str())
        .into_iter()
        .map(|(name, os)| {
            let values = semirings
                .iter()
                .map(|s| {
                    let v: Vec<f64> = os
                        .iter()
                        .filter(|o| &o.semiring == s)
                        .map(|o| o.overhead)
                        .collect();
                    mean(&v)
                })
                .collect();
            (name.to_string(), values)
        })
        .collect();
    Ok(Some(Plot {
        file: format!("semiring_overhead_{phase}.svg"),
        caption: format!(
            "Mean time of each semiring over Log's on the same configuration ({phase})"
        ),
        svg: charts::bar_chart(&BarChart {
            title: format!("Semiring overhead vs Log ({phase})"),
            y_label: "time / Log time".into(),
            categories: semirings,
            series,
            reference_y: Some(1.0),
        })?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixed_value_is_a_measured_one_near_the_median() {
        assert_eq!(closest_to_median(vec![12, 24, 36, 96]), Some(24));
        assert_eq!(closest_to_median(vec![128, 256, 512, 1024, 128]), Some(256));
        assert_eq!(closest_to_median(vec![]), None);
    }
}
