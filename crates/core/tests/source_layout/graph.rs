//! The file-level import graph: which file's code uses an item that another file defines.
//!
//! The rules, chosen so that an edge means "this file's code needs that file's code":
//! - A path (`use` declaration or a path of two or more segments in code, from `crate::`,
//!   `super::`, `self::`, `replay_core::`, `replay::` or a name in scope) is resolved module by
//!   module until it reaches an item (fn, type, trait, const, static, macro); the edge goes to
//!   the file that defines that item. Importing a module alone (`use crate::trace;`) is no
//!   edge; the `trace::X` paths that follow are.
//! - Names are resolved through `use` declarations, so `crate::trace::Trace` reached through
//!   `trace/mod.rs`'s `pub use raw::Trace` leads to `trace/raw.rs`, not to the hub.
//! - `mod NAME;` declares the tree and is no edge. A `pub use` that only re-exports a name
//!   (the file's own code never names it) is no edge either: a `mod.rs` or `lib.rs` of
//!   declarations and re-exports is a directory, not a dependency, and counting it is where
//!   false cycles between a hub and its submodules would come from. A `pub use` whose name
//!   the file also uses is an edge like any other `use`.
//! - A glob (`use a::*`) is an edge to the files of those of its names that the file's code
//!   names.
//! - `#[cfg(test)]` items are not read: tests may use what they like.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::modules::Tree;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Module(usize),
    /// An item, defined in this file.
    Item(String),
}

/// from -> to -> where the first use that made the edge is.
pub type Edges = BTreeMap<String, BTreeMap<String, String>>;

const MAX_DEPTH: usize = 32;

impl Tree {
    fn root_of(&self, module: usize) -> usize {
        self.modules[module].crate_root
    }

    /// Resolves `segments` as written in module `ctx`.
    pub fn resolve_path(&self, ctx: usize, segments: &[String]) -> Option<Target> {
        self.resolve_path_in(ctx, segments, &mut Vec::new())
    }

    fn resolve_path_in(
        &self,
        ctx: usize,
        segments: &[String],
        stack: &mut Vec<(usize, String)>,
    ) -> Option<Target> {
        let (first, rest) = segments.split_first()?;
        let mut current = match first.as_str() {
            "crate" => Target::Module(self.root_of(ctx)),
            "self" => Target::Module(ctx),
            "super" => Target::Module(self.modules[ctx].parent?),
            "Self" => return None,
            name => {
                let externs = self.externs.get(&self.root_of(ctx));
                match externs.and_then(|e| e.get(name)) {
                    Some(&root) => Target::Module(root),
                    None => self.resolve_name_in(ctx, name, ctx, stack)?,
                }
            }
        };
        for segment in rest {
            let Target::Module(module) = current else {
                break;
            };
            current = match segment.as_str() {
                "super" => Target::Module(self.modules[module].parent?),
                "self" => Target::Module(module),
                name => self.resolve_name_in(module, name, ctx, stack)?,
            };
        }
        Some(current)
    }

    /// Whether `module` is `ancestor` or inside it.
    fn is_within(&self, mut module: usize, ancestor: usize) -> bool {
        loop {
            if module == ancestor {
                return true;
            }
            match self.modules[module].parent {
                Some(parent) => module = parent,
                None => return false,
            }
        }
    }

    /// What `name` means in module `module` when module `from` asks: a submodule, an item
    /// defined there, or what one of its module-level `use` declarations brings in (a private
    /// one only for `module` itself and the modules inside it).
    pub fn resolve_name(&self, module: usize, name: &str, from: usize) -> Option<Target> {
        self.resolve_name_in(module, name, from, &mut Vec::new())
    }

    fn resolve_name_in(
        &self,
        module: usize,
        name: &str,
        from: usize,
        stack: &mut Vec<(usize, String)>,
    ) -> Option<Target> {
        let key = (module, name.to_string());
        if stack.len() > MAX_DEPTH || stack.contains(&key) {
            return None;
        }
        let m = &self.modules[module];
        if let Some(&child) = m.children.get(name) {
            return Some(Target::Module(child));
        }
        if m.items.contains(name) {
            return Some(Target::Item(m.file.clone()));
        }
        stack.push(key);
        let inside = self.is_within(from, module);
        let visible = |u: &&crate::modules::UseDecl| !u.in_body && (u.public || inside);
        let mut found = None;
        for u in m.uses.iter().filter(visible).filter(|u| !u.glob) {
            if u.alias == name {
                found = self.resolve_path_in(module, &u.segments, stack);
                break;
            }
        }
        if found.is_none() {
            for u in m.uses.iter().filter(visible).filter(|u| u.glob) {
                if let Some(Target::Module(g)) = self.resolve_path_in(module, &u.segments, stack) {
                    found = self.resolve_name_in(g, name, module, stack);
                    if found.is_some() {
                        break;
                    }
                }
            }
        }
        stack.pop();
        found
    }

