//! A command line split as the shell splits it, enough for the book's examples.

/// One piece of a shell command line: its words, as the shell would pass them.
pub(super) fn shell_pieces(line: &str) -> Vec<Vec<String>> {
    let mut pieces = vec![Vec::new()];
    let mut word = String::new();
    let mut in_word = false;
    let mut skip_next_word = false;
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    let end_word =
        |word: &mut String, in_word: &mut bool, skip: &mut bool, pieces: &mut Vec<Vec<String>>| {
            if *in_word {
                if *skip {
                    *skip = false;
                } else {
                    pieces.last_mut().unwrap().push(std::mem::take(word));
                }
            }
            word.clear();
            *in_word = false;
        };
    // `$NAME`, `${..}`, `$(..)`, `$?`: the expansion stands for "1". Returns the index after it.
    let expand = |i: usize, word: &mut String| -> usize {
        let mut j = i + 1;
        match chars.get(j) {
            Some('{') | Some('(') => {
                let close = if chars[j] == '{' { '}' } else { ')' };
                while j < chars.len() && chars[j] != close {
                    j += 1;
                }
                j += 1;
            }
            Some(c) if c.is_alphanumeric() || *c == '_' => {
                while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '_') {
                    j += 1;
                }
            }
            Some('?') | Some('#') | Some('@') => j += 1,
            _ => {
                word.push('$');
                return j;
            }
        }
        word.push('1');
        j
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' => {
                end_word(&mut word, &mut in_word, &mut skip_next_word, &mut pieces);
                i += 1;
            }
            '#' if !in_word => break,
            '\'' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    word.push(chars[i]);
                    i += 1;
                }
                i += 1;
            }
            '"' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    match chars[i] {
                        '\\' if i + 1 < chars.len() => {
                            word.push(chars[i + 1]);
                            i += 2;
                        }
                        '$' => i = expand(i, &mut word),
                        other => {
                            word.push(other);
                            i += 1;
                        }
                    }
                }
                i += 1;
            }
            '\\' => {
                in_word = true;
                if let Some(&next) = chars.get(i + 1) {
                    word.push(next);
                }
                i += 2;
            }
            '$' => {
                in_word = true;
                i = expand(i, &mut word);
            }
            ';' | '|' | '&' => {
                // `2>&1` and `&>` are redirections, handled below.
                end_word(&mut word, &mut in_word, &mut skip_next_word, &mut pieces);
                while i < chars.len() && matches!(chars[i], ';' | '|' | '&') {
                    if chars[i] == '&' && chars.get(i + 1) == Some(&'>') {
                        break;
                    }
                    i += 1;
                }
                if chars.get(i) != Some(&'>') {
                    pieces.push(Vec::new());
                }
            }
            '>' | '<' => {
                // A file descriptor written just before (`2>`) belongs to the redirection.
                if in_word && word.chars().all(|d| d.is_ascii_digit()) {
                    word.clear();
                    in_word = false;
                }
                end_word(&mut word, &mut in_word, &mut skip_next_word, &mut pieces);
                i += 1;
                while i < chars.len() && matches!(chars[i], '>' | '<') {
                    i += 1;
                }
                if chars.get(i) == Some(&'&') {
                    // `>&2`: a descriptor, no file name follows.
                    i += 1;
                    while i < chars.len() && chars[i].is_ascii_digit() {
                        i += 1;
                    }
                } else {
                    skip_next_word = true;
                }
            }
            other => {
                in_word = true;
                word.push(other);
                i += 1;
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut skip_next_word, &mut pieces);
    pieces.retain(|p| !p.is_empty());
    pieces
}

/// The words of a piece from `replay` on, or `None` when the piece runs something else.
pub(super) fn replay_words(piece: &[String]) -> Option<Vec<String>> {
    let mut words = piece.iter().skip_while(|w| {
        matches!(w.as_str(), "do" | "then" | "time" | "!" | "else")
            || w.split_once('=').is_some_and(|(name, _)| {
                !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_')
            })
    });
    let program = words.next()?;
    let program = program.strip_prefix("./").unwrap_or(program);
    matches!(program, "replay" | "target/release/replay").then(|| {
        std::iter::once("replay".to_string())
            .chain(words.cloned())
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shell_words_are_split_as_the_shell_splits_them() {
        assert_eq!(
            shell_pieces(
                r#"for i in 1 2; do replay isolated --shard $i/2 --out "a b" -q | tail -1; done"#
            ),
            vec![
                vec!["for", "i", "in", "1", "2"],
                vec!["do", "replay", "isolated", "--shard", "1/2", "--out", "a b", "-q"],
                vec!["tail", "-1"],
                vec!["done"],
            ]
        );
        assert_eq!(
            shell_pieces(
                r#"X=1 ./target/release/replay predict --what-if 'tier2*0.5' 2>/dev/null > out.txt # c"#
            ),
            vec![vec![
                "X=1",
                "./target/release/replay",
                "predict",
                "--what-if",
                "tier2*0.5"
            ]]
        );
        assert_eq!(
            shell_pieces("replay full --model m.pt 2>&1 && echo \"exit $?\""),
            vec![
                vec!["replay", "full", "--model", "m.pt"],
                vec!["echo", "exit 1"]
            ]
        );
        assert_eq!(
            replay_words(&shell_pieces("do X=1 ./target/release/replay devices")[0]),
            Some(vec!["replay".to_string(), "devices".to_string()])
        );
        assert_eq!(
            replay_words(&shell_pieces("replayed 3 signatures")[0]),
            None
        );
    }
}
