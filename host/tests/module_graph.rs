//! The shim's module graph, read from its source: no import cycles, and the
//! lower layers import nothing above them (README.md#layout).
//!
//! A module depends on another when its non-test code names it through a
//! path: a `use` tree, any path in an item (`crate::…`, `super::…`,
//! `self::…`, or a child module's name) or an intra-doc link in its docs
//! (`[`super::x`]`, `[text](crate::x::Y)`: a reader following it leaves
//! the module as surely as a call does). A child naming its parent is an
//! edge like any other, so a parent that re-exports or calls its children
//! and a child that reaches back through `super::` form a cycle: a module
//! root that holds logic its children need is the cycle this test exists
//! to catch. `#[cfg(test)]` modules are left out (tests reach across
//! layers on purpose).
//!
//! The walk parses the source with `syn` rather than matching text, so a
//! grouped `use a::{b, c::{d}}`, a path in an expression and a `#[path]`
//! module all count the way the compiler resolves them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// Top-level modules that may import only the modules listed with them
/// (besides `std` and external crates): the layering the crate keeps.
const LAYERS: &[(&str, &[&str])] = &[
    ("wire", &["log"]),
    ("cancel", &[]),
    ("log", &[]),
    ("user_db", &["log"]),
    ("user_dirs", &["log", "user_db"]),
    ("process_env", &["log"]),
    ("runtime", &["cancel", "log", "user_dirs"]),
];

/// One module: its path (`protocol::session`), where its items are, and
/// the names of its child modules.
struct Module {
    file: PathBuf,
    children: BTreeSet<String>,
    /// The module's inner attributes (its `//!` docs).
    docs: Vec<syn::Attribute>,
}

/// Every module of the crate rooted at `lib`, with the items of each.
fn modules(lib: &Path) -> (BTreeMap<String, Module>, BTreeMap<String, Vec<syn::Item>>) {
    let mut modules = BTreeMap::new();
    let mut items = BTreeMap::new();
    let file = parse(lib);
    let dir = lib.parent().unwrap().to_path_buf();
    collect(
        String::new(),
        lib,
        &dir,
        file.attrs,
        file.items,
        &mut modules,
        &mut items,
    );
    (modules, items)
}

fn parse(path: &Path) -> syn::File {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
    syn::parse_file(&text).unwrap_or_else(|err| panic!("cannot parse {}: {err}", path.display()))
}

fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .parse_args::<syn::Meta>()
                .is_ok_and(|meta| meta.path().is_ident("test"))
    })
}

fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|attr| match &attr.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

/// Records module `name` (whose items are `body`, read from `file`; its
/// children's files are in `dir`) and its children, depth first.
fn collect(
    name: String,
    file: &Path,
    dir: &Path,
    docs: Vec<syn::Attribute>,
    body: Vec<syn::Item>,
    modules: &mut BTreeMap<String, Module>,
    items: &mut BTreeMap<String, Vec<syn::Item>>,
) {
    let mut children = BTreeSet::new();
    let mut kept = Vec::new();
    for item in body {
        let syn::Item::Mod(module) = &item else {
            kept.push(item);
            continue;
        };
        if is_test_only(&module.attrs) {
            continue;
        }
        let child = module.ident.to_string();
        let full = join(&name, &child);
        children.insert(child.clone());
        match &module.content {
            Some((_, inline)) => collect(
                full,
                file,
                &dir.join(&child),
                module.attrs.clone(),
                inline.clone(),
                modules,
                items,
            ),
            None => {
                let (child_file, child_dir) = match path_attr(&module.attrs) {
                    Some(path) => (dir.join(&path), dir.join(&child)),
                    None if dir.join(format!("{child}.rs")).exists() => {
                        (dir.join(format!("{child}.rs")), dir.join(&child))
                    }
                    None => (dir.join(&child).join("mod.rs"), dir.join(&child)),
                };
                let parsed = parse(&child_file);
                collect(
                    full,
                    &child_file,
                    &child_dir,
                    parsed.attrs,
                    parsed.items,
                    modules,
                    items,
                );
            }
        }
    }
    modules.insert(
        name.clone(),
        Module {
            file: file.to_path_buf(),
            children,
            docs,
        },
    );
    items.insert(name, kept);
}

fn join(parent: &str, child: &str) -> String {
    if parent.is_empty() {
        child.to_owned()
    } else {
        format!("{parent}::{child}")
    }
}

