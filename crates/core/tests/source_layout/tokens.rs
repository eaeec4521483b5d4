//! A small Rust tokenizer: enough to read module declarations, `use` trees, item names and
//! paths. Comments, strings and character literals are dropped; `#[cfg(test)]` items are cut
//! out (with the lines they span counted), since test code is in neither the import graph nor
//! the line limit.

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    Ident(String),
    /// `::`
    PathSep,
    Punct(char),
    /// Numbers, strings and characters: only their place matters.
    Literal,
}

#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub line: usize,
}

impl Token {
    pub fn ident(&self) -> Option<&str> {
        match &self.tok {
            Tok::Ident(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_ident(&self, name: &str) -> bool {
        self.ident() == Some(name)
    }

    pub fn is_punct(&self, c: char) -> bool {
        self.tok == Tok::Punct(c)
    }
}

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_ident_continue(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Tokens of `source`, without comments; every token carries its 1-based line.
pub fn tokenize(source: &str) -> Vec<Token> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let n = chars.len();
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < n {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        // Comments (block comments nest).
        if c == '/' && at(i + 1) == '/' {
            while i < n && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < n {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
            continue;
        }
        let start_line = line;
        // Raw strings: r"..", r#".."#, br#".."#.
        let raw_start = if c == 'r' {
            Some(i + 1)
        } else if c == 'b' && at(i + 1) == 'r' {
            Some(i + 2)
        } else {
            None
        };
        if let Some(mut j) = raw_start {
            let mut hashes = 0;
            while at(j) == '#' {
                hashes += 1;
                j += 1;
            }
            if at(j) == '"' {
                j += 1;
                loop {
                    if j >= n {
                        break;
                    }
                    if chars[j] == '\n' {
                        line += 1;
                    }
                    if chars[j] == '"' && (1..=hashes).all(|k| at(j + k) == '#') {
                        j += 1 + hashes;
                        break;
                    }
                    j += 1;
                }
                out.push(Token {
                    tok: Tok::Literal,
                    line: start_line,
                });
                i = j;
                continue;
            }
            // `r#ident`: a raw identifier.
            if c == 'r' && hashes == 1 && is_ident_start(at(i + 2)) {
                let mut j = i + 2;
                while j < n && is_ident_continue(chars[j]) {
                    j += 1;
                }
                out.push(Token {
                    tok: Tok::Ident(chars[i + 2..j].iter().collect()),
                    line,
                });
                i = j;
                continue;
            }
        }
        // Strings and byte strings.
        if c == '"' || (c == 'b' && at(i + 1) == '"') {
            let mut j = if c == 'b' { i + 2 } else { i + 1 };
            while j < n && chars[j] != '"' {
                if chars[j] == '\\' {
                    j += 1;
                }
                if at(j) == '\n' {
                    line += 1;
                }
                j += 1;
            }
            out.push(Token {
                tok: Tok::Literal,
                line: start_line,
            });
            i = j + 1;
            continue;
        }
        // Characters and byte characters, or lifetimes and labels.
        if c == '\'' || (c == 'b' && at(i + 1) == '\'') {
            let q = if c == 'b' { i + 1 } else { i };
            if at(q + 1) == '\\' {
                let mut j = q + 2;
                while j < n && chars[j] != '\'' {
                    j += 1;
                }
                out.push(Token {
                    tok: Tok::Literal,
                    line,
                });
                i = j + 1;
                continue;
            }
            if at(q + 2) == '\'' {
                out.push(Token {
                    tok: Tok::Literal,
                    line,
                });
                i = q + 3;
                continue;
            }
            // A lifetime: the quote and the name, which is not a path segment.
            let mut j = q + 1;
            while j < n && is_ident_continue(chars[j]) {
                j += 1;
            }
            out.push(Token {
                tok: Tok::Literal,
                line,
            });
            i = j;
            continue;
        }
        if c.is_ascii_digit() {
            let mut j = i;
            while j < n && is_ident_continue(chars[j]) {
                j += 1;
            }
            out.push(Token {
                tok: Tok::Literal,
                line,
            });
            i = j;
            continue;
        }
        if is_ident_start(c) {
            let mut j = i;
            while j < n && is_ident_continue(chars[j]) {
                j += 1;
            }
            out.push(Token {
                tok: Tok::Ident(chars[i..j].iter().collect()),
                line,
            });
            i = j;
            continue;
        }
        if c == ':' && at(i + 1) == ':' {
            out.push(Token {
                tok: Tok::PathSep,
                line,
            });
            i += 2;
            continue;
        }
        out.push(Token {
            tok: Tok::Punct(c),
            line,
        });
        i += 1;
    }
    out
}

/// The index just past the bracket that closes the one at `open` (`{`, `(` or `[`).
pub fn matching_close(tokens: &[Token], open: usize) -> usize {
    let mut depth = 0i32;
    let mut i = open;
    while i < tokens.len() {
        match tokens[i].tok {
            Tok::Punct('{') | Tok::Punct('(') | Tok::Punct('[') => depth += 1,
            Tok::Punct('}') | Tok::Punct(')') | Tok::Punct(']') => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    tokens.len()
}

/// Whether the attribute starting at `i` (a `#`) is exactly `#[cfg(test)]`.
fn is_cfg_test(tokens: &[Token], i: usize) -> bool {
    let want = ["#", "[", "cfg", "(", "test", ")", "]"];
    want.iter().enumerate().all(|(k, w)| {
        tokens.get(i + k).is_some_and(|t| match &t.tok {
            Tok::Ident(s) => s == w,
            Tok::Punct(c) => w.len() == 1 && w.starts_with(*c),
            _ => false,
        })
    })
}

/// The end (exclusive) of the item that starts at `i` (after its attributes): its `;` or the
/// block that closes it, whichever comes first at its own level.
fn item_end(tokens: &[Token], mut i: usize) -> usize {
    // Further attributes on the same item.
    while i < tokens.len() && tokens[i].is_punct('#') {
        i = match tokens.get(i + 1) {
            Some(t) if t.is_punct('[') => matching_close(tokens, i + 1),
            _ => i + 1,
        };
    }
    while i < tokens.len() {
        match tokens[i].tok {
            Tok::Punct(';') => return i + 1,
            Tok::Punct('{') => {
                let end = matching_close(tokens, i);
                // `struct S { .. }` ends at its brace; `const X: S = S { .. };` at the `;`.
                return if tokens.get(end).is_some_and(|t| t.is_punct(';')) {
                    end + 1
                } else {
                    end
                };
            }
            Tok::Punct('(') | Tok::Punct('[') => i = matching_close(tokens, i),
            _ => i += 1,
        }
    }
    tokens.len()
}

/// What is left of a file after its `#[cfg(test)]` items are cut out.
pub struct Stripped {
    pub tokens: Vec<Token>,
    /// The names of `#[cfg(test)] mod NAME;` declarations (test modules in files of their own).
    pub test_module_files: Vec<String>,
    /// Lines (1-based, inclusive ranges) that `#[cfg(test)]` items span.
    pub test_lines: Vec<(usize, usize)>,
}

pub fn strip_test_items(tokens: Vec<Token>) -> Stripped {
    let mut kept = Vec::with_capacity(tokens.len());
    let mut test_module_files = Vec::new();
    let mut test_lines = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if is_cfg_test(&tokens, i) {
            let end = item_end(&tokens, i + 7);
            let item = &tokens[i + 7..end];
            // `[pub] mod NAME;`
            let words: Vec<&Token> = item.iter().filter(|t| !t.is_punct('#')).collect();
            if let Some(pos) = words.iter().position(|t| t.is_ident("mod")) {
                if let (Some(name), Some(semi)) = (words.get(pos + 1), words.get(pos + 2)) {
                    if semi.is_punct(';') {
                        if let Some(name) = name.ident() {
                            test_module_files.push(name.to_string());
                        }
                    }
                }
            }
            let first = tokens[i].line;
            let last = tokens[end - 1].line;
            test_lines.push((first, last));
            i = end;
            continue;
        }
        kept.push(tokens[i].clone());
        i += 1;
    }
    Stripped {
        tokens: kept,
        test_module_files,
        test_lines,
    }
}

/// Lines of `source` outside its `#[cfg(test)]` items.
pub fn non_test_lines(source: &str) -> usize {
    let total = source.lines().count();
    let stripped = strip_test_items(tokenize(source));
    let mut test = vec![false; total + 2];
    for (a, b) in stripped.test_lines {
        for flag in test.iter_mut().take(b + 1).skip(a) {
            *flag = true;
        }
    }
    (1..=total).filter(|l| !test[*l]).count()
}
