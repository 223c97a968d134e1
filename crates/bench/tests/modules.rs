//! The bench's module layering, checked from its source (issue 8: "no
//! module cycle in the bench code"): the network-independent core (the
//! RFC 2544 procedures, settings, results and reports) never uses the
//! traffic engine, the DUT launchers or the command line, `settings`
//! depends on nothing but the frame sizes, and the modules form no cycle.
//!
//! A module's dependencies are the `crate::<module>` paths in its non-test
//! code (everything before its `#[cfg(test)]` test module; comments
//! skipped); a directory module (`dut/`, `traffic/`, `settings/`) is all of
//! its files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Modules that do no I/O on the network and may not reach the engine.
/// (The test frame format is the `softrouter-tester` crate's `frame`, which
/// uses no bench module at all.)
const CORE: &[&str] = &[
    "analyzer",
    "plan",
    "plot",
    "report",
    "results",
    "search",
    "settings",
    "sim",
    "sizes",
    "suite",
    "sysstat",
    "throughput",
];

/// The engine.
const TOP: &[&str] = &["traffic"];

fn non_test_code(text: &str) -> String {
    let end = text.find("#[cfg(test)]\nmod tests").unwrap_or(text.len());
    text[..end]
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn crate_refs(code: &str, out: &mut BTreeSet<String>) {
    for (i, _) in code.match_indices("crate::") {
        if code[..i].ends_with('$') {
            continue; // `$crate::` in macros
        }
        let name: String = code[i + 7..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.insert(name);
        }
    }
}

fn read_tree(path: &Path, out: &mut BTreeSet<String>) {
    if path.is_dir() {
        for e in std::fs::read_dir(path).unwrap() {
            read_tree(&e.unwrap().path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        crate_refs(&non_test_code(&std::fs::read_to_string(path).unwrap()), out);
    }
}

/// Module -> the modules its non-test code uses.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        if name == "lib" {
            continue;
        }
        let deps = g.entry(name.clone()).or_default();
        read_tree(&p, deps);
        deps.remove(&name);
    }
    let modules: BTreeSet<String> = g.keys().cloned().collect();
    for deps in g.values_mut() {
        deps.retain(|d| modules.contains(d));
    }
    g
}

#[test]
fn the_core_never_uses_the_engine_the_launchers_or_the_cli() {
    let g = graph();
    for m in CORE {
        let deps = g.get(*m).unwrap_or_else(|| panic!("module {m} not found"));
        let bad: Vec<&String> = deps.iter().filter(|d| TOP.contains(&d.as_str())).collect();
        assert!(bad.is_empty(), "{m} uses {bad:?}");
    }
}

#[test]
fn settings_depend_on_nothing_but_frame_sizes() {
    let g = graph();
    let deps = &g["settings"];
    assert!(
        deps.iter().all(|d| d == "sizes" || d == "frame"),
        "settings uses {deps:?}"
    );
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
fn no_module_cycle() {
    if let Some(c) = find_cycle(&graph()) {
        panic!("module cycle: {}", c.join(" -> "));
    }
}

/// The check can fail: an edge back from the typed settings to the suite
/// that reads them is found as a cycle.
#[test]
fn the_cycle_check_finds_a_cycle() {
    let mut g = graph();
    assert!(
        g["suite"].contains("settings"),
        "the suite reads the typed settings (else pick another edge)"
    );
    g.get_mut("settings").unwrap().insert("suite".to_string());
    let c = find_cycle(&g).expect("settings -> suite -> settings is a cycle");
    assert_eq!(c.first(), c.last(), "{c:?}");
    assert!(c.len() >= 3, "{c:?}");
}