fn parent(module: &str) -> &str {
    module.rsplit_once("::").map_or("", |(parent, _)| parent)
}

/// Every path a module's items name, as segment lists (`use` trees
/// expanded).
#[derive(Default)]
struct Paths(Vec<Vec<String>>);

impl Paths {
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut path = prefix.clone();
                path.push(n.ident.to_string());
                self.0.push(path);
            }
            syn::UseTree::Rename(r) => {
                let mut path = prefix.clone();
                path.push(r.ident.to_string());
                self.0.push(path);
            }
            syn::UseTree::Glob(_) => self.0.push(prefix.clone()),
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.use_tree(prefix, tree);
                }
            }
        }
    }
}

impl Paths {
    /// The intra-doc links of one doc line: the target of `[text](path)`
    /// and a bracketed code path `[`a::b`]`, when they are Rust paths.
    fn doc_links(&mut self, text: &str) {
        let mut rest = text;
        while let Some(open) = rest.find('[') {
            rest = &rest[open + 1..];
            let Some(close) = rest.find(']') else { break };
            let label = &rest[..close];
            let after = &rest[close + 1..];
            let target = match after.strip_prefix('(') {
                Some(link) => link.split(')').next().unwrap_or(""),
                None => label.trim_matches('`'),
            };
            if target.contains("::")
                && target
                    .split("::")
                    .all(|s| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_'))
            {
                self.0.push(target.split("::").map(str::to_owned).collect());
            }
            rest = after;
        }
    }

    fn docs(&mut self, attrs: &[syn::Attribute]) {
        for attr in attrs {
            if let syn::Meta::NameValue(nv) = &attr.meta
                && nv.path.is_ident("doc")
                && let syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(text),
                    ..
                }) = &nv.value
            {
                self.doc_links(&text.value());
            }
        }
    }
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_attribute(&mut self, attr: &'ast syn::Attribute) {
        self.docs(std::slice::from_ref(attr));
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &item.tree);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.0.push(
            path.segments
                .iter()
                .map(|segment| segment.ident.to_string())
                .collect(),
        );
        syn::visit::visit_path(self, path);
    }

    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {
        // `pub(super)` names who may see an item, not what it uses.
    }

    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {
        // Inline modules are modules of their own (collected separately).
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        // Paths inside macro calls (`format!("{}", crate::x::Y)`) are
        // tokens to syn; parse them as expressions where they are.
        if let Ok(args) = mac.parse_body_with(
            syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated,
        ) {
            for expr in &args {
                self.visit_expr(expr);
            }
        }
        syn::visit::visit_macro(self, mac);
    }
}

/// The module a path names (the longest module prefix), from `module`.
fn resolve(modules: &BTreeMap<String, Module>, module: &str, path: &[String]) -> Option<String> {
    let (mut base, rest) = match path.first()?.as_str() {
        "crate" => (String::new(), &path[1..]),
        "self" => (module.to_owned(), &path[1..]),
        "super" => {
            let mut base = module.to_owned();
            let mut rest = path;
            while rest.first().is_some_and(|s| s == "super") {
                base = parent(&base).to_owned();
                rest = &rest[1..];
            }
            (base, rest)
        }
        first if modules[module].children.contains(first) => (module.to_owned(), path),
        _ => return None,
    };
    let mut found = None;
    for segment in rest {
        let next = join(&base, segment);
        if !modules.contains_key(&next) {
            break;
        }
        base = next;
        found = Some(base.clone());
    }
    found.or_else(|| (!base.is_empty()).then_some(base))
}

/// module → the modules it names, each with one path that names it.
fn graph(
    lib: &Path,
) -> (
    BTreeMap<String, BTreeMap<String, String>>,
    BTreeMap<String, Module>,
) {
    let (modules, items) = modules(lib);
    let mut graph = BTreeMap::new();
    for (module, items) in &items {
        let mut paths = Paths::default();
        paths.docs(&modules[module].docs);
        for item in items {
            if let syn::Item::Fn(f) = item
                && is_test_only(&f.attrs)
            {
                continue;
            }
            paths.visit_item(item);
        }
        let edges: &mut BTreeMap<String, String> = graph.entry(module.clone()).or_default();
        for path in &paths.0 {
            let Some(target) = resolve(&modules, module, path) else {
                continue;
            };
            if target.is_empty() || target == *module {
                continue;
            }
            edges.entry(target).or_insert_with(|| path.join("::"));
        }
    }
    (graph, modules)
}

