//! The module trees of the workspace's crates, read from their `mod` declarations: for every
//! module its file, its submodules, the items it defines, its `use` declarations and the paths
//! its code names.

use std::collections::{BTreeMap, BTreeSet};

use crate::tokens::{matching_close, strip_test_items, tokenize, Tok, Token};

/// One crate: its root file and the names under which it reaches other crates of the
/// workspace (`replay_core` from `replay`, `replay` from its own binary).
pub struct CrateRoot {
    pub root: &'static str,
    pub externs: &'static [(&'static str, &'static str)],
}

/// One `use` leaf: `use a::b::C as D;` is segments `[a, b, C]`, alias `D`.
#[derive(Clone, Debug)]
pub struct UseDecl {
    pub segments: Vec<String>,
    pub alias: String,
    pub glob: bool,
    /// `pub` or `pub(..)`: the name is (also) offered to other modules.
    pub public: bool,
    /// Declared inside a function or block, not at module level.
    pub in_body: bool,
    pub line: usize,
}

#[derive(Clone, Debug)]
pub struct PathUse {
    pub segments: Vec<String>,
    pub line: usize,
}

#[derive(Debug)]
pub struct Module {
    pub file: String,
    pub parent: Option<usize>,
    pub crate_root: usize,
    pub children: BTreeMap<String, usize>,
    pub items: BTreeSet<String>,
    pub uses: Vec<UseDecl>,
    /// Paths of two or more segments named in code (outside `use` declarations).
    pub paths: Vec<PathUse>,
    /// The directory in which this module's `mod NAME;` files live.
    dir: String,
}

#[derive(Default)]
pub struct Tree {
    pub modules: Vec<Module>,
    /// Every identifier that a file's code (outside `use` declarations) names.
    pub idents: BTreeMap<String, BTreeSet<String>>,
    /// Extern crate name -> root module, per crate root module.
    pub externs: BTreeMap<usize, BTreeMap<String, usize>>,
    /// Files that hold test modules (`#[cfg(test)] mod NAME;`).
    pub test_files: BTreeSet<String>,
    pub problems: Vec<String>,
}

fn parent_dir(file: &str) -> &str {
    file.rsplit_once('/').map_or("", |(d, _)| d)
}

/// The directory for the submodules of a module in `file`: `a/mod.rs`, `a/lib.rs` and
/// `a/main.rs` keep theirs beside them, `a/b.rs` in `a/b/`.
fn module_dir(file: &str) -> String {
    let name = file.rsplit('/').next().unwrap_or(file);
    if matches!(name, "mod.rs" | "lib.rs" | "main.rs") || !file.contains('/') {
        parent_dir(file).to_string()
    } else {
        file.trim_end_matches(".rs").to_string()
    }
}

const ITEM_KEYWORDS: [&str; 8] = [
    "fn", "struct", "enum", "trait", "type", "const", "static", "union",
];

impl Tree {
    /// Reads the crates whose roots are given from `sources` (path -> text, paths relative to
    /// the workspace with `/`).
    pub fn read(sources: &BTreeMap<String, String>, crates: &[CrateRoot]) -> Tree {
        let mut tree = Tree::default();
        let mut roots = BTreeMap::new();
        for krate in crates {
            let id = tree.modules.len();
            tree.load_file(sources, krate.root, None, id);
            roots.insert(krate.root.to_string(), id);
        }
        for krate in crates {
            let Some(&id) = roots.get(krate.root) else {
                continue;
            };
            let mut map = BTreeMap::new();
            for (name, root) in krate.externs {
                if let Some(&target) = roots.get(*root) {
                    map.insert(name.to_string(), target);
                }
            }
            tree.externs.insert(id, map);
        }
        tree
    }

    fn new_module(
        &mut self,
        file: &str,
        dir: String,
        parent: Option<usize>,
        root: Option<usize>,
    ) -> usize {
        let id = self.modules.len();
        self.modules.push(Module {
            file: file.to_string(),
            parent,
            crate_root: root.unwrap_or(id),
            children: BTreeMap::new(),
            items: BTreeSet::new(),
            uses: Vec::new(),
            paths: Vec::new(),
            dir,
        });
        id
    }

