//! The routes file, checked against its configuration by the validator
//! that `run` and `check-config` share: streamed, every error names the
//! file and the line, messages quote a short excerpt.

use config::routes_file::{check, check_reader, Summary, MAX_LINE};
use config::Config;
use std::io::Read;
use std::path::Path;

const CONFIG: &str = r#"
[[port]]
name = "p0"
driver = "pcap"
mac = "02:00:00:00:00:10"
addresses = ["198.18.0.1/24", "2001:2:0:1::1/64"]

[[port]]
name = "p1"
driver = "pcap"
mac = "02:00:00:00:00:11"
addresses = ["198.19.0.1/16"]

[[route]]
prefix = "10.0.0.0/8"
via = ["198.19.0.2"]
"#;

fn cfg() -> Config {
    config::parse(CONFIG, Path::new("/etc/sr/router.toml")).unwrap()
}

fn run(text: &str, max: usize) -> Result<Summary, config::ConfigError> {
    check_reader(&cfg(), Path::new("/etc/sr/table.txt"), text.as_bytes(), max)
}

fn expect(text: &str, line: usize, needle: &str) {
    let e = run(text, 1 << 16).expect_err(text);
    assert_eq!(e.line, line, "{e}");
    assert!(e.message.contains(needle), "{e} lacks {needle:?}");
    assert!(
        e.to_string()
            .starts_with(&format!("/etc/sr/table.txt:{line}: ")),
        "{e}"
    );
}

#[test]
fn good_file() {
    let s = run(
        "# table\n\n203.0.113.0/24 198.19.0.2\n198.51.100.0/24 198.19.0.3 # x\n2001:db8::/32 2001:2:0:1::9\n203.0.113.0/24 198.19.0.2\n",
        1 << 16,
    )
    .unwrap();
    // The verbatim repeat counts once; next hops: 2 per port, 198.19.0.2
    // (also the [[route]]'s), .3 and the IPv6 one.
    assert_eq!(
        s,
        Summary {
            routes: 3,
            next_hops: 7
        }
    );
}

#[test]
fn next_hop_off_every_subnet_has_a_line() {
    expect(
        "203.0.113.0/24 198.19.0.2\n198.51.100.0/24 192.0.2.1\n",
        2,
        "on no port's subnet",
    );
    expect("203.0.113.0/24 198.19.0.1\n", 1, "own address");
    expect("203.0.113.0/24 198.19.255.255\n", 1, "broadcast");
}

#[test]
fn more_next_hops_than_the_table_holds_has_a_line() {
    let text: String = (0..20)
        .map(|i| format!("203.0.{i}.0/24 198.19.1.{}\n", i + 1))
        .collect();
    // 4 for the ports + 198.19.0.2 of the [[route]] = 5; a table of 10
    // takes 5 more: the 6th file next hop, line 6, is one too many.
    let e = run(&text, 10).unwrap_err();
    assert_eq!(e.line, 6, "{e}");
    assert!(e.message.contains("table holds 10"), "{e}");
    // Routes sharing next hops do not count twice.
    let shared: String = (0..200)
        .map(|i| format!("203.0.{i}.0/24 198.19.1.{}\n", i % 3 + 1))
        .collect();
    assert_eq!(run(&shared, 10).unwrap().next_hops, 8);
}

#[test]
fn route_rules_are_those_of_the_toml() {
    expect("198.19.0.1/32 198.19.0.2\n", 1, "own address");
    expect("198.19.7.0/24 198.19.0.2\n", 1, "connected subnet");
    expect("203.0.113.1/24 198.19.0.2\n", 1, "host bits");
    expect("203.0.113.0/24 2001:2:0:1::9\n", 1, "family");
    expect(
        "203.0.113.0/24 198.19.0.2\n203.0.113.0/24 198.19.0.3\n",
        2,
        "line 1 gives 198.19.0.2",
    );
    expect("10.0.0.0/8 198.19.0.3\n", 1, "[[route]]");
    // The same as the [[route]] is no conflict.
    run("10.0.0.0/8 198.19.0.2\n", 16).unwrap();
    expect("203.0.113.0/24\n", 1, "expected \"prefix next-hop\"");
    expect("x y\n", 1, "prefix");
}

#[test]
fn long_lines_are_refused_early_with_a_short_excerpt() {
    let mut text = String::from("203.0.113.0/24 198.19.0.2\n# ");
    text.push_str(&"x".repeat(10 << 20));
    text.push('\n');
    let e = run(&text, 16).unwrap_err();
    assert_eq!(e.line, 2, "{e}");
    assert!(
        e.message.contains(&format!("longer than {MAX_LINE}")),
        "{e}"
    );
    assert!(e.to_string().len() < 300, "{} bytes", e.to_string().len());
    // A line just under the limit is fine.
    let ok = format!("203.0.113.0/24 198.19.0.2 #{}\n", "y".repeat(MAX_LINE - 30));
    run(&ok, 16).unwrap();
}

#[test]
fn long_tokens_are_quoted_short() {
    let text = format!("{} 198.19.0.2\n", "9".repeat(1000));
    let e = run(&text, 16).unwrap_err();
    assert!(e.to_string().len() < 300, "{e}");
    let e = run("203.0.113.0/24 198.19.0.2 extra extra extra extra extra extra extra extra extra extra extra\n", 16).unwrap_err();
    assert!(e.message.contains("..."), "{e}");
}

#[test]
fn not_utf8_is_a_line_error() {
    let e = check_reader(
        &cfg(),
        Path::new("t"),
        &b"203.0.113.0/24 198.19.0.2\n\xff\xfe 1.2.3.4\n"[..],
        16,
    )
    .unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.message.contains("UTF-8"), "{e}");
}

/// The file is read as a stream: a reader that would take forever to
/// read whole is stopped at the first bad line.
#[test]
fn streamed_not_read_whole() {
    struct Endless(u64);
    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let line: &[u8] = if self.0 == 3 {
                b"oops\n"
            } else {
                b"203.0.113.0/24 198.19.0.2\n"
            };
            self.0 += 1;
            let n = line.len().min(buf.len());
            buf[..n].copy_from_slice(&line[..n]);
            Ok(n)
        }
    }
    let e = check_reader(&cfg(), Path::new("t"), Endless(0), 16).unwrap_err();
    assert_eq!(e.line, 4, "{e}");
}

#[test]
fn files_on_disk_plain_and_gzip() {
    let dir = std::env::temp_dir().join(format!("sr-routes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plain = dir.join("t.txt");
    std::fs::write(
        &plain,
        "203.0.113.0/24 198.19.0.2\n203.0.114.0/24 192.0.2.1\n",
    )
    .unwrap();
    let text = format!("{CONFIG}\n[routes_file]\npath = \"t.txt\"\n");
    let c = config::parse(&text, &dir.join("r.toml")).unwrap();
    let e = check(&c, 1 << 16).unwrap_err();
    assert_eq!((e.file.clone(), e.line), (plain.clone(), 2), "{e}");
    let gz = dir.join("t.txt.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut enc, b"# gz\n203.0.113.0/24 198.19.0.2\n").unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let c = config::parse(&text.replace("t.txt", "t.txt.gz"), &dir.join("r.toml")).unwrap();
    assert_eq!(check(&c, 1 << 16).unwrap().routes, 1);
    let _ = std::fs::remove_dir_all(dir);
}
