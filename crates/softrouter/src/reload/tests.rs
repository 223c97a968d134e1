use super::*;
use std::path::Path;

const BASE: &str = r#"
[router]
workers = 1

[[port]]
name = "a"
driver = "mem"
mac = "02:00:00:00:00:10"
addresses = ["198.18.0.1/24", "2001:2::1/64"]

[[port]]
name = "b"
driver = "mem"
mac = "02:00:00:00:00:11"
addresses = ["198.19.0.1/24"]
"#;

fn cfg(extra: &str) -> Config {
    config::parse(&format!("{BASE}{extra}"), Path::new("r.toml")).unwrap()
}

fn route(prefix: &str, via: &[(&str, usize)]) -> Route {
    Route {
        prefix: prefix.parse().unwrap(),
        via: via
            .iter()
            .map(|&(ip, p)| (ip.parse().unwrap(), p))
            .collect(),
    }
}

#[test]
fn the_same_file_changes_nothing() {
    let c = cfg(r#"
[[route]]
prefix = "198.20.0.0/16"
via = ["198.19.0.2"]
"#);
    let plan = Plan::new(&c, &c.clone()).unwrap();
    assert!(
        plan.is_empty() && plan.restart_needed.is_empty(),
        "{plan:?}"
    );
}

#[test]
fn routes_are_added_replaced_and_removed() {
    let old = cfg(r#"
[[route]]
prefix = "198.20.0.0/16"
via = ["198.19.0.2"]
[[route]]
prefix = "198.21.0.0/16"
via = ["198.19.0.2"]
[[route]]
prefix = "198.22.0.0/16"
via = ["198.19.0.2"]
"#);
    let new = cfg(r#"
[[route]]
prefix = "198.20.0.0/16"
via = ["198.19.0.2"]
[[route]]
prefix = "198.21.0.0/16"
via = ["198.19.0.3", "198.18.0.9"]
[[route]]
prefix = "2001:2:1::/48"
via = ["2001:2::9"]
"#);
    let plan = Plan::new(&old, &new).unwrap();
    assert_eq!(
        plan.set_routes,
        vec![
            route("198.21.0.0/16", &[("198.19.0.3", 1), ("198.18.0.9", 0)]),
            route("2001:2:1::/48", &[("2001:2::9", 0)]),
        ]
    );
    assert_eq!(plan.del_routes, vec!["198.22.0.0/16".parse().unwrap()]);
    assert!(plan.restart_needed.is_empty());
}

#[test]
fn neighbours_are_set_changed_and_removed() {
    let old = cfg(r#"
[[neighbor]]
address = "198.19.0.2"
mac = "02:00:00:00:00:22"
port = "b"
[[neighbor]]
address = "198.18.0.3"
mac = "02:00:00:00:00:33"
port = "a"
"#);
    let new = cfg(r#"
[[neighbor]]
address = "198.19.0.2"
mac = "02:00:00:00:00:23"
port = "b"
"#);
    let plan = Plan::new(&old, &new).unwrap();
    assert_eq!(plan.set_neighbors.len(), 1);
    assert_eq!(plan.set_neighbors[0].mac, [2, 0, 0, 0, 0, 0x23]);
    assert_eq!(
        plan.del_neighbors,
        vec!["198.18.0.3".parse::<IpAddr>().unwrap()]
    );
}

#[test]
fn what_only_a_restart_applies_is_named() {
    let old = cfg("");
    let text = BASE
        .replace("workers = 1", "workers = 2\nicmp_rate = 10")
        .replace("198.19.0.1/24", "198.19.0.1/25");
    let new = config::parse(
        &format!("{text}\n[metrics]\nlisten = \"127.0.0.1:9469\"\n"),
        Path::new("r.toml"),
    )
    .unwrap();
    let plan = Plan::new(&old, &new).unwrap();
    assert!(plan.is_empty());
    assert_eq!(
        plan.restart_needed,
        [
            "[router] workers",
            "[router] icmp_rate",
            "[[port]] \"b\"",
            "[metrics]"
        ]
    );
}

#[test]
fn routes_are_judged_against_the_running_ports() {
    // The new file moves port b to 198.23.0.1/24 and routes through it:
    // the running port b is still on 198.19.0.0/24, so the route cannot
    // be applied before a restart, and the reload is refused whole.
    let old = cfg("");
    let text = BASE.replace("198.19.0.1/24", "198.23.0.1/24");
    let new = config::parse(
        &format!("{text}\n[[route]]\nprefix = \"198.20.0.0/16\"\nvia = [\"198.23.0.2\"]\n"),
        Path::new("r.toml"),
    )
    .unwrap();
    let e = Plan::new(&old, &new).unwrap_err().to_string();
    assert!(
        e.contains("route 198.20.0.0/16: via: ") && e.contains("running ports"),
        "{e}"
    );
}
