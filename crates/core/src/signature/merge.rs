//! Signature files of the ranks of one job merged into one: what `replay classify` writes for
//! several rank traces, and what `replay merge` makes of per-rank (or per-shard) files. The
//! same function does both, so classifying a job in one run and classifying its ranks one by
//! one and merging give the same bytes.
//!
//! A signature is the same work on every rank (its id is a hash of its key), so a signature
//! that appears on several ranks is one signature: its counts and times are summed in whole
//! nanoseconds over the ranks and each rank's share is kept ([`RankShare`]). Everything that
//! describes the work (op, inputs, GEMM parameters) is the lowest rank's. Sums are exact and
//! every list is put in an order that does not depend on how the ranks were grouped into
//! parts, so merging merged files gives the same file as merging their ranks at once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::classify::{mean_us, ns, sort_signatures, summarise, total_ns, us};
use super::schema::{
    CompiledCode, HostOverhead, LinkingReport, RankShare, RankSource, Signature, SignatureFile,
    Totals, UnattributedGroup, Unit, SCHEMA_VERSION,
};

/// One input of a merge: a signature file and, for a file of one trace, its rank.
#[derive(Debug, Clone)]
pub struct MergePart {
    /// Where the file came from (named in errors).
    pub path: PathBuf,
    pub file: SignatureFile,
    /// The rank of a one-trace file; ignored for a file that already lists its ranks.
    pub rank: u32,
}

impl MergePart {
    /// The ranks this part covers, each with its trace and totals.
    pub fn rank_sources(&self) -> Vec<RankSource> {
        if self.file.ranks.is_empty() {
            vec![RankSource {
                rank: self.rank,
                source: self.file.source.clone(),
                total: self.file.summary.total,
            }]
        } else {
            self.file.ranks.clone()
        }
    }
}

/// Parts that cannot be one job's signature file.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("nothing to merge")]
    Empty,
    #[error("{path}: its signatures count {unit:?} work, those of {other} count {other_unit:?}: not the traces of one job")]
    Unit {
        path: PathBuf,
        unit: Unit,
        other: PathBuf,
        other_unit: Unit,
    },
    #[error("{path}: rank {rank} is also in {other}: a rank may be merged once")]
    DuplicateRank {
        path: PathBuf,
        rank: u32,
        other: PathBuf,
    },
}

/// A signature being merged: the template (lowest rank's) and every rank's share.
struct Merged {
    template: Signature,
    template_rank: u32,
    shares: Vec<RankShare>,
    streams: Vec<i64>,
}

/// The job's signature file from its parts (any order). One part of one trace is returned
/// as it is: a single trace's file does not change.
pub fn merge(parts: &[MergePart]) -> Result<SignatureFile, MergeError> {
    let first = parts.first().ok_or(MergeError::Empty)?;
    if parts.len() == 1 && first.file.ranks.is_empty() {
        return Ok(first.file.clone());
    }
    let unit = first.file.summary.unit;
    let mut sources: BTreeMap<u32, (RankSource, &Path)> = BTreeMap::new();
    for part in parts {
        if part.file.summary.unit != unit {
            return Err(MergeError::Unit {
                path: part.path.clone(),
                unit: part.file.summary.unit,
                other: first.path.clone(),
                other_unit: unit,
            });
        }
        for source in part.rank_sources() {
            if let Some((_, other)) = sources.get(&source.rank) {
                return Err(MergeError::DuplicateRank {
                    path: part.path.clone(),
                    rank: source.rank,
                    other: other.to_path_buf(),
                });
            }
            sources.insert(source.rank, (source, &part.path));
        }
    }

    let mut merged: BTreeMap<String, Merged> = BTreeMap::new();
    for part in parts {
        for signature in &part.file.signatures {
            let shares = shares_of(part, signature);
            let lowest = shares.iter().map(|s| s.rank).min().unwrap_or(part.rank);
            let entry = merged
                .entry(signature.id.clone())
                .or_insert_with(|| Merged {
                    template: signature.clone(),
                    template_rank: lowest,
                    shares: Vec::new(),
                    streams: Vec::new(),
                });
            if lowest < entry.template_rank {
                entry.template = signature.clone();
                entry.template_rank = lowest;
            }
            entry.shares.extend(shares);
            entry.streams.extend(&signature.streams);
        }
    }
    let mut signatures: Vec<Signature> = merged.into_values().map(finish_signature).collect();
    sort_signatures(&mut signatures);

    let unattributed = merge_unattributed(parts);
    let unattributed_totals = Totals {
        invocations: parts
            .iter()
            .map(|p| p.file.summary.unattributed.invocations)
            .sum(),
        total_us: us(total_ns(
            parts
                .iter()
                .map(|p| ns(p.file.summary.unattributed.total_us)),
        )),
    };
    let ranks: Vec<RankSource> = sources.into_values().map(|(s, _)| s).collect();
    let mut source = ranks[0].source.clone();
    source.json_bytes = ranks.iter().map(|r| r.source.json_bytes).sum();
    source.linking = ranks.iter().fold(LinkingReport::default(), |sum, r| {
        add_linking(sum, &r.source.linking)
    });
    Ok(SignatureFile {
        schema_version: SCHEMA_VERSION,
        source,
        summary: summarise(unit, &signatures, unattributed_totals),
        signatures,
        unattributed,
        host_overhead: merge_host_overhead(parts),
        compiled_code: merge_compiled_code(parts),
        ranks,
    })
}

