//! All benchmark options as one serde struct, loadable from an experiment
//! TOML file (R15: the settings go into the results, so a run can be
//! repeated exactly from them).
//!
//! Two presets set the durations and repetitions: `quick` (default: 2 s
//! trials, 1 s pauses, 1 repetition, for development) and `rfc` (60 s
//! trials, 2 s drain, 20 latency repetitions of 120 s, 50 back-to-back
//! trials, a 60 s confirmation trial). Preset-dependent options are
//! `Option`s in the file: unset means "the preset's value";
//! [`Settings::resolved`] fills them in, and that is what results store.
//!
//! Errors name the file, the line and column, and the field
//! (`bench.toml:7:16: field `trial_seconds`: invalid type ...`).
//!
//! ```toml
//! preset = "rfc"
//! tests = ["throughput", "latency"]
//! sizes = ["64", "1518", "imix"]
//! ip = "both"
//! pattern = "bidirectional"
//! flows = 64
//!
//! [dut]
//! kind = "linux"
//! rps = "all"
//! ```

use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize};

use crate::sizes::FrameSize;

/// Duration and repetition defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// Short trials for development.
    #[default]
    Quick,
    /// RFC 2544 durations and repetitions.
    Rfc,
}

/// Which device is under test, with its own options.
///
/// ```toml
/// [dut]
/// kind = "softrouter"     # or linux, command, external
/// driver = "afxdp"        # softrouter: afxdp (default) or afpacket
/// workers = 1
/// mode = "poll"
///
/// # kind = "linux"
/// # napi_budget = 300     # net.core.netdev_budget (global; restored at the end)
/// # rps = "per-port"      # off | all | per-port | hex mask | "1,2,4" (one mask per port)
/// # napi = true           # veth GRO on = per-queue NAPI on the DUT ports
///
/// # kind = "command"
/// # command = "my-router --in $SR_IF_IN --out $SR_IF_OUT"
/// # settle_seconds = 1
///
/// # kind = "external"
/// # interfaces = ["enp1s0f0", "enp1s0f1"]
/// # peer_macs = ["02:00:00:00:01:00", "02:00:00:00:01:01"]
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum DutSettings {
    /// softrouter, started by the benchmark in the DUT namespace.
    Softrouter {
        /// Router configuration file (default: generated for the topology).
        #[serde(default)]
        config: Option<PathBuf>,
        /// Worker threads.
        #[serde(default)]
        workers: Option<u32>,
        /// Reception mode: poll, interrupt, adaptive.
        #[serde(default)]
        mode: Option<String>,
        /// Port driver of the generated configuration: `afxdp` (default)
        /// or `afpacket`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        driver: Option<String>,
        /// Packets per port per round (`[router] budget`), softrouter's
        /// analog of the NAPI budget.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        budget: Option<u32>,
    },
    /// The Linux kernel forwarding in the DUT namespace.
    Linux {
        /// NAPI budget (`net.core.netdev_budget`); unset = unchanged.
        #[serde(default)]
        napi_budget: Option<u32>,
        /// Which CPU does each DUT port's receive processing (RPS, the veth
        /// analog of paper 000's NIC affinity modes): `off` (the sending
        /// CPU), `all` (every CPU), `per-port` (port i on CPU i mod
        /// #CPUs), a hex CPU mask for every port, or comma-separated hex
        /// masks, one per port. Unset = unchanged (off).
        #[serde(default)]
        rps: Option<String>,
        /// Turn GRO on for the DUT's veth ends, which makes veth receive
        /// through per-queue NAPI instances (as a NIC driver does) instead
        /// of the per-CPU backlog. Unset = the veth default (GRO off).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        napi: Option<bool>,
    },
    /// Any command, started in the DUT namespace with its two interface
    /// names in `$SR_IF_IN`/`$SR_IF_OUT`.
    Command {
        /// The command line (run by `sh -c`).
        command: String,
        /// A command printing the DUT's version string.
        #[serde(default)]
        version_command: Option<String>,
        /// Give the DUT interfaces the kernel addresses, routes and
        /// neighbors of the plan (forwarding stays off); default true.
        /// `false`: bare interfaces, for user-space routers.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        addresses: Option<bool>,
        /// Wait this long after starting the command before traffic
        /// (default 1 s).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        settle_seconds: Option<f64>,
    },
    /// An external device on interfaces the user names explicitly (R16).
    External {
        /// Tester interfaces connected to the DUT, in port order.
        interfaces: Vec<String>,
        /// Free-form description / version of the device for the report.
        #[serde(default)]
        description: Option<String>,
        /// MAC of the DUT port on each interface, in port order; unset =
        /// looked up in the kernel's neighbor table for 198.18.i.1.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        peer_macs: Option<Vec<String>>,
    },
}

