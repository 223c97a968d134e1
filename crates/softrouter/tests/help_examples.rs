//! The command line keeps its word (issue 19): every example the help
//! texts and the README's `sh` blocks show parses with the real clap
//! definitions (`softrouter::cli`), and `bench` examples also pass the
//! bench's own checks (`build_settings`: sizes, goals, the experiment).
//!
//! Examples are found three ways:
//! * README: each line of a ```sh block that starts with `softrouter`
//!   (continuations joined, `# comments` cut). `[optional]` parts are tried
//!   left out and, unless they hold a placeholder, put in. Placeholders in
//!   capitals (ADDR, PREFIX, ...) get a sample value; lines with `...`, or
//!   `a | b` alternatives, cannot stand for one command and are skipped
//!   (the test prints them);
//! * help: every "e.g. X or Y" in an option's help is given to that option;
//! * help: an option whose help names two or more of its possible values
//!   names all of them (a list that forgot `bridge` misleads).

use clap::Parser;
use softrouter::cli::{Cli, Command};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Sample values for the README's placeholders.
const PLACEHOLDERS: &[(&str, &str)] = &[
    ("ADDR", "198.18.0.2"),
    ("PREFIX", "198.19.0.0/16"),
    ("NH", "198.18.0.3"),
    ("MAC", "02:00:00:00:00:01"),
    ("PORT", "out"),
    ("PATH", "/run/softrouter/other.sock"),
    ("S", "1"),
    ("T", "a title"),
    ("SHELL", "bash"),
    ("DIR", "/tmp"),
];

fn is_placeholder(w: &str) -> bool {
    PLACEHOLDERS.iter().any(|(p, _)| *p == w)
}

/// Splits a shell line into words (single and double quotes, no
/// expansion) and cuts a trailing `# comment`.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote = None;
    let mut in_word = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '#') if !in_word => break,
            (None, c) if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

/// The README's `softrouter` lines in ```sh blocks, continuations joined.
fn readme_lines() -> Vec<String> {
    let text = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let mut out = Vec::new();
    let mut in_sh = false;
    let mut pending = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_sh = line.trim() == "```sh";
            continue;
        }
        if !in_sh {
            continue;
        }
        if !pending.is_empty() {
            pending.push(' ');
            pending.push_str(line.trim());
        } else if line.trim_start().starts_with("softrouter") {
            pending = line.trim().to_string();
        } else {
            continue;
        }
        if pending.ends_with('\\') {
            pending.pop();
        } else {
            out.push(std::mem::take(&mut pending));
        }
    }
    out
}

/// The command lines a README line stands for, or None (skipped).
fn variants(line: &str) -> Option<Vec<Vec<String>>> {
    // `[a b]` groups: left out, and put in unless they hold `...` or
    // `a | b` (which stand for no one command line).
    let vague = |g: &[String]| g.iter().any(|x| x == "..." || x == "|");
    let mut without = Vec::new();
    let mut with = Vec::new();
    let mut group: Option<Vec<String>> = None;
    for x in words(line) {
        if let Some(g) = &mut group {
            let end = x.ends_with(']');
            g.push(x.trim_end_matches(']').to_string());
            if end {
                let g = group.take().unwrap();
                if !vague(&g) {
                    with.extend(g);
                }
            }
        } else if let Some(rest) = x.strip_prefix('[') {
            if let Some(one) = rest.strip_suffix(']') {
                with.push(one.to_string());
            } else {
                group = Some(vec![rest.to_string()]);
            }
        } else if x == "..." || x == "|" {
            return None;
        } else {
            without.push(x.clone());
            with.push(x);
        }
    }
    let fill = |v: Vec<String>| -> Vec<String> {
        v.into_iter()
            .map(|x| {
                PLACEHOLDERS
                    .iter()
                    .find(|(p, _)| *p == x)
                    .map_or(x, |(_, s)| s.to_string())
            })
            .collect()
    };
    let mut out = vec![fill(without.clone())];
    if with != without {
        out.push(fill(with));
    }
    Some(out)
}

/// Parses `argv` with the real definitions; a bench line also goes
/// through the bench's own checks (experiment files found from the repo).
fn check(argv: &[String]) -> Result<(), String> {
    let cli = Cli::try_parse_from(argv).map_err(|e| e.to_string())?;
    #[cfg(feature = "bench")]
    if let Command::Bench(mut args) = cli.command {
        if let Some(e) = &args.experiment {
            let at = repo().join(e);
            if !at.exists() {
                return Ok(()); // a made-up file name: clap's part is done
            }
            args.experiment = Some(at);
        }
        bench_cli::cli::build_settings(&args).map_err(|e| format!("{e:#}"))?;
    }
    #[cfg(not(feature = "bench"))]
    let _: Command = cli.command;
    Ok(())
}