/// Strongly connected components of more than one module (Tarjan).
fn cycles(graph: &BTreeMap<String, BTreeMap<String, String>>) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<String, BTreeMap<String, String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        found: Vec<Vec<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, v: &'g str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flat_map(|e| e.keys()) {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.push(w.to_owned());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found
}

fn lib() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")
}

#[test]
fn the_shim_has_no_import_cycles() {
    let (graph, modules) = graph(&lib());
    let (graph, modules) = (&graph, &modules);
    let found = cycles(graph);
    let report: Vec<String> = found
        .iter()
        .map(|component| {
            let members: BTreeSet<&String> = component.iter().collect();
            let edges: Vec<String> = component
                .iter()
                .flat_map(|from| {
                    graph[from]
                        .iter()
                        .filter(|(to, _)| members.contains(to))
                        .map(move |(to, path)| {
                            format!(
                                "  {from} -> {to} (names {path}, in {})",
                                modules[from].file.display()
                            )
                        })
                })
                .collect();
            format!("{}\n{}", component.join(", "), edges.join("\n"))
        })
        .collect();
    assert!(
        found.is_empty(),
        "import cycles among host modules:\n{}",
        report.join("\n\n")
    );
}

#[test]
fn lower_layers_import_nothing_above_them() {
    let (graph, _) = graph(&lib());
    let mut breaches = Vec::new();
    for (from, edges) in &graph {
        let top = from.split("::").next().unwrap_or("");
        let Some((_, allowed)) = LAYERS.iter().find(|(layer, _)| *layer == top) else {
            continue;
        };
        for (to, path) in edges {
            let to_top = to.split("::").next().unwrap_or("");
            if to_top != top && !allowed.contains(&to_top) {
                breaches.push(format!("{from} -> {to} (names {path})"));
            }
        }
    }
    assert!(
        breaches.is_empty(),
        "lower layers naming modules above them:\n{}",
        breaches.join("\n")
    );
}

/// Writes a crate of `(path, text)` files into a fresh directory.
fn fixture(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[test]
fn the_walk_sees_grouped_uses_child_paths_parents_doc_links_and_path_attributes() {
    let dir = fixture(&[
        (
            "lib.rs",
            "mod a;\nmod b;\nmod c;\n#[path = \"d_impl.rs\"]\nmod d;\n\
             #[cfg(test)]\n#[path = \"a_tests.rs\"]\nmod a_tests;\n",
        ),
        (
            "a.rs",
            "use crate::{b, c::{inner}};\npub mod child;\npub fn f() { child::g() }\n",
        ),
        ("a/child.rs", "pub fn g() { super::f() }\n"),
        ("b.rs", "pub struct Y;\npub mod shown;\n"),
        (
            "b/shown.rs",
            "pub(super) struct Z;\npub(in crate::b) struct W;\n",
        ),
        ("c.rs", "//! Read with [`crate::d::X`].\npub mod inner {}\n"),
        (
            "d_impl.rs",
            "/// Like [the other](crate::b::Y).\npub struct X;\n",
        ),
        ("a_tests.rs", "use crate::c;\n"),
    ]);
    let (graph, modules) = graph(&dir.path().join("lib.rs"));
    let edges = |from: &str| -> Vec<&str> { graph[from].keys().map(String::as_str).collect() };
    // `#[path]` is followed; a `#[cfg(test)]` module is not walked.
    assert!(modules["d"].file.ends_with("d_impl.rs"));
    assert!(!modules.contains_key("a_tests"));
    // A grouped `use`, a child named without `self::`, an expression path.
    assert_eq!(edges("a"), ["a::child", "b", "c::inner"]);
    // A child naming its parent is an edge.
    assert_eq!(edges("a::child"), ["a"]);
    // A visibility is not a use.
    assert!(edges("b::shown").is_empty());
    // Intra-doc links count: a module's `//!` docs and an item's `///`.
    assert_eq!(edges("c"), ["d"]);
    assert_eq!(edges("d"), ["b"]);
    assert_eq!(
        cycles(&graph),
        [vec!["a".to_owned(), "a::child".to_owned()]]
    );
}