impl Default for DutSettings {
    fn default() -> Self {
        DutSettings::Softrouter {
            config: None,
            workers: None,
            mode: None,
            driver: None,
            budget: None,
        }
    }
}

impl DutSettings {
    /// `softrouter`, `linux`, `command` or `external`.
    pub fn kind(&self) -> &'static str {
        match self {
            DutSettings::Softrouter { .. } => "softrouter",
            DutSettings::Linux { .. } => "linux",
            DutSettings::Command { .. } => "command",
            DutSettings::External { .. } => "external",
        }
    }
}

/// The RFC 2544 tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TestKind {
    /// R8.
    Throughput,
    /// R9.
    Latency,
    /// R10 frame loss rate.
    Loss,
    /// R11 back-to-back.
    BackToBack,
    /// R12 system recovery.
    Recovery,
}

impl TestKind {
    /// Name as in the settings file.
    pub fn name(self) -> &'static str {
        match self {
            TestKind::Throughput => "throughput",
            TestKind::Latency => "latency",
            TestKind::Loss => "loss",
            TestKind::BackToBack => "back-to-back",
            TestKind::Recovery => "recovery",
        }
    }
}

/// IP version(s) to test: `4`, `6` or `"both"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IpVersion {
    /// IPv4 only.
    #[default]
    V4,
    /// IPv6 only.
    V6,
    /// Both, IPv4 first.
    Both,
}

impl IpVersion {
    /// The versions to run, as `false` = IPv4, `true` = IPv6.
    pub fn versions(self) -> Vec<bool> {
        match self {
            IpVersion::V4 => vec![false],
            IpVersion::V6 => vec![true],
            IpVersion::Both => vec![false, true],
        }
    }
}

impl Serialize for IpVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(match self {
            IpVersion::V4 => "4",
            IpVersion::V6 => "6",
            IpVersion::Both => "both",
        })
    }
}

impl<'de> Deserialize<'de> for IpVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(i64),
            S(String),
        }
        let s = match Raw::deserialize(d)? {
            Raw::N(n) => n.to_string(),
            Raw::S(s) => s,
        };
        match s.as_str() {
            "4" | "ipv4" => Ok(IpVersion::V4),
            "6" | "ipv6" => Ok(IpVersion::V6),
            "both" | "46" => Ok(IpVersion::Both),
            o => Err(serde::de::Error::custom(format!(
                "ip must be 4, 6 or \"both\", not {o:?}"
            ))),
        }
    }
}

/// Traffic pattern (R14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Pattern {
    /// Port 0 sends to port 1.
    #[default]
    OneToOne,
    /// Ports 0 and 1 send to each other.
    Bidirectional,
    /// N ports, every port sends to every other (full mesh).
    Mesh(u32),
    /// N input ports send to one output port.
    ManyToOne(u32),
}

impl Pattern {
    /// Ports the pattern needs.
    pub fn ports(self) -> u32 {
        match self {
            Pattern::OneToOne | Pattern::Bidirectional => 2,
            Pattern::Mesh(n) => n,
            Pattern::ManyToOne(n) => n + 1,
        }
    }
}

impl FromStr for Pattern {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let num = |v: &str, min: u32| -> Result<u32, String> {
            let n: u32 = v.parse().map_err(|_| format!("bad port count in {s:?}"))?;
            if n < min || n > 256 {
                return Err(format!("port count in {s:?} must be {min}..=256"));
            }
            Ok(n)
        };
        match s {
            "one-to-one" => Ok(Pattern::OneToOne),
            "bidirectional" => Ok(Pattern::Bidirectional),
            _ => {
                if let Some(n) = s.strip_prefix("mesh:") {
                    Ok(Pattern::Mesh(num(n, 2)?))
                } else if let Some(n) = s.strip_prefix("many-to-one:") {
                    Ok(Pattern::ManyToOne(num(n, 1)?))
                } else {
                    Err(format!(
                        "pattern {s:?}: expected one-to-one, bidirectional, mesh:N or many-to-one:N"
                    ))
                }
            }
        }
    }
}