#[test]
fn readme_command_lines_parse() {
    let lines = readme_lines();
    assert!(lines.len() > 10, "README: only {} lines found", lines.len());
    let mut failures = Vec::new();
    let mut skipped = Vec::new();
    for line in &lines {
        let Some(vs) = variants(line) else {
            skipped.push(line.clone());
            continue;
        };
        for v in vs {
            if let Err(e) = check(&v) {
                failures.push(format!("{line}\n  as {v:?}:\n  {e}"));
            }
        }
    }
    eprintln!("skipped (placeholders or alternatives):");
    for s in &skipped {
        eprintln!("  {s}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Every command of the tree, with the words that reach it.
fn commands() -> Vec<(Vec<String>, clap::Command)> {
    fn walk(cmd: &clap::Command, path: Vec<String>, out: &mut Vec<(Vec<String>, clap::Command)>) {
        out.push((path.clone(), cmd.clone()));
        for s in cmd.get_subcommands() {
            let mut p = path.clone();
            p.push(s.get_name().to_string());
            walk(s, p, out);
        }
    }
    let mut cmd = softrouter::cli::command();
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, vec!["softrouter".into()], &mut out);
    out
}

/// The examples after "e.g." in a help text: up to the sentence's end,
/// alternatives split on " or ", quotes and backticks taken off, the last
/// word of a phrase ("a mix like X").
fn examples(help: &str) -> Vec<String> {
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = Vec::new();
    for part in help.split("e.g. ").skip(1) {
        let end = [". ", ";", ")", " ("]
            .iter()
            .filter_map(|t| part.find(t))
            .min()
            .unwrap_or(part.len());
        let mut s = &part[..end];
        s = s.strip_suffix('.').unwrap_or(s);
        for alt in s.split(" or ") {
            if let Some(w) = alt.split_whitespace().last() {
                out.push(w.trim_matches(|c| c == '`' || c == '"').to_string());
            }
        }
    }
    out
}

#[test]
fn examples_in_help_texts_parse() {
    let mut failures = Vec::new();
    let mut seen = 0;
    for (path, cmd) in commands() {
        for arg in cmd.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            let help = arg
                .get_long_help()
                .or(arg.get_help())
                .map(|h| h.to_string())
                .unwrap_or_default();
            for ex in examples(&help) {
                if is_placeholder(&ex) {
                    continue;
                }
                seen += 1;
                let mut argv = path.clone();
                argv.push(format!("--{long}"));
                argv.push(ex.clone());
                if let Err(e) = check(&argv) {
                    failures.push(format!("{}: --{long} {ex}: {e}", path.join(" ")));
                }
            }
        }
    }
    assert!(seen >= 3, "only {seen} examples found in the help texts");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The values of options whose type parses a string itself (the bench's
/// named enums: clap does not know their values).
fn parsed_values(command: &str, id: &str) -> Vec<String> {
    #[cfg(feature = "bench")]
    if command == "bench" {
        use bench::settings::{
            DutKind, FastPathMode, PortDriver, Preset, SoftrouterMode, TestKind, TesterBackend,
        };
        fn names<T: std::fmt::Display>(all: &[T]) -> Vec<String> {
            all.iter().map(ToString::to_string).collect()
        }
        return match id {
            "dut" => names(DutKind::ALL),
            "test" => names(TestKind::ALL),
            "tester" => names(TesterBackend::ALL),
            "preset" => names(Preset::ALL),
            "mode" => names(SoftrouterMode::ALL),
            "fast_path" => names(FastPathMode::ALL),
            "driver" => names(PortDriver::ALL),
            _ => Vec::new(),
        };
    }
    let _ = (command, id);
    Vec::new()
}

#[test]
fn value_lists_in_help_texts_are_complete() {
    let mut failures = Vec::new();
    for (path, cmd) in commands() {
        for arg in cmd.get_arguments() {
            let mut values: Vec<String> = arg
                .get_possible_values()
                .iter()
                .filter(|v| !v.is_hide_set())
                .map(|v| v.get_name().to_string())
                .collect();
            if values.is_empty() {
                values = parsed_values(path.last().unwrap(), arg.get_id().as_str());
            }
            if values.len() < 3 {
                continue;
            }
            let help = arg
                .get_long_help()
                .or(arg.get_help())
                .map(|h| h.to_string())
                .unwrap_or_default();
            let named = |v: &String| {
                help.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
                    .any(|w| w == v)
            };
            let (said, unsaid): (Vec<&String>, Vec<&String>) =
                values.iter().partition(|v| named(v));
            if said.len() >= 2 && !unsaid.is_empty() {
                failures.push(format!(
                    "{} --{}: the help names {said:?} but not {unsaid:?}",
                    path.join(" "),
                    arg.get_id()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_extractors_find_what_they_should() {
    assert_eq!(
        examples(r#"Frame sizes, e.g. 64,128,imix or a mix like "64:7,594:4,1518:1"."#),
        ["64,128,imix", "64:7,594:4,1518:1"]
    );
    assert_eq!(
        examples("codes, e.g. `ndr,pdr,rfc2544` or `1f21d0.1l50e`. Default: ndr,pdr."),
        ["ndr,pdr,rfc2544", "1f21d0.1l50e"]
    );
    assert_eq!(
        words(r#"softrouter bench --command 'a b' "c d"   # note"#),
        ["softrouter", "bench", "--command", "a b", "c d"]
    );
    let v =
        variants("softrouter run --config r.toml [--duration S] [--stats-json s.json]").unwrap();
    assert_eq!(v[0], words("softrouter run --config r.toml"));
    assert_eq!(
        v[1],
        words("softrouter run --config r.toml --duration 1 --stats-json s.json")
    );
    assert!(variants("softrouter ctl neigh show | neigh del ADDR").is_none());
    assert!(variants("softrouter ctl --socket PATH ...").is_none());
    let v = variants("softrouter report a.json [more.json ...] -o r.html").unwrap();
    assert_eq!(v, [words("softrouter report a.json -o r.html")]);
    let v = variants("softrouter ctl route show [PREFIX | --longest ADDR]").unwrap();
    assert_eq!(v, [words("softrouter ctl route show")]);
    // `...` inside a quoted value is the value's business.
    let v = variants("softrouter bench --command 'l3fwd ... -i $SR_IF_IN'").unwrap();
    assert_eq!(v[0][3], "l3fwd ... -i $SR_IF_IN");
}
