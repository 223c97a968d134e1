//! The workspace's module layering, checked from its source (issue 8: "no
//! module cycle in the bench code"; issue 20: none in any crate).
//!
//! Since the bench became four crates (`bench`, the core; `traffic`, the
//! engine; `dut`, the launchers; `bench_cli`, the run and the command
//! line), cargo checks the layers between them: the core cannot use the
//! engine, the launchers or the command line, nor the engine and the
//! launchers each other, because their crates do not depend on them. So
//! the test that read that from the source is gone
//! (`the_core_never_uses_the_engine_the_launchers_or_the_cli`), and so is
//! its list of core and top modules. What cargo cannot check is kept here:
//!
//! - inside each crate of the workspace, the modules form no cycle (this
//!   test, in the bench core, reads every member's source from its folder
//!   beside it; the members are the workspace `Cargo.toml`'s);
//! - inside the core, `settings` depends on nothing but the frame sizes.
//!
//! A module is a file or folder directly under a crate's `src/` (the crate
//! roots `lib.rs` and `main.rs` are not; a folder module is all of its
//! files, and `a.rs` beside `a/` is the same module). Its
//! dependencies are the crate's other modules that its non-test code
//! (everything before its `#[cfg(test)]` test module; comments skipped)
//! names by a path from the crate root (a `tests.rs` file or `tests/` folder is
//! test code: a module's `#[cfg(test)] mod tests;`): `crate::<module>`, or
//! `super::<module>` with as many `super::` as lead from that file to the
//! root; `{...}` groups after either count each of their names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src(krate: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(krate)
        .join("src")
}

/// Every workspace member, by folder under `crates/`.
fn members() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
    let ws: toml::Table = std::fs::read_to_string(&path)
        .unwrap()
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    ws["workspace"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            m.as_str()
                .unwrap()
                .trim_start_matches("crates/")
                .to_string()
        })
        .collect()
}

fn non_test_code(text: &str) -> String {
    let end = text.find("#[cfg(test)]\nmod tests").unwrap_or(text.len());
    text[..end]
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn ident(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// The first name of `rest` (what follows a root path's `::`), or of each
/// item of a `{...}` group there.
fn names_after(rest: &str, out: &mut BTreeSet<String>) {
    let Some(group) = rest.strip_prefix('{') else {
        out.insert(ident(rest));
        return;
    };
    let (mut depth, mut start) = (0, 0);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                out.insert(ident(group[start..i].trim_start()));
                return;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.insert(ident(group[start..i].trim_start()));
                start = i + 1;
            }
            _ => {}
        }
    }
}

/// The names after `crate::`, and after exactly `supers` times `super::`.
fn root_refs(code: &str, supers: usize, out: &mut BTreeSet<String>) {
    let starts_path = |i: usize| {
        !code[..i]
            .ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == ':')
    };
    for (i, _) in code.match_indices("crate::") {
        if starts_path(i) {
            names_after(&code[i + 7..], out);
        }
    }
    for (i, _) in code.match_indices("super::") {
        if !starts_path(i) {
            continue; // inside a longer `super::super::` run
        }
        let mut rest = &code[i..];
        let mut n = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            rest = r;
            n += 1;
        }
        if n == supers {
            names_after(rest, out);
        }
    }
    out.remove("");
}