impl TryFrom<String> for Pattern {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl From<Pattern> for String {
    fn from(p: Pattern) -> String {
        match p {
            Pattern::OneToOne => "one-to-one".into(),
            Pattern::Bidirectional => "bidirectional".into(),
            Pattern::Mesh(n) => format!("mesh:{n}"),
            Pattern::ManyToOne(n) => format!("many-to-one:{n}"),
        }
    }
}

/// Every benchmark option. Field docs give the defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// Duration/repetition preset: `quick` (default) or `rfc`.
    pub preset: Preset,
    /// The device under test.
    pub dut: DutSettings,
    /// Tests to run, in order (default: throughput, latency).
    pub tests: Vec<TestKind>,
    /// Frame sizes (default: the seven RFC 2544 sizes and `imix`).
    pub sizes: Vec<FrameSize>,
    /// IP version: 4, 6 or "both" (default 4).
    pub ip: IpVersion,
    /// Traffic pattern (default one-to-one).
    pub pattern: Pattern,
    /// Flows per port (RSS spread; default 1).
    pub flows: u32,
    /// Queues per veth (default 1).
    pub queues: u32,
    /// Search/loss trial length, s (quick 2, rfc 60).
    pub trial_seconds: Option<f64>,
    /// Pause after learning frames and between trials, s (quick 1, rfc 2).
    pub pause_seconds: Option<f64>,
    /// Drain time after the last frame before counters are read, s
    /// (quick 1, rfc 2).
    pub drain_seconds: Option<f64>,
    /// Confirmation trial length, s; 0 = none (quick 0, rfc 60).
    pub confirm_seconds: Option<f64>,
    /// Loss tolerance of the throughput search, % (default 0: NDR).
    pub loss_tolerance_pct: f64,
    /// Search resolution, % of the maximum rate (default 0.1).
    pub resolution_pct: f64,
    /// Achieved-rate shortfall above which a trial is tester-limited, %
    /// (default 1).
    pub rate_tolerance_pct: f64,
    /// Loss series step, % (default 10).
    pub loss_step_pct: f64,
    /// Latency trial length, s (quick 2, rfc 120).
    pub latency_seconds: Option<f64>,
    /// Latency repetitions (quick 1, rfc 20).
    pub latency_repetitions: Option<u32>,
    /// Back-to-back repetitions (quick 1, rfc 50).
    pub b2b_trials: Option<u32>,
    /// Longest back-to-back burst, s at the maximum rate (default 2).
    pub b2b_max_burst_seconds: f64,
    /// Overload phase of the recovery test, s (quick 2, rfc 60).
    pub recovery_overload_seconds: Option<f64>,
    /// 50 % phase of the recovery test, s (quick 2, rfc 60).
    pub recovery_seconds: Option<f64>,
    /// Repetitions of the whole run per size (quick 1, rfc 1).
    pub repetitions: Option<u32>,
    /// Maximum rate per port, frames/s; unset = link rate or the tester's
    /// calibrated maximum (R2).
    pub max_rate_fps: Option<f64>,
    /// Link speed for the theoretical rate, bit/s; unset for veth.
    pub link_bps: Option<f64>,
    /// JSON results path.
    pub json: Option<PathBuf>,
    /// CSV results path (one row per trial).
    pub csv: Option<PathBuf>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            preset: Preset::Quick,
            dut: DutSettings::default(),
            tests: vec![TestKind::Throughput, TestKind::Latency],
            sizes: crate::sizes::RFC2544_SIZES
                .iter()
                .map(|&s| FrameSize::Fixed(s))
                .chain([FrameSize::Mix(crate::sizes::Mix::cisco())])
                .collect(),
            ip: IpVersion::V4,
            pattern: Pattern::OneToOne,
            flows: 1,
            queues: 1,
            trial_seconds: None,
            pause_seconds: None,
            drain_seconds: None,
            confirm_seconds: None,
            loss_tolerance_pct: 0.0,
            resolution_pct: 0.1,
            rate_tolerance_pct: 1.0,
            loss_step_pct: 10.0,
            latency_seconds: None,
            latency_repetitions: None,
            b2b_trials: None,
            b2b_max_burst_seconds: 2.0,
            recovery_overload_seconds: None,
            recovery_seconds: None,
            repetitions: None,
            max_rate_fps: None,
            link_bps: None,
            json: None,
            csv: None,
        }
    }
}

