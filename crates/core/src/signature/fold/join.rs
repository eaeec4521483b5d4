//! GPU activities meet their launch calls: both sorted by correlation id, merged, and each
//! activity folded into its signature's running statistics as it passes. What the
//! in-memory classify computes from its links, in constant memory per signature.

use crate::signature::classify::{GpuKey, Invocations};
use crate::trace::link::{is_collective_kernel, LinkStats};
use crate::trace::{Category, FxHashMap, StrId, StringTable};

use super::contexts::Contexts;
use super::records::{ActivityRecord, LaunchLink};

/// The first activity of a signature, with what its link says.
#[derive(Debug, Clone, Copy)]
pub struct FirstActivity {
    pub record: ActivityRecord,
    pub op: Option<u32>,
    pub launched_by_graph: bool,
    pub collective: bool,
}

/// One signature's invocations, gathered in any order: the in-memory fold's statistics
/// ([`Invocations`]), with each stream's first position so that the streams come out in
/// the order of first use.
#[derive(Debug, Clone)]
pub struct Folded {
    pub first: FirstActivity,
    stats: Invocations,
    /// Each stream with the position of its first activity.
    streams: Vec<(u64, i64)>,
}

impl Folded {
    fn new(first: FirstActivity) -> Self {
        Folded {
            first,
            stats: Invocations::new(0),
            streams: Vec::new(),
        }
    }

    fn add(&mut self, activity: FirstActivity) {
        let record = &activity.record;
        if record.index < self.first.record.index {
            self.first = activity;
        }
        self.stats.add(record.dur, None);
        if let Some(stream) = record.stream {
            match self.streams.iter_mut().find(|(_, s)| *s == stream) {
                Some(seen) => seen.0 = seen.0.min(record.index),
                None => self.streams.push((record.index, stream)),
            }
        }
    }

    /// The statistics as the in-memory fold keeps them (streams in order of first use);
    /// `first` is the position the caller gives the first activity.
    pub fn invocations(&self, first: usize) -> Invocations {
        let mut streams = self.streams.clone();
        streams.sort_unstable();
        Invocations {
            first,
            streams: streams.into_iter().map(|(_, s)| s).collect(),
            ..self.stats.clone()
        }
    }
}

/// Every GPU activity of a trace, folded.
#[derive(Default)]
pub struct Joined {
    pub groups: FxHashMap<GpuKey, Folded>,
    pub unattributed: FxHashMap<(StrId, bool), Folded>,
    pub stats: LinkStats,
}

/// Merges `activities` and `links`, both sorted by (correlation, position).
pub fn join(
    activities: impl Iterator<Item = std::io::Result<ActivityRecord>>,
    links: impl Iterator<Item = std::io::Result<LaunchLink>>,
    contexts: &Contexts,
    strings: &StringTable,
) -> std::io::Result<Joined> {
    let mut joined = Joined::default();
    let mut links = links.peekable();
    // The launch of the current correlation id: the first call that carries it.
    let mut launch: Option<LaunchLink> = None;
    let mut collective_names: FxHashMap<StrId, bool> = FxHashMap::default();
    for activity in activities {
        let activity = activity?;
        if let Some(correlation) = activity.correlation {
            if launch.is_none_or(|l| l.correlation != correlation) {
                launch = None;
                while let Some(next) = links.peek() {
                    let next = match next {
                        Ok(next) => *next,
                        Err(_) => {
                            return Err(links.next().and_then(Result::err).unwrap_or_else(|| {
                                std::io::Error::other("the sorted launch calls ended in an error")
                            }))
                        }
                    };
                    if next.correlation > correlation {
                        break;
                    }
                    links.next();
                    if next.correlation == correlation {
                        launch = Some(next);
                        // Later calls with the same id are not the launch.
                        while links
                            .peek()
                            .is_some_and(|l| l.as_ref().is_ok_and(|l| l.correlation == correlation))
                        {
                            links.next();
                        }
                        break;
                    }
                }
            }
        }
        let link = launch.filter(|l| Some(l.correlation) == activity.correlation);
        let collective = *collective_names
            .entry(activity.name)
            .or_insert_with(|| is_collective_kernel(strings.get(activity.name)));
        let op = link.and_then(|l| l.op);
        let launched_by_graph = link.is_some_and(|l| l.launched_by_graph);
        let stats = &mut joined.stats;
        stats.activities += 1;
        stats.with_launch += u64::from(link.is_some());
        stats.with_op += u64::from(op.is_some());
        stats.unattributed += u64::from(link.is_none());
        stats.launch_without_op += u64::from(link.is_some() && op.is_none());
        stats.launched_by_graph += u64::from(launched_by_graph);
        stats.collective += u64::from(collective);
        if let Some(recorded) = activity.external_id {
            if let Some(link) = link.filter(|l| l.op.is_some()) {
                if link.op_external_id == Some(recorded) {
                    stats.external_id_confirmed += 1;
                } else {
                    stats.external_id_contradicted += 1;
                }
            }
        } else {
            stats.external_id_not_recorded += 1;
        }
        let first = FirstActivity {
            record: activity,
            op,
            launched_by_graph,
            collective,
        };
        let Some(link) = link else {
            joined
                .unattributed
                .entry((activity.name, activity.correlation.is_some()))
                .or_insert_with(|| Folded::new(first))
                .add(first);
            continue;
        };
        let context = op.and_then(|op| contexts.get(op));
        let is_kernel = activity.category == Category::Kernel;
        let key = GpuKey {
            name: activity.name,
            op: context.map(|c| c.name),
            inputs: context.map(|c| c.inputs).unwrap_or_default(),
            grid: activity.grid.filter(|_| is_kernel),
            block: activity.block.filter(|_| is_kernel),
            bytes: if is_kernel {
                None
            } else {
                activity.bytes.or(link.bytes)
            },
            launched_by_graph,
        };
        joined
            .groups
            .entry(key)
            .or_insert_with(|| Folded::new(first))
            .add(first);
    }
    Ok(joined)
}
