//! The trace files of `--trace FILE|GLOB ...`: every argument that holds a wildcard (`*`,
//! `?`, `[...]`) is expanded by replay itself, so `--trace 'rank*.json.gz'` works quoted (a
//! shell would pass it unexpanded) and on a command line too long for a thousand names. The
//! matches of one pattern come in natural order (`rank2` before `rank10`), which is the rank
//! order when the traces do not record their rank. A pattern that matches nothing is an error
//! naming it; a name without wildcards is taken as it is (reading it says if it is missing).

use std::cmp::Ordering;
use std::path::{Component, Path, PathBuf};

use super::error::RankError;

/// The files `args` name, patterns expanded, in the order given.
pub fn expand(args: &[PathBuf]) -> Result<Vec<PathBuf>, RankError> {
    let mut files = Vec::new();
    for arg in args {
        if !has_wildcard(&arg.to_string_lossy()) {
            files.push(arg.clone());
            continue;
        }
        let mut matches = expand_pattern(arg)?;
        if matches.is_empty() {
            return Err(RankError::NoMatch {
                pattern: arg.display().to_string(),
            });
        }
        matches.sort_by(|a, b| natural_cmp(&a.to_string_lossy(), &b.to_string_lossy()));
        files.extend(matches);
    }
    Ok(files)
}

fn has_wildcard(text: &str) -> bool {
    text.contains(['*', '?', '['])
}

/// Every existing file `pattern` matches, component by component.
fn expand_pattern(pattern: &Path) -> Result<Vec<PathBuf>, RankError> {
    let mut prefixes: Vec<PathBuf> = vec![PathBuf::new()];
    let components: Vec<Component> = pattern.components().collect();
    for (index, component) in components.iter().enumerate() {
        let last = index + 1 == components.len();
        let text = component.as_os_str().to_string_lossy();
        if !matches!(component, Component::Normal(_)) || !has_wildcard(&text) {
            for prefix in &mut prefixes {
                prefix.push(component.as_os_str());
            }
            continue;
        }
        let mut next = Vec::new();
        for prefix in &prefixes {
            let folder = if prefix.as_os_str().is_empty() {
                Path::new(".")
            } else {
                prefix.as_path()
            };
            if !folder.is_dir() {
                continue;
            }
            let entries = std::fs::read_dir(folder).map_err(|source| RankError::ListFolder {
                path: folder.to_path_buf(),
                pattern: pattern.display().to_string(),
                source,
            })?;
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if !wildcard_match(&text, &name) {
                    continue;
                }
                let path = prefix.join(&name);
                if (last && path.is_file()) || (!last && path.is_dir()) {
                    next.push(path);
                }
            }
        }
        prefixes = next;
    }
    Ok(prefixes.into_iter().filter(|p| p.is_file()).collect())
}

/// Shell-style match of one name: `*` any run, `?` one character, `[abc]`, `[a-z]`, `[!x]`
/// one of a set; a leading `.` is matched only by a leading `.` (hidden files stay hidden).
pub fn wildcard_match(pattern: &str, name: &str) -> bool {
    if name.starts_with('.') && !pattern.starts_with('.') {
        return false;
    }
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    matches_from(&pattern, &name)
}

fn matches_from(pattern: &[char], name: &[char]) -> bool {
    match pattern.first() {
        None => name.is_empty(),
        Some('*') => (0..=name.len()).any(|skip| matches_from(&pattern[1..], &name[skip..])),
        Some('?') => !name.is_empty() && matches_from(&pattern[1..], &name[1..]),
        Some('[') => match (class_end(pattern), name.first()) {
            (Some(end), Some(&c)) => {
                in_class(&pattern[1..end], c) && matches_from(&pattern[end + 1..], &name[1..])
            }
            (Some(_), None) => false,
            // An unclosed `[` is itself.
            (None, first) => first == Some(&'[') && matches_from(&pattern[1..], &name[1..]),
        },
        Some(&c) => name.first() == Some(&c) && matches_from(&pattern[1..], &name[1..]),
    }
}

