//! Reading Markdown as the book's checks need it: lines with the fenced block they are in,
//! heading ids, inline links.

use std::collections::{BTreeSet, HashMap};

/// A line of a Markdown file with where it is (1-based), and the info string of the fenced
/// block it is in (`None` outside a block).
pub(super) struct Line<'a> {
    pub(super) number: usize,
    pub(super) text: &'a str,
    pub(super) fence: Option<&'a str>,
}

pub(super) fn lines(text: &str) -> Vec<Line<'_>> {
    let mut fence: Option<(&str, &str)> = None; // (the fence's marker, its info string)
    let mut out = Vec::new();
    for (i, text) in text.lines().enumerate() {
        let trimmed = text.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => {
                let info = trimmed.trim_start_matches(m.chars().next().unwrap()).trim();
                fence = Some((m, info.split_whitespace().next().unwrap_or("")));
                continue;
            }
            (Some((open, _)), Some(m)) if m == open => {
                fence = None;
                continue;
            }
            _ => {}
        }
        out.push(Line {
            number: i + 1,
            text,
            fence: fence.map(|(_, info)| info),
        });
    }
    out
}

/// A heading's id as GitHub and mdBook make it: lower case, letters, digits, `-` and `_`
/// kept, spaces made `-`, everything else dropped; a repeated id gets `-1`, `-2`, ...
pub(super) fn heading_ids(text: &str) -> BTreeSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut ids = BTreeSet::new();
    for line in lines(text).iter().filter(|l| l.fence.is_none()) {
        let Some(title) = line
            .text
            .strip_prefix('#')
            .map(|t| t.trim_start_matches('#'))
            .filter(|t| t.starts_with(' '))
        else {
            continue;
        };
        let title = strip_links(title.trim());
        let id: String = title
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let n = seen.entry(id.clone()).or_insert(0);
        ids.insert(if *n == 0 {
            id.clone()
        } else {
            format!("{id}-{n}")
        });
        *n += 1;
    }
    ids
}

/// `[label](target)` becomes `label` (a heading's id is made from the text shown).
fn strip_links(text: &str) -> String {
    let mut out = text.to_string();
    for (start, end, _) in links_in(text).into_iter().rev() {
        let label_end = start + text[start..].find("](").unwrap();
        out.replace_range(start..end, &text[start + 1..label_end]);
    }
    out
}

/// The inline links of one line outside code spans: (byte start of `[`, byte end after `)`,
/// target).
pub(super) fn links_in(line: &str) -> Vec<(usize, usize, String)> {
    // Code spans hide what they hold: blank them out, keeping byte offsets.
    let mut visible = String::with_capacity(line.len());
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
            visible.push(' ');
        } else if in_code {
            visible.extend(std::iter::repeat_n(' ', c.len_utf8()));
        } else {
            visible.push(c);
        }
    }
    let mut links = Vec::new();
    let mut from = 0;
    while let Some(at) = visible[from..].find("](") {
        let open_target = from + at + 2;
        let Some(len) = visible[open_target..].find(')') else {
            break;
        };
        let close = open_target + len;
        // The label's `[`: the nearest one before `](` (labels here hold no brackets).
        let start = visible[..from + at].rfind('[').unwrap_or(from + at);
        let target = line[open_target..close]
            .split_whitespace()
            .next()
            .unwrap_or("")
            .trim_start_matches('<')
            .trim_end_matches('>')
            .to_string();
        links.push((start, close + 1, target));
        from = close + 1;
    }
    links
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heading_id_is_githubs() {
        let ids = heading_ids(
            "# `replay compare`\n## Compiled models: `compare --compile`\n```\n# not a heading\n```\n## A\n## A\n## On a cluster: a job's thousand rank traces\n",
        );
        let want = [
            "replay-compare",
            "compiled-models-compare---compile",
            "a",
            "a-1",
            "on-a-cluster-a-jobs-thousand-rank-traces",
        ];
        assert_eq!(ids, want.iter().map(|s| s.to_string()).collect());
    }
}