    /// Reads `file` as a module (a crate root when `parent` is `None`).
    fn load_file(
        &mut self,
        sources: &BTreeMap<String, String>,
        file: &str,
        parent: Option<usize>,
        root: usize,
    ) -> Option<usize> {
        let Some(source) = sources.get(file) else {
            self.problems
                .push(format!("{file}: declared as a module but not found"));
            return None;
        };
        let stripped = strip_test_items(tokenize(source));
        let id = self.new_module(file, module_dir(file), parent, parent.map(|_| root));
        let dir = module_dir(file);
        for name in &stripped.test_module_files {
            for candidate in [format!("{dir}/{name}.rs"), format!("{dir}/{name}/mod.rs")] {
                if sources.contains_key(&candidate) {
                    self.test_files.insert(candidate);
                }
            }
            // A test module's own submodules (`#[cfg(test)] mod book;` holding `book/x.rs`)
            // are test code too.
            let below = format!("{dir}/{name}/");
            self.test_files
                .extend(sources.keys().filter(|f| f.starts_with(&below)).cloned());
        }
        let mut idents = BTreeSet::new();
        let tokens = stripped.tokens;
        self.read_region(sources, &tokens, 0, tokens.len(), id, &mut idents);
        self.idents
            .entry(file.to_string())
            .or_default()
            .extend(idents);
        Some(id)
    }

    /// Reads the tokens `[start, end)` as the body of module `id`.
    fn read_region(
        &mut self,
        sources: &BTreeMap<String, String>,
        tokens: &[Token],
        start: usize,
        end: usize,
        id: usize,
        idents: &mut BTreeSet<String>,
    ) {
        let mut depth = 0usize;
        // Per open brace: whether it is an `extern "C" { .. }` block, whose declarations are
        // items of the module.
        let mut braces: Vec<bool> = Vec::new();
        let mut public = false;
        let mut i = start;
        while i < end {
            let t = &tokens[i];
            match &t.tok {
                Tok::Punct('#') => {
                    // Attributes say nothing about dependencies.
                    if tokens.get(i + 1).is_some_and(|t| t.is_punct('[')) {
                        i = matching_close(tokens, i + 1);
                    } else if tokens.get(i + 1).is_some_and(|t| t.is_punct('!'))
                        && tokens.get(i + 2).is_some_and(|t| t.is_punct('['))
                    {
                        i = matching_close(tokens, i + 2);
                    } else {
                        i += 1;
                    }
                    continue;
                }
                Tok::Punct('{') => {
                    let transparent = i >= 2
                        && tokens[i - 1].tok == Tok::Literal
                        && tokens[i - 2].is_ident("extern");
                    braces.push(transparent);
                    if !transparent {
                        depth += 1;
                    }
                }
                Tok::Punct('}') => {
                    let closed_extern_block = braces.pop() == Some(true);
                    if !closed_extern_block {
                        depth = depth.saturating_sub(1);
                    }
                }
                Tok::Ident(word) if word == "pub" => {
                    public = true;
                    i += 1;
                    if tokens.get(i).is_some_and(|t| t.is_punct('(')) {
                        i = matching_close(tokens, i);
                    }
                    continue;
                }
                Tok::Ident(word) if word == "use" => {
                    let semi = (i..end).find(|&k| tokens[k].is_punct(';')).unwrap_or(end);
                    let mut leaves = Vec::new();
                    parse_use_tree(&tokens[i + 1..semi], &[], &mut leaves);
                    for (segments, alias, glob) in leaves {
                        self.modules[id].uses.push(UseDecl {
                            segments,
                            alias,
                            glob,
                            public: public && depth == 0,
                            in_body: depth > 0,
                            line: t.line,
                        });
                    }
                    public = false;
                    i = semi + 1;
                    continue;
                }
                Tok::Ident(word) if word == "mod" && depth == 0 => {
                    if let Some(name) = tokens.get(i + 1).and_then(Token::ident) {
                        let name = name.to_string();
                        match tokens.get(i + 2).map(|t| &t.tok) {
                            Some(Tok::Punct(';')) => {
                                let dir = &self.modules[id].dir;
                                let a = format!("{dir}/{name}.rs");
                                let b = format!("{dir}/{name}/mod.rs");
                                let file = if sources.contains_key(&a) { a } else { b };
                                let root = self.modules[id].crate_root;
                                if let Some(child) = self.load_file(sources, &file, Some(id), root)
                                {
                                    self.modules[id].children.insert(name, child);
                                }
                                public = false;
                                i += 3;
                                continue;
                            }
                            Some(Tok::Punct('{')) => {
                                let close = matching_close(tokens, i + 2);
                                let file = self.modules[id].file.clone();
                                let dir = format!("{}/{name}", self.modules[id].dir);
                                let root = self.modules[id].crate_root;
                                let child = self.new_module(&file, dir, Some(id), Some(root));
                                self.modules[id].children.insert(name, child);
                                self.read_region(sources, tokens, i + 3, close - 1, child, idents);
                                public = false;
                                i = close;
                                continue;
                            }
                            _ => {}
                        }
                    }
                }
                Tok::Ident(word) if depth == 0 && ITEM_KEYWORDS.contains(&word.as_str()) => {
                    if let Some(name) = tokens.get(i + 1).and_then(Token::ident) {
                        // `const fn f`: the name comes after `fn`.
                        if !(word == "const" && name == "fn") {
                            self.modules[id].items.insert(name.to_string());
                        }
                    }
                }
                Tok::Ident(word) if depth == 0 && word == "macro_rules" => {
                    if let Some(name) = tokens.get(i + 2).and_then(Token::ident) {
                        self.modules[id].items.insert(name.to_string());
                    }
                }
                Tok::Ident(word) => {
                    idents.insert(word.clone());
                    let starts_path = tokens.get(i + 1).is_some_and(|t| t.tok == Tok::PathSep)
                        && !(i > 0 && tokens[i - 1].tok == Tok::PathSep);
                    if starts_path {
                        let mut segments = vec![word.clone()];
                        let mut k = i + 1;
                        while k + 1 < end && tokens[k].tok == Tok::PathSep {
                            match tokens[k + 1].ident() {
                                Some(s) => segments.push(s.to_string()),
                                None => break,
                            }
                            k += 2;
                        }
                        if segments.len() > 1 {
                            self.modules[id].paths.push(PathUse {
                                segments,
                                line: t.line,
                            });
                        }
                    }
                }
                _ => {}
            }
            public = false;
            i += 1;
        }
    }
}