/// Index of the `]` closing the class that starts at `pattern[0] == '['`.
fn class_end(pattern: &[char]) -> Option<usize> {
    let start = if pattern.get(1) == Some(&'!') { 2 } else { 1 };
    // A `]` right after the opening is a member, not the end.
    (start + 1..pattern.len()).find(|&i| pattern[i] == ']')
}

fn in_class(class: &[char], c: char) -> bool {
    let (negated, members) = match class.first() {
        Some('!') => (true, &class[1..]),
        _ => (false, class),
    };
    let mut found = false;
    let mut i = 0;
    while i < members.len() {
        if i + 2 < members.len() && members[i + 1] == '-' {
            found |= members[i] <= c && c <= members[i + 2];
            i += 3;
        } else {
            found |= members[i] == c;
            i += 1;
        }
    }
    found != negated
}

/// Natural order: runs of digits compare as numbers (`rank2` < `rank10`).
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a, b);
    loop {
        match (a.chars().next(), b.chars().next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let da = a.len() - a.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                let db = b.len() - b.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                let (na, nb) = (
                    a[..da].trim_start_matches('0'),
                    b[..db].trim_start_matches('0'),
                );
                let order = na
                    .len()
                    .cmp(&nb.len())
                    .then_with(|| na.cmp(nb))
                    .then_with(|| da.cmp(&db));
                if order != Ordering::Equal {
                    return order;
                }
                (a, b) = (&a[da..], &b[db..]);
            }
            (Some(x), Some(y)) => {
                if x != y {
                    return x.cmp(&y);
                }
                (a, b) = (&a[x.len_utf8()..], &b[y.len_utf8()..]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_match_as_a_shell_does() {
        assert!(wildcard_match("rank*.json.gz", "rank0.json.gz"));
        assert!(wildcard_match("rank*.json.gz", "rank.json.gz"));
        assert!(!wildcard_match("rank*.json.gz", "rank0.json"));
        assert!(wildcard_match("rank?.json", "rank7.json"));
        assert!(!wildcard_match("rank?.json", "rank17.json"));
        assert!(wildcard_match("rank[0-3].json", "rank2.json"));
        assert!(!wildcard_match("rank[0-3].json", "rank5.json"));
        assert!(wildcard_match("rank[!0].json", "rank5.json"));
        assert!(!wildcard_match("rank[!0].json", "rank0.json"));
        assert!(!wildcard_match("*", ".hidden"));
        assert!(wildcard_match(".*", ".hidden"));
        assert!(wildcard_match("a[b", "a[b"));
    }

    #[test]
    fn numbers_sort_by_value() {
        let mut names = vec!["rank10.json", "rank2.json", "rank1.json", "rank02.json"];
        names.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            names,
            ["rank1.json", "rank2.json", "rank02.json", "rank10.json"]
        );
    }

    #[test]
    fn a_pattern_expands_in_natural_order_and_an_empty_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "rank10.json.gz",
            "rank2.json.gz",
            "rank1.json.gz",
            "other.json.gz",
        ] {
            std::fs::write(dir.path().join(name), b"{}").unwrap();
        }
        let files = expand(&[dir.path().join("rank*.json.gz")]).unwrap();
        let names: Vec<String> = files
            .iter()
            .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["rank1.json.gz", "rank2.json.gz", "rank10.json.gz"]);

        let missing = dir.path().join("node*.json.gz");
        let err = expand(std::slice::from_ref(&missing)).unwrap_err();
        assert!(
            err.to_string().contains(&missing.display().to_string()),
            "{err}"
        );
        // A literal name is kept as given, existing or not.
        let literal = dir.path().join("absent.json.gz");
        assert_eq!(
            expand(std::slice::from_ref(&literal)).unwrap(),
            vec![literal]
        );
    }
}