/// A settings error located in its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsError {
    /// The file (or `<string>`).
    pub file: String,
    /// 1-based line, if known.
    pub line: Option<usize>,
    /// 1-based column, if known.
    pub column: Option<usize>,
    /// The dotted field name, if known.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for SettingsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        write!(f, ": ")?;
        if let Some(k) = &self.field {
            write!(f, "field `{k}`: ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for SettingsError {}

/// 1-based (line, column) of byte offset `pos`.
fn line_col(text: &str, pos: usize) -> (usize, usize) {
    let pos = pos.min(text.len());
    let before = &text[..pos];
    let line = before.matches('\n').count() + 1;
    let col = pos - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

/// The dotted key defined on `line` (1-based), prefixed with the table
/// header above it, e.g. `dut.kind`.
fn key_at_line(text: &str, line: usize) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let l = lines.get(line.checked_sub(1)?)?.trim();
    let table = lines[..line - 1]
        .iter()
        .rev()
        .map(|l| l.trim())
        .find(|l| l.starts_with('[') && !l.starts_with("[["))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_string());
    if l.starts_with('[') {
        return Some(l.trim_matches(|c| c == '[' || c == ']').trim().to_string());
    }
    let key = l.split_once('=')?.0.trim().trim_matches('"').to_string();
    if key.is_empty() {
        return None;
    }
    Some(match table {
        Some(t) if !t.is_empty() => format!("{t}.{key}"),
        _ => key,
    })
}

/// The (line, column) where top-level or `[table]` key `dotted` is set.
fn locate_key(text: &str, dotted: &str) -> Option<(usize, usize)> {
    let (table, key) = match dotted.rsplit_once('.') {
        Some((t, k)) => (Some(t), k),
        None => (None, dotted),
    };
    let mut current: Option<String> = None;
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if t.starts_with('[') {
            current = Some(t.trim_matches(|c| c == '[' || c == ']').trim().to_string());
            continue;
        }
        if let Some((k, _)) = t.split_once('=') {
            if k.trim().trim_matches('"') == key && current.as_deref() == table {
                return Some((i + 1, l.find(k.trim()).unwrap_or(0) + 1));
            }
        }
    }
    None
}

impl Settings {
    /// The `rfc` preset with all other options at their defaults.
    pub fn rfc() -> Settings {
        Settings {
            preset: Preset::Rfc,
            ..Settings::default()
        }
    }

    /// Parse TOML text; `file` names it in errors.
    pub fn from_toml_str(text: &str, file: &str) -> Result<Settings, SettingsError> {
        let s: Settings = toml::from_str(text).map_err(|e| {
            let (line, column) = match e.span() {
                Some(sp) => {
                    let (l, c) = line_col(text, sp.start);
                    (Some(l), Some(c))
                }
                None => (None, None),
            };
            SettingsError {
                file: file.to_string(),
                line,
                column,
                field: line.and_then(|l| key_at_line(text, l)),
                message: e.message().trim().to_string(),
            }
        })?;
        s.validate().map_err(|(field, message)| {
            let pos = locate_key(text, &field);
            SettingsError {
                file: file.to_string(),
                line: pos.map(|p| p.0),
                column: pos.map(|p| p.1),
                field: Some(field),
                message,
            }
        })?;
        Ok(s)
    }