/// Adds the root references of every `.rs` file under `path` (`rel`: its
/// path under `src/`).
fn read_tree(path: &Path, rel: &Path, out: &mut BTreeSet<String>) {
    if path.file_stem().is_some_and(|n| n == "tests") {
        // A folder module's `#[cfg(test)] mod tests;` (`tests.rs` and its
        // children in `tests/`): test code.
    } else if path.is_dir() {
        for e in std::fs::read_dir(path).unwrap() {
            let e = e.unwrap();
            read_tree(&e.path(), &rel.join(e.file_name()), out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        // src/a.rs and src/a/mod.rs are one `super::` from the root,
        // src/a/b.rs two, and so on.
        let mut supers = rel.components().count();
        if path.file_name().is_some_and(|n| n == "mod.rs") {
            supers -= 1;
        }
        let code = non_test_code(&std::fs::read_to_string(path).unwrap());
        root_refs(&code, supers, out);
    }
}

/// Module -> the modules of the same crate its non-test code uses.
fn graph(krate: &str) -> BTreeMap<String, BTreeSet<String>> {
    let src = src(krate);
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for e in std::fs::read_dir(&src).unwrap_or_else(|e| panic!("{}: {e}", src.display())) {
        let e = e.unwrap();
        let p = e.path();
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        if name == "lib" || name == "main" || name == "tests" {
            continue;
        }
        let deps = g.entry(name.clone()).or_default();
        read_tree(&p, Path::new(&e.file_name()), deps);
        deps.remove(&name);
    }
    let modules: BTreeSet<String> = g.keys().cloned().collect();
    for deps in g.values_mut() {
        deps.retain(|d| modules.contains(d));
    }
    g
}

#[test]
fn settings_depend_on_nothing_but_frame_sizes() {
    let g = graph("bench");
    let deps = &g["settings"];
    assert!(deps.iter().all(|d| d == "sizes"), "settings uses {deps:?}");
    assert!(
        g["suite"].contains("settings"),
        "the suite reads the typed settings"
    );
}

/// A cycle of `g` (its modules in order, the first repeated at the end),
/// found by a depth-first search for a back edge.
fn find_cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(m) {
            Some(1) => {
                let start = path.iter().position(|p| p == m).unwrap();
                let mut cycle = path[start..].to_vec();
                cycle.push(m.to_string());
                return Some(cycle);
            }
            Some(_) => return None,
            None => {}
        }
        state.insert(m.to_string(), 1);
        path.push(m.to_string());
        for d in &g[m] {
            if let Some(c) = visit(d, g, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(m.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    g.keys()
        .find_map(|m| visit(m, g, &mut state, &mut Vec::new()))
}

#[test]
fn no_module_cycle_in_any_crate() {
    let members = members();
    assert!(members.len() > 10, "{members:?}");
    let mut cycles = Vec::new();
    for krate in &members {
        if let Some(c) = find_cycle(&graph(krate)) {
            cycles.push(format!("module cycle in {krate}: {}", c.join(" -> ")));
        }
    }
    assert!(cycles.is_empty(), "{}", cycles.join("\n"));
}

/// The graphs see the paths each crate uses between its modules: one
/// `super::` from a top-level file, two from a folder module's file, and
/// `{...}` groups (else a crate's graph could be empty and its check
/// vacuous).
#[test]
fn the_graphs_see_every_kind_of_path() {
    let edge = |krate: &str, from: &str, to: &str| {
        let g = graph(krate);
        assert!(
            g.get(from).is_some_and(|d| d.contains(to)),
            "{krate}: {from} -> {to} not seen in {g:?}"
        );
    };
    edge("bench", "suite", "throughput"); // crate::throughput
    edge("traffic", "gen", "clock"); // super::clock::...
    edge("traffic", "threads", "xdp"); // super::{clock, cpu, neigh, xdp, ...}
    edge("traffic", "xdp", "limits"); // super::super::limits in xdp/trial.rs
    edge("dut", "probe", "soak"); // super::soak
    edge("bench-cli", "cli", "run"); // crate::run
    edge("softrouter", "engine", "ports"); // crate::ports, beside main.rs
}

/// The check can fail: an edge back from the typed settings to the suite
/// that reads them is found as a cycle.
#[test]
fn the_cycle_check_finds_a_cycle() {
    let mut g = graph("bench");
    assert!(
        g["suite"].contains("settings"),
        "the suite reads the typed settings (else pick another edge)"
    );
    g.get_mut("settings").unwrap().insert("suite".to_string());
    let c = find_cycle(&g).expect("settings -> suite -> settings is a cycle");
    assert_eq!(c.first(), c.last(), "{c:?}");
    assert!(c.len() >= 3, "{c:?}");
}

/// The dataplane runs one way (issue 20): its stages (`input` ->
/// `forward` -> `hold` -> `output` -> `tx`, with `local` and `icmp` over the
/// per-burst context `cx`) and its control side (`control` -> `shared` ->
/// `router`, and `stats` -> `accounting`; the report itself is data in the
/// `schema` crate) form no cycle.
#[test]
fn no_module_cycle_in_the_dataplane() {
    let g = graph("dataplane");
    if let Some(c) = find_cycle(&g) {
        panic!("module cycle in dataplane: {}", c.join(" -> "));
    }
    // Not vacuous: the graph sees the pipeline's and the control side's
    // edges (a folder module's files, `crate::` paths and groups).
    for (from, to) in [
        ("worker", "cx"),
        ("input", "local"),
        ("forward", "hold"),
        ("hold", "output"),
        ("output", "frag"),
        ("cx", "tx"),
        ("icmp", "cx"),
        ("router", "control"),
        ("shared", "control"),
        ("control", "neighbor"),
        ("stats", "accounting"),
    ] {
        assert!(
            g.get(from).is_some_and(|d| d.contains(to)),
            "dataplane: {from} -> {to} not seen in {g:?}"
        );
    }
}