/// Flattens a `use` tree (the tokens between `use` and `;`) into its leaves: (path, alias,
/// glob).
fn parse_use_tree(tokens: &[Token], prefix: &[String], out: &mut Vec<(Vec<String>, String, bool)>) {
    let mut path = prefix.to_vec();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i].tok {
            Tok::PathSep => i += 1,
            Tok::Ident(word) if word == "as" => {
                if path.last().is_some_and(|s| s == "self") {
                    path.pop();
                }
                let alias = tokens.get(i + 1).and_then(Token::ident).unwrap_or("_");
                out.push((path.clone(), alias.to_string(), false));
                return;
            }
            Tok::Ident(word) => {
                path.push(word.clone());
                i += 1;
            }
            Tok::Punct('*') => {
                out.push((path.clone(), "*".to_string(), true));
                return;
            }
            Tok::Punct('{') => {
                let close = matching_close(tokens, i) - 1;
                let mut start = i + 1;
                let mut depth = 0;
                for k in i + 1..=close {
                    match tokens[k].tok {
                        Tok::Punct('{') => depth += 1,
                        Tok::Punct('}') if depth > 0 => depth -= 1,
                        Tok::Punct(',') if depth == 0 => {
                            parse_use_tree(&tokens[start..k], &path, out);
                            start = k + 1;
                        }
                        _ => {}
                    }
                }
                if start < close {
                    parse_use_tree(&tokens[start..close], &path, out);
                }
                return;
            }
            _ => i += 1,
        }
    }
    // `a::b::{self}` is `a::b`.
    if path.last().is_some_and(|s| s == "self") {
        path.pop();
    }
    if let Some(last) = path.last().cloned() {
        out.push((path, last, false));
    }
}