    /// The file-level import graph (see the module's rules).
    pub fn edges(&self) -> Edges {
        let mut edges = Edges::new();
        let mut add = |from: &str, to: &str, why: String| {
            if from != to {
                edges
                    .entry(from.to_string())
                    .or_default()
                    .entry(to.to_string())
                    .or_insert(why);
            }
        };
        let empty = BTreeSet::new();
        for (id, m) in self.modules.iter().enumerate() {
            let file = &m.file;
            let idents = self.idents.get(file).unwrap_or(&empty);
            let own: BTreeSet<&str> = m
                .children
                .keys()
                .chain(m.items.iter())
                .map(String::as_str)
                .chain(m.uses.iter().filter(|u| !u.glob).map(|u| u.alias.as_str()))
                .collect();
            for u in &m.uses {
                let written = u.segments.join("::");
                if u.glob {
                    let Some(Target::Module(g)) = self.resolve_path(id, &u.segments) else {
                        continue;
                    };
                    for ident in idents.iter().filter(|i| !own.contains(i.as_str())) {
                        if let Some(Target::Item(to)) = self.resolve_name(g, ident, id) {
                            add(
                                file,
                                &to,
                                format!("{file}:{} `use {written}::*` ({ident})", u.line),
                            );
                        }
                    }
                } else if let Some(Target::Item(to)) = self.resolve_path(id, &u.segments) {
                    if !u.public || idents.contains(&u.alias) {
                        add(file, &to, format!("{file}:{} `use {written}`", u.line));
                    }
                }
            }
            for p in &m.paths {
                if let Some(Target::Item(to)) = self.resolve_path(id, &p.segments) {
                    let written = p.segments.join("::");
                    add(file, &to, format!("{file}:{} `{written}`", p.line));
                }
            }
        }
        edges
    }
}

impl Tree {
    /// `use` declarations and code paths that start inside the workspace (`crate::`,
    /// `super::`, `self::`, `replay_core::`, `replay::`) but lead nowhere the reader knows:
    /// each one is an import the graph cannot see.
    pub fn unresolved(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (id, m) in self.modules.iter().enumerate() {
            let externs = self.externs.get(&self.root_of(id));
            let internal = |segments: &[String]| {
                segments.first().is_some_and(|s| {
                    matches!(s.as_str(), "crate" | "super" | "self")
                        || externs.is_some_and(|e| e.contains_key(s))
                })
            };
            let uses = m.uses.iter().map(|u| (&u.segments, u.line));
            let paths = m.paths.iter().map(|p| (&p.segments, p.line));
            for (segments, line) in uses.chain(paths) {
                if internal(segments) && self.resolve_path(id, segments).is_none() {
                    out.push(format!("{}:{line} `{}`", m.file, segments.join("::")));
                }
            }
        }
        out
    }
}

/// The strongly connected components of more than one file (Tarjan's algorithm).
pub fn cycles(edges: &Edges) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = edges
        .keys()
        .chain(edges.values().flat_map(|t| t.keys()))
        .collect();
    let nodes: Vec<&String> = nodes.into_iter().collect();
    let index_of: BTreeMap<&String, usize> =
        nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let succ: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| {
            edges
                .get(*n)
                .map(|t| t.keys().map(|k| index_of[k]).collect())
                .unwrap_or_default()
        })
        .collect();

    struct State {
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        found: Vec<Vec<usize>>,
    }
    fn visit(v: usize, succ: &[Vec<usize>], s: &mut State) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &succ[v] {
            match s.index[w] {
                None => {
                    visit(w, succ, s);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                _ => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                s.found.push(component);
            }
        }
    }
    let n = nodes.len();
    let mut state = State {
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        found: Vec::new(),
    };
    for v in 0..n {
        if state.index[v].is_none() {
            visit(v, &succ, &mut state);
        }
    }
    let mut out: Vec<Vec<String>> = state
        .found
        .into_iter()
        .map(|c| {
            let mut names: Vec<String> = c.into_iter().map(|i| nodes[i].clone()).collect();
            names.sort();
            names
        })
        .collect();
    out.sort();
    out
}

/// One shortest cycle through the first file of `component`, each step with the use that
/// makes it: "a.rs -> b.rs (a.rs:3 `use crate::b::B`)".
pub fn describe_cycle(edges: &Edges, component: &[String]) -> String {
    let members: BTreeSet<&String> = component.iter().collect();
    let start = &component[0];
    let mut previous: BTreeMap<&String, &String> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    'search: while let Some(node) = queue.pop_front() {
        for next in edges.get(node).into_iter().flat_map(|t| t.keys()) {
            if !members.contains(next) {
                continue;
            }
            if next == start {
                previous.insert(start, node);
                break 'search;
            }
            if !previous.contains_key(next) {
                previous.insert(next, node);
                queue.push_back(next);
            }
        }
    }
    let mut path = vec![start];
    let mut node = previous.get(start).copied();
    while let Some(n) = node {
        if n == start {
            break;
        }
        path.push(n);
        node = previous.get(n).copied();
    }
    path.reverse();
    // path is start's predecessor chain reversed: [.., start]; turn it into start -> .. -> start.
    path.rotate_right(1);
    path.push(start);
    let mut text = String::new();
    for pair in path.windows(2) {
        let why = &edges[pair[0]][pair[1]];
        text.push_str(&format!("\n    {} -> {}  ({why})", pair[0], pair[1]));
    }
    text
}

/// The suite a file belongs to: `src/suites/NAME/..` or `src/suites/NAME.rs`.
pub fn suite_of(file: &str) -> Option<&str> {
    let rest = file.strip_prefix("src/suites/")?;
    match rest.split_once('/') {
        Some((name, _)) => Some(name),
        None => rest.strip_suffix(".rs").filter(|n| *n != "mod"),
    }
}