/// A signature's invocations per rank in one part.
fn shares_of(part: &MergePart, signature: &Signature) -> Vec<RankShare> {
    if !signature.ranks.is_empty() {
        return signature.ranks.clone();
    }
    vec![RankShare {
        rank: part.rank,
        count: signature.count,
        total_us: signature.trace_total_us,
        min_us: signature.trace_min_us,
        max_us: signature.trace_max_us,
    }]
}

fn finish_signature(merged: Merged) -> Signature {
    let Merged {
        template: mut signature,
        mut shares,
        mut streams,
        ..
    } = merged;
    shares.sort_by_key(|s| s.rank);
    streams.sort_unstable();
    streams.dedup();
    let total = total_ns(shares.iter().map(|s| ns(s.total_us)));
    signature.count = shares.iter().map(|s| s.count).sum();
    signature.trace_total_us = us(total);
    signature.trace_mean_us = mean_us(total, signature.count);
    signature.trace_min_us = us(shares.iter().map(|s| ns(s.min_us)).min().unwrap_or(0));
    signature.trace_max_us = us(shares.iter().map(|s| ns(s.max_us)).max().unwrap_or(0));
    signature.streams = streams;
    signature.ranks = shares;
    signature
}

/// Unattributed groups of the same name and reason are one group.
fn merge_unattributed(parts: &[MergePart]) -> Vec<UnattributedGroup> {
    let mut groups: BTreeMap<(String, String), (UnattributedGroup, i64)> = BTreeMap::new();
    for group in parts.iter().flat_map(|p| &p.file.unattributed) {
        let entry = groups
            .entry((group.name.clone(), group.reason.clone()))
            .or_insert_with(|| {
                let mut empty = group.clone();
                empty.count = 0;
                (empty, 0)
            });
        entry.0.count += group.count;
        entry.1 = entry.1.saturating_add(ns(group.total_us));
    }
    let mut merged: Vec<UnattributedGroup> = groups
        .into_values()
        .map(|(mut group, total)| {
            group.total_us = us(total);
            group
        })
        .collect();
    merged.sort_by(|a, b| {
        b.total_us
            .total_cmp(&a.total_us)
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.reason.cmp(&b.reason))
    });
    merged
}

fn add_linking(a: LinkingReport, b: &LinkingReport) -> LinkingReport {
    LinkingReport {
        gpu_activities: a.gpu_activities + b.gpu_activities,
        with_launch: a.with_launch + b.with_launch,
        with_op: a.with_op + b.with_op,
        unattributed: a.unattributed + b.unattributed,
        launched_by_graph: a.launched_by_graph + b.launched_by_graph,
        collective: a.collective + b.collective,
        external_id_confirmed: a.external_id_confirmed + b.external_id_confirmed,
        external_id_contradicted: a.external_id_contradicted + b.external_id_contradicted,
        external_id_not_recorded: a.external_id_not_recorded + b.external_id_not_recorded,
    }
}

/// Sum of microsecond values in whole nanoseconds.
fn sum_us<'a>(values: impl Iterator<Item = &'a f64>) -> f64 {
    us(total_ns(values.map(|v| ns(*v))))
}

/// The ranks' host time between top-level ops (CPU-only traces), their threads together.
fn merge_host_overhead(parts: &[MergePart]) -> Option<HostOverhead> {
    let all: Vec<&HostOverhead> = parts
        .iter()
        .filter_map(|p| p.file.host_overhead.as_ref())
        .collect();
    if all.is_empty() {
        return None;
    }
    let mut threads: Vec<_> = all.iter().flat_map(|h| h.threads.clone()).collect();
    threads.sort_by(|a, b| {
        (a.pid.as_str(), a.tid.as_str())
            .cmp(&(b.pid.as_str(), b.tid.as_str()))
            .then_with(|| a.span_us.total_cmp(&b.span_us))
            .then_with(|| a.ops_us.total_cmp(&b.ops_us))
    });
    Some(HostOverhead {
        overhead_us: sum_us(all.iter().map(|h| &h.overhead_us)),
        uninstrumented_compiled_us: sum_us(all.iter().map(|h| &h.uninstrumented_compiled_us)),
        ops_us: sum_us(all.iter().map(|h| &h.ops_us)),
        threads,
    })
}

/// The ranks' compiled regions, summed.
fn merge_compiled_code(parts: &[MergePart]) -> Option<CompiledCode> {
    let all: Vec<&CompiledCode> = parts
        .iter()
        .filter_map(|p| p.file.compiled_code.as_ref())
        .collect();
    if all.is_empty() {
        return None;
    }
    Some(CompiledCode {
        regions: all.iter().map(|c| c.regions).sum(),
        region_us: sum_us(all.iter().map(|c| &c.region_us)),
        uninstrumented_us: sum_us(all.iter().map(|c| &c.uninstrumented_us)),
        steps_us: sum_us(all.iter().map(|c| &c.steps_us)),
        // A wrapper is timed for one model's forward pass: the ranks' together are not one.
        wrapper: match all.as_slice() {
            [one] => one.wrapper.clone(),
            _ => None,
        },
    })
}