    /// Load an experiment file.
    pub fn load(path: &Path) -> Result<Settings, SettingsError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| SettingsError {
            file: name.clone(),
            line: None,
            column: None,
            field: None,
            message: e.to_string(),
        })?;
        Settings::from_toml_str(&text, &name)
    }

    /// As TOML (resolved, so that loading it repeats the run exactly).
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(&self.resolved()).expect("settings serialize")
    }

    /// Check ranges and combinations; `Err((field, message))`.
    pub fn validate(&self) -> Result<(), (String, String)> {
        let bad = |f: &str, m: String| Err((f.to_string(), m));
        if self.tests.is_empty() {
            return bad("tests", "no tests given".into());
        }
        if self.sizes.is_empty() {
            return bad("sizes", "no frame sizes given".into());
        }
        if !(0.0..100.0).contains(&self.loss_tolerance_pct) {
            return bad("loss_tolerance_pct", "must be in [0, 100)".into());
        }
        if !(self.resolution_pct > 0.0 && self.resolution_pct <= 50.0) {
            return bad("resolution_pct", "must be in (0, 50]".into());
        }
        if !(self.loss_step_pct > 0.0 && self.loss_step_pct <= 10.0) {
            return bad(
                "loss_step_pct",
                "must be in (0, 10] (RFC 2544: steps of at most 10 %)".into(),
            );
        }
        if !(0.0..100.0).contains(&self.rate_tolerance_pct) {
            return bad("rate_tolerance_pct", "must be in [0, 100)".into());
        }
        if self.flows == 0 {
            return bad("flows", "must be at least 1".into());
        }
        if self.queues == 0 {
            return bad("queues", "must be at least 1".into());
        }
        for (name, v) in [
            ("trial_seconds", self.trial_seconds),
            ("latency_seconds", self.latency_seconds),
            ("recovery_overload_seconds", self.recovery_overload_seconds),
            ("recovery_seconds", self.recovery_seconds),
        ] {
            if v.is_some_and(|v| !(v > 0.0 && v.is_finite())) {
                return bad(name, "must be a positive number of seconds".into());
            }
        }
        for (name, v) in [
            ("pause_seconds", self.pause_seconds),
            ("drain_seconds", self.drain_seconds),
            ("confirm_seconds", self.confirm_seconds),
        ] {
            if v.is_some_and(|v| !(v >= 0.0 && v.is_finite())) {
                return bad(name, "must be zero or a positive number of seconds".into());
            }
        }
        if self.max_rate_fps.is_some_and(|r| r <= 0.0) {
            return bad("max_rate_fps", "must be positive".into());
        }
        if self.link_bps.is_some_and(|r| r <= 0.0) {
            return bad("link_bps", "must be positive".into());
        }
        match &self.dut {
            DutSettings::Command { command, .. } if command.trim().is_empty() => {
                return bad("dut.command", "empty command".into());
            }
            DutSettings::Command {
                settle_seconds: Some(v),
                ..
            } if !(*v >= 0.0 && v.is_finite()) => {
                return bad(
                    "dut.settle_seconds",
                    "must be zero or a positive number of seconds".into(),
                );
            }
            DutSettings::Softrouter {
                driver: Some(d), ..
            } if d != "afxdp" && d != "afpacket" => {
                return bad("dut.driver", format!("{d:?} is not one of afxdp, afpacket"));
            }
            DutSettings::Linux { rps: Some(r), .. } => {
                if let Err(m) = crate::dut::linux::RpsMode::parse(r) {
                    return bad("dut.rps", m);
                }
            }
            DutSettings::External { interfaces, .. }
                if (interfaces.len() as u32) < self.pattern.ports() =>
            {
                return bad(
                    "dut.interfaces",
                    format!(
                        "pattern {} needs {} interfaces, {} given",
                        String::from(self.pattern),
                        self.pattern.ports(),
                        interfaces.len()
                    ),
                );
            }
            DutSettings::External {
                interfaces,
                peer_macs: Some(macs),
                ..
            } => {
                if macs.len() != interfaces.len() {
                    return bad(
                        "dut.peer_macs",
                        format!("{} MACs for {} interfaces", macs.len(), interfaces.len()),
                    );
                }
                if let Some(m) = macs
                    .iter()
                    .find(|m| crate::dut::bed::parse_mac(m).is_none())
                {
                    return bad("dut.peer_macs", format!("{m:?} is not a MAC address"));
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// All preset-dependent options filled in.
    pub fn resolved(&self) -> Settings {
        let rfc = self.preset == Preset::Rfc;
        let pick =
            |v: Option<f64>, quick: f64, r: f64| Some(v.unwrap_or(if rfc { r } else { quick }));
        let picku =
            |v: Option<u32>, quick: u32, r: u32| Some(v.unwrap_or(if rfc { r } else { quick }));
        Settings {
            trial_seconds: pick(self.trial_seconds, 2.0, 60.0),
            pause_seconds: pick(self.pause_seconds, 1.0, 2.0),
            drain_seconds: pick(self.drain_seconds, 1.0, 2.0),
            confirm_seconds: pick(self.confirm_seconds, 0.0, 60.0),
            latency_seconds: pick(self.latency_seconds, 2.0, 120.0),
            latency_repetitions: picku(self.latency_repetitions, 1, 20),
            b2b_trials: picku(self.b2b_trials, 1, 50),
            recovery_overload_seconds: pick(self.recovery_overload_seconds, 2.0, 60.0),
            recovery_seconds: pick(self.recovery_seconds, 2.0, 60.0),
            repetitions: picku(self.repetitions, 1, 1),
            ..self.clone()
        }
    }

    /// Trial length.
    pub fn trial(&self) -> std::time::Duration {
        secs(self.resolved().trial_seconds)
    }

    /// Confirmation trial length, `None` when disabled.
    pub fn confirm(&self) -> Option<std::time::Duration> {
        self.resolved()
            .confirm_seconds
            .filter(|&s| s > 0.0)
            .map(|s| secs(Some(s)))
    }
}

fn secs(v: Option<f64>) -> std::time::Duration {
    std::time::Duration::from_secs_f64(v.unwrap_or(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_presets() {
        let q = Settings::default().resolved();
        assert_eq!(q.trial_seconds, Some(2.0));
        assert_eq!(q.pause_seconds, Some(1.0));
        assert_eq!(q.latency_repetitions, Some(1));
        assert_eq!(Settings::default().confirm(), None);
        let r = Settings::rfc().resolved();
        assert_eq!(r.trial_seconds, Some(60.0));
        assert_eq!(r.drain_seconds, Some(2.0));
        assert_eq!(r.latency_repetitions, Some(20));
        assert_eq!(r.b2b_trials, Some(50));
        assert_eq!(r.latency_seconds, Some(120.0));
        assert_eq!(
            Settings::rfc().confirm(),
            Some(std::time::Duration::from_secs(60))
        );
        assert_eq!(Settings::default().sizes.len(), 8);
    }

    #[test]
    fn loads_a_full_experiment_file() {
        let text = r#"
preset = "rfc"
tests = ["throughput", "loss", "back-to-back", "recovery", "latency"]
sizes = ["64", "1518", "imix:64x1+1518x1"]
ip = "both"
pattern = "mesh:4"
flows = 64
trial_seconds = 10
json = "out.json"

[dut]
kind = "external"
interfaces = ["a", "b", "c", "d"]
"#;
        let s = Settings::from_toml_str(text, "exp.toml").unwrap();
        assert_eq!(s.preset, Preset::Rfc);
        assert_eq!(s.tests.len(), 5);
        assert_eq!(s.sizes[2].to_string(), "imix:64x1+1518x1");
        assert_eq!(s.ip, IpVersion::Both);
        assert_eq!(s.pattern, Pattern::Mesh(4));
        let r = s.resolved();
        assert_eq!(r.trial_seconds, Some(10.0), "file overrides preset");
        assert_eq!(r.b2b_trials, Some(50));
        assert_eq!(s.dut.kind(), "external");
        // round trip: the resolved TOML loads to the same resolved settings
        let again = Settings::from_toml_str(&s.to_toml(), "again.toml").unwrap();
        assert_eq!(again.resolved(), r);
        let s = Settings::from_toml_str("ip = 6\n[dut]\nkind = \"linux\"\nnapi_budget = 2\n", "x")
            .unwrap();
        assert_eq!(s.ip, IpVersion::V6);
        assert_eq!(
            s.dut,
            DutSettings::Linux {
                napi_budget: Some(2),
                rps: None,
                napi: None,
            }
        );
    }

    #[test]
    fn errors_name_file_line_and_field() {
        let e = Settings::from_toml_str("flows = 4\ntrial_seconds = \"long\"\n", "exp.toml")
            .unwrap_err();
        assert_eq!(e.file, "exp.toml");
        assert_eq!(e.line, Some(2));
        assert_eq!(e.field.as_deref(), Some("trial_seconds"));
        let shown = e.to_string();
        assert!(shown.starts_with("exp.toml:2:"), "{shown}");
        let e = Settings::from_toml_str("\n\nsizes = [\"64\", \"12\"]\n", "f.toml").unwrap_err();
        assert_eq!(e.line, Some(3));
        assert_eq!(e.field.as_deref(), Some("sizes"));
        assert!(e.message.contains("12"), "{}", e.message);
        let e = Settings::from_toml_str("flows = 1\nbogus = 3\n", "f.toml").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert_eq!(e.field.as_deref(), Some("bogus"));
        let e = Settings::from_toml_str("pattern = \"ring\"\n", "f.toml").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("pattern"));
        // validation errors are located too
        let e = Settings::from_toml_str("flows = 1\n\nloss_step_pct = 25\n", "v.toml").unwrap_err();
        assert_eq!(
            (e.line, e.field.as_deref()),
            (Some(3), Some("loss_step_pct"))
        );
        let e = Settings::from_toml_str(
            "pattern = \"mesh:4\"\n[dut]\nkind = \"external\"\ninterfaces = [\"a\"]\n",
            "v.toml",
        )
        .unwrap_err();
        assert_eq!(
            (e.line, e.field.as_deref()),
            (Some(4), Some("dut.interfaces"))
        );
        let e = Settings::from_toml_str("[dut]\nkind = \"command\"\ncomand = \"x\"\n", "v.toml")
            .unwrap_err();
        assert!(e.to_string().contains("v.toml"), "{e}");
    }

    #[test]
    fn dut_options_parse_and_validate() {
        let s = Settings::from_toml_str(
            "[dut]\nkind = \"softrouter\"\ndriver = \"afpacket\"\nbudget = 32\nworkers = 2\n",
            "d.toml",
        )
        .unwrap();
        assert_eq!(
            s.dut,
            DutSettings::Softrouter {
                config: None,
                workers: Some(2),
                mode: None,
                driver: Some("afpacket".into()),
                budget: Some(32)
            }
        );
        let s = Settings::from_toml_str(
            "[dut]\nkind = \"linux\"\nrps = \"1,2\"\nnapi = true\n",
            "d.toml",
        )
        .unwrap();
        assert!(matches!(
            s.dut,
            DutSettings::Linux {
                napi: Some(true),
                ..
            }
        ));
        let e = Settings::from_toml_str("[dut]\nkind = \"linux\"\nrps = \"most\"\n", "d.toml")
            .unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (Some(3), Some("dut.rps")));
        let e = Settings::from_toml_str(
            "[dut]\nkind = \"softrouter\"\ndriver = \"dpdk\"\n",
            "d.toml",
        )
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("dut.driver"));
        let e = Settings::from_toml_str(
            "[dut]\nkind = \"external\"\ninterfaces = [\"a\", \"b\"]\npeer_macs = [\"02:00:00:00:00:01\"]\n",
            "d.toml",
        )
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("dut.peer_macs"));
        let s = Settings::from_toml_str(
            "[dut]\nkind = \"command\"\ncommand = \"sleep 9\"\naddresses = false\nsettle_seconds = 0.5\n",
            "d.toml",
        )
        .unwrap();
        // Round trip of the new fields.
        let again = Settings::from_toml_str(&s.to_toml(), "again.toml").unwrap();
        assert_eq!(again.dut, s.dut);
    }

    #[test]
    fn patterns_parse() {
        assert_eq!("many-to-one:3".parse::<Pattern>().unwrap().ports(), 4);
        assert_eq!("bidirectional".parse::<Pattern>().unwrap().ports(), 2);
        assert!("mesh:1".parse::<Pattern>().is_err());
        assert!("mesh:x".parse::<Pattern>().is_err());
        assert_eq!(String::from(Pattern::ManyToOne(3)), "many-to-one:3");
    }
}
