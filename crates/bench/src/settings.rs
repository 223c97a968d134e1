//! All benchmark options as one typed serde struct, loadable from an
//! experiment TOML file (R15: the settings go into the results, so a run
//! can be repeated exactly from them).
//!
//! Two presets set the durations and repetitions: `quick` (default: 2 s
//! trials, 1 s pauses, 1 repetition, for development) and `rfc` (60 s
//! trials, 2 s drain, 20 latency repetitions of 120 s, 50 back-to-back
//! trials, a 60 s final trial per search goal). Preset-dependent options
//! are `Option`s in the file: unset means "the preset's value";
//! [`Settings::resolved`] fills them in, and that is what results store.
//!
//! Every value is typed ([`DutKind`], [`TesterBackend`], [`Pattern`],
//! [`RpsMode`], [`MacAddr`], ...) and checked here, by parsing and by
//! [`Settings::validate`], which is pure: this module depends on nothing
//! but [`crate::sizes`]; the DUT launchers and the traffic engine depend on
//! it, never the reverse.
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
//! tester = "xdp"
//! goals = ["ndr", "pdr", "rfc2544"]
//!
//! [dut]
//! kind = "linux"
//! rps = "all"
//! ```

mod dut;
mod error;
mod goal;
mod paper;
mod values;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::sizes::FrameSize;

pub use dut::{DutKind, DutSettings, FastPathMode, MacAddr, PortDriver, RpsMode, SoftrouterMode};
pub use error::SettingsError;
pub use goal::{GoalEntry, SearchGoal};
pub use paper::{PaperValue, PapersFile};
pub use values::{IpVersion, Pattern, Preset, TestKind, TesterBackend};

/// Every benchmark option. Field docs give the defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// Duration/repetition preset: `quick` (default) or `rfc`.
    pub preset: Preset,
    /// The device under test.
    pub dut: DutSettings,
    /// Several devices (or one device configured several ways), run one
    /// after the other with the same tests (`[[duts]]` tables, each as
    /// `[dut]`): an experiment file that compares e.g. NAPI budgets. When
    /// given, `[dut]` is not used; `--dut` on the command line replaces
    /// them. A relative softrouter `config` there is relative to the
    /// experiment file.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub duts: Vec<DutSettings>,
    /// The tester's packet I/O (default `xdp`).
    pub tester: TesterBackend,
    /// Tester threads on the last CPU, the DUT on the others (default
    /// true; `--no-pin`: placement left to the scheduler).
    pub pin_cpus: bool,
    /// CPUs for the tester (the last ones; default 1; `--tester-cpus N`):
    /// with the xdp tester, one generator and one receive queue each
    /// (`traffic::xdp`), for rates one CPU cannot send and count. The DUT
    /// keeps at least one CPU; every sending port needs a multiple of N
    /// flows. Needs `pin_cpus`.
    pub tester_cpus: u32,
    /// Idle-priority CPU soakers on the DUT's CPUs measure its CPU use
    /// (default false; `--soak`). Needs `pin_cpus`. Off by default: the
    /// kernel's fair server runs them for up to 50 ms of each second a
    /// real-time NAPI thread keeps the DUT's CPU busy (`dut::soak`).
    pub soak: bool,
    /// Profile the kernel DUTs (`linux`, `bridge`, `ovs`) with perf in
    /// every trial and split their cycles per packet into paper 001's
    /// stages (rx, tx, memory, skb, processing; `dut::stages`). Costs a
    /// little CPU on the DUT's CPUs (sampling) and a second or two per
    /// trial for the report; the other kinds ignore it (softrouter reports
    /// its own split). Default false; `--profile-stages`. Needs
    /// `pin_cpus` (the profiler samples the DUT's CPUs).
    pub profile_stages: bool,
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
    /// Pause after learning frames and between trials, s (quick 0.1, rfc
    /// 2). Why the quick preset's is short: every trial already ends with
    /// the drain's 100 ms without a test frame, so the DUT starts the next
    /// one idle; 0.25 s spent 40 s of the quick suite's 449 s on waiting.
    pub pause_seconds: Option<f64>,
    /// Drain time after the last frame before counters are read, s
    /// (quick 1, rfc 2).
    pub drain_seconds: Option<f64>,
    /// The throughput search's goals (RFC 9971), in order: built-in
    /// names (`ndr`, `pdr`, `rfc2544`), goal codes (`1f21d0.5l50e`) or
    /// tables (`settings::goal`'s docs); unset: the preset's `ndr` and
    /// `pdr`. The first goal's rate is the one latency, back-to-back and
    /// recovery start from.
    #[serde(
        default,
        with = "goal::goals_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub goals: Option<Vec<GoalEntry>>,
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
    /// Rounds of the whole bench (`--repeat N`, default 1): every DUT is
    /// run N times, in turn (A B A B ...), each time freshly started after
    /// the round's own calibration of the tester, and the results give
    /// each DUT's median and range over its rounds and the ratios from the
    /// medians (`bench::repeat`).
    pub repeat: u32,
    /// Maximum rate per port, frames/s; unset = link rate or the tester's
    /// calibrated maximum (R2).
    pub max_rate_fps: Option<f64>,
    /// Link speed for the theoretical rate, bit/s; unset for veth.
    pub link_bps: Option<f64>,
    /// JSON results file: every DUT's run in one document.
    pub json: Option<PathBuf>,
    /// CSV results file: one row per trial of every DUT.
    pub csv: Option<PathBuf>,
    /// SVG chart of every DUT's results.
    pub plot: Option<PathBuf>,
    /// HTML report of every DUT's results (`bench::html`).
    pub report: Option<PathBuf>,
    /// Published figures of papers that this experiment reproduces
    /// (`[[paper]]` rows, see [`PaperValue`]); the report sets them
    /// beside the measured ones.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paper: Vec<PaperValue>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            preset: Preset::Quick,
            dut: DutSettings::default(),
            tester: TesterBackend::default(),
            pin_cpus: true,
            tester_cpus: 1,
            soak: false,
            profile_stages: false,
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
            goals: None,
            rate_tolerance_pct: 1.0,
            loss_step_pct: 10.0,
            latency_seconds: None,
            latency_repetitions: None,
            b2b_trials: None,
            b2b_max_burst_seconds: 2.0,
            recovery_overload_seconds: None,
            recovery_seconds: None,
            repetitions: None,
            repeat: 1,
            max_rate_fps: None,
            link_bps: None,
            json: None,
            csv: None,
            plot: None,
            report: None,
            paper: Vec::new(),
            duts: Vec::new(),
        }
    }
}

impl Settings {
    /// The `rfc` preset with all other options at their defaults.
    pub fn rfc() -> Settings {
        Settings {
            preset: Preset::Rfc,
            ..Settings::default()
        }
    }

    /// Parse and validate TOML text; `file` names it in errors.
    pub fn from_toml_str(text: &str, file: &str) -> Result<Settings, SettingsError> {
        let s: Settings =
            toml::from_str(text).map_err(|e| SettingsError::from_toml(text, file, &e))?;
        s.checked(text, file)
    }

    /// Validates settings read from `text` (named `file` in errors) and
    /// possibly changed since (the command line's flags over an
    /// experiment file): an error is located where `text` sets the field.
    pub fn checked(self, text: &str, file: &str) -> Result<Settings, SettingsError> {
        self.validate().map_err(|(field, message)| {
            SettingsError::from_validation(text, file, field, message)
        })?;
        Ok(self)
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

    /// Check ranges and combinations; `Err((dotted field, message))`.
    pub fn validate(&self) -> Result<(), (String, String)> {
        let bad = |f: &str, m: String| Err((f.to_string(), m));
        if self.tests.is_empty() {
            return bad("tests", "no tests given".into());
        }
        if self.sizes.is_empty() {
            return bad("sizes", "no frame sizes given".into());
        }
        let mut names: Vec<String> = Vec::new();
        for (i, e) in self.goals.iter().flatten().enumerate() {
            let g = e
                .resolve(self.preset)
                .map_err(|(f, m)| (format!("goals.{i}.{f}"), m))?;
            if names.contains(&g.name) {
                return bad(
                    &format!("goals.{i}.name"),
                    format!("{:?} given twice", g.name),
                );
            }
            names.push(g.name);
        }
        if self.goals.as_ref().is_some_and(|g| g.is_empty()) {
            return bad("goals", "no search goal given".into());
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
        ] {
            if v.is_some_and(|v| !(v >= 0.0 && v.is_finite())) {
                return bad(name, "must be zero or a positive number of seconds".into());
            }
        }
        if !(self.b2b_max_burst_seconds > 0.0 && self.b2b_max_burst_seconds.is_finite()) {
            return bad(
                "b2b_max_burst_seconds",
                "must be a positive number of seconds".into(),
            );
        }
        for (name, v) in [
            ("latency_repetitions", self.latency_repetitions),
            ("b2b_trials", self.b2b_trials),
            ("repetitions", self.repetitions),
        ] {
            if v == Some(0) {
                return bad(name, "must be at least 1".into());
            }
        }
        if self.repeat == 0 {
            return bad("repeat", "must be at least 1".into());
        }
        if self
            .max_rate_fps
            .is_some_and(|r| !(r > 0.0 && r.is_finite()))
        {
            return bad("max_rate_fps", "must be positive".into());
        }
        if self.link_bps.is_some_and(|r| !(r > 0.0 && r.is_finite())) {
            return bad("link_bps", "must be positive".into());
        }
        for (i, p) in self.paper.iter().enumerate() {
            p.validate().map_err(|m| (format!("paper.{i}"), m))?;
        }
        if self.tester_cpus == 0 {
            return bad("tester_cpus", "must be at least 1".into());
        }
        if self.tester_cpus > 1 && !(self.pin_cpus && self.tester.counts_in_xdp()) {
            return bad(
                "tester_cpus",
                "several tester CPUs need the xdp tester and pin_cpus = true".into(),
            );
        }
        if self.soak && !self.pin_cpus {
            return bad(
                "soak",
                "the soakers run on the DUT's CPUs, which only exist with pin_cpus = true".into(),
            );
        }
        if self.profile_stages && !self.pin_cpus {
            return bad(
                "profile_stages",
                "the profiler samples the DUT's CPUs, which only exist with pin_cpus = true".into(),
            );
        }
        for (i, d) in self.duts.iter().enumerate() {
            d.validate(self.pattern)
                .map_err(|(f, m)| (f.replacen("dut.", &format!("duts.{i}."), 1), m))?;
        }
        self.dut.validate(self.pattern)
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
            pause_seconds: pick(self.pause_seconds, 0.1, 2.0),
            drain_seconds: pick(self.drain_seconds, 1.0, 2.0),
            goals: Some(
                self.search_goals()
                    .iter()
                    .map(GoalEntry::from_goal)
                    .collect(),
            ),
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

    /// The throughput search's goals, every attribute resolved under the
    /// preset (entries that do not resolve are skipped: [`validate`]
    /// reports them).
    ///
    /// [`validate`]: Settings::validate
    pub fn search_goals(&self) -> Vec<SearchGoal> {
        match &self.goals {
            None => SearchGoal::defaults(self.preset),
            Some(v) => v
                .iter()
                .filter_map(|e| e.resolve(self.preset).ok())
                .collect(),
        }
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
        assert_eq!(q.pause_seconds, Some(0.1));
        assert_eq!(q.latency_repetitions, Some(1));
        let names = |s: &Settings| -> Vec<String> {
            s.search_goals().into_iter().map(|g| g.code()).collect()
        };
        assert_eq!(names(&q), ["0.1f2d0l50e2w", "0.1f2d0.5l50e2w"]);
        let r = Settings::rfc().resolved();
        assert_eq!(r.trial_seconds, Some(60.0));
        assert_eq!(r.drain_seconds, Some(2.0));
        assert_eq!(r.latency_repetitions, Some(20));
        assert_eq!(r.b2b_trials, Some(50));
        assert_eq!(r.latency_seconds, Some(120.0));
        assert_eq!(names(&r), ["1f21d0l50e0.5w", "1f21d0.5l50e0.5w"]);
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
        assert_eq!(s.dut.kind(), DutKind::External);
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
                napi_defer_hard_irqs: None,
                gro_flush_timeout_us: None,
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
                driver: Some(PortDriver::AfPacket),
                budget: Some(32),
                fast_path: None,
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

    /// The linux DUT's software interrupt coalescing: parsed, saved and
    /// loaded; a deferral without the timer that ends it is refused where
    /// the file sets it, in `[dut]` and in `[[duts]]`.
    #[test]
    fn linux_coalescing_parses_and_needs_a_timeout() {
        let s = Settings::from_toml_str(
            "[dut]\nkind = \"linux\"\nnapi_defer_hard_irqs = 2\ngro_flush_timeout_us = 50\n",
            "c.toml",
        )
        .unwrap();
        assert_eq!(
            s.dut,
            DutSettings::Linux {
                napi_budget: None,
                rps: None,
                napi: None,
                napi_defer_hard_irqs: Some(2),
                gro_flush_timeout_us: Some(50),
            }
        );
        let text = s.to_toml();
        assert!(
            text.contains("napi_defer_hard_irqs = 2") && text.contains("gro_flush_timeout_us = 50"),
            "{text}"
        );
        assert_eq!(
            Settings::from_toml_str(&text, "saved.toml").unwrap(),
            s.resolved()
        );
        // A timeout alone is valid (it delays GRO flushes), as is a zero
        // deferral.
        for ok in ["gro_flush_timeout_us = 20\n", "napi_defer_hard_irqs = 0\n"] {
            Settings::from_toml_str(&format!("[dut]\nkind = \"linux\"\n{ok}"), "c.toml").unwrap();
        }
        let e = Settings::from_toml_str(
            "[dut]\nkind = \"linux\"\nnapi_budget = 300\nnapi_defer_hard_irqs = 2\n",
            "c.toml",
        )
        .unwrap_err();
        assert_eq!(
            (e.line, e.field.as_deref()),
            (Some(4), Some("dut.napi_defer_hard_irqs"))
        );
        let shown = e.to_string();
        assert!(
            shown.starts_with("c.toml:4:1: field `dut.napi_defer_hard_irqs`: ")
                && shown.contains("gro_flush_timeout_us"),
            "{shown}"
        );
        let e = Settings::from_toml_str(
            "[dut]\nkind = \"linux\"\nnapi_defer_hard_irqs = 2\ngro_flush_timeout_us = 0\n",
            "c.toml",
        )
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("dut.napi_defer_hard_irqs"));
        // In the second `[[duts]]` table: located there.
        let e = Settings::from_toml_str(
            "[[duts]]\nkind = \"linux\"\nnapi_defer_hard_irqs = 2\ngro_flush_timeout_us = 50\n\n\
             [[duts]]\nkind = \"linux\"\nnapi_defer_hard_irqs = 2\n",
            "d.toml",
        )
        .unwrap_err();
        assert_eq!(
            (e.line, e.field.as_deref()),
            (Some(8), Some("duts.1.napi_defer_hard_irqs")),
            "{e}"
        );
        // Coalescing acts on the veth NAPI, which napi = false turns off.
        let e = Settings::from_toml_str(
            "[dut]\nkind = \"linux\"\nnapi = false\ngro_flush_timeout_us = 50\n",
            "c.toml",
        )
        .unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (Some(3), Some("dut.napi")));
        let e = Settings::from_toml_str(
            "[dut]\nkind = \"linux\"\nnapi_defer_hard_irqs = 2147483648\ngro_flush_timeout_us = 50\n",
            "c.toml",
        )
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("dut.napi_defer_hard_irqs"));
    }

    /// Every field away from its default, saved and loaded: equal.
    #[test]
    fn every_setting_round_trips_through_the_experiment_file() {
        let s = Settings {
            preset: Preset::Rfc,
            duts: vec![
                DutSettings::Linux {
                    napi_budget: Some(2),
                    rps: None,
                    napi: None,
                    napi_defer_hard_irqs: None,
                    gro_flush_timeout_us: None,
                },
                DutSettings::Bridge {},
            ],
            dut: DutSettings::External {
                interfaces: vec!["a".into(), "b".into(), "c".into(), "d".into()],
                description: Some("box".into()),
                peer_macs: Some(
                    [
                        "02:00:00:00:01:00",
                        "02:00:00:00:01:01",
                        "02:00:00:00:01:02",
                        "02:00:00:00:01:03",
                    ]
                    .iter()
                    .map(|m| m.parse().unwrap())
                    .collect(),
                ),
            },
            tester: TesterBackend::AfXdp,
            pin_cpus: false,
            tester_cpus: 1,
            soak: false,
            profile_stages: false,
            tests: vec![TestKind::Recovery, TestKind::Loss],
            sizes: vec![FrameSize::Fixed(128), "imix:64x3+1518x1".parse().unwrap()],
            ip: IpVersion::Both,
            pattern: Pattern::Mesh(4),
            flows: 16,
            queues: 2,
            trial_seconds: Some(3.5),
            pause_seconds: Some(0.25),
            drain_seconds: Some(0.75),
            goals: Some(vec![
                GoalEntry::from_goal(&SearchGoal::builtin("ndr", Preset::Rfc).unwrap()),
                GoalEntry::from_goal(&SearchGoal::from_code("2f10d0.01l25e1w").unwrap()),
            ]),
            rate_tolerance_pct: 3.0,
            loss_step_pct: 5.0,
            latency_seconds: Some(4.0),
            latency_repetitions: Some(3),
            b2b_trials: Some(7),
            b2b_max_burst_seconds: 0.5,
            recovery_overload_seconds: Some(1.5),
            recovery_seconds: Some(2.5),
            repetitions: Some(2),
            repeat: 3,
            max_rate_fps: Some(123_456.0),
            link_bps: Some(1e10),
            json: Some("r.json".into()),
            csv: Some("r.csv".into()),
            plot: Some("r.svg".into()),
            report: Some("r.html".into()),
            paper: vec![PaperValue {
                paper: "000".into(),
                figure: "Fig. 4".into(),
                metric: "ndr_mpps".into(),
                size: "64".into(),
                ip: None,
                dut: Some("linux".into()),
                published: 1.25,
                unit: "Mpps".into(),
                measured: None,
                not_measurable: None,
            }],
        };
        s.validate().unwrap();
        let text = s.to_toml();
        let back = Settings::from_toml_str(&text, "saved.toml").unwrap();
        assert_eq!(back, s, "{text}");
        for dut in [
            DutSettings::Softrouter {
                config: Some("r.toml".into()),
                workers: Some(2),
                mode: Some(SoftrouterMode::Adaptive),
                driver: Some(PortDriver::AfPacket),
                budget: Some(64),
                fast_path: Some(FastPathMode::Off),
            },
            DutSettings::Linux {
                napi_budget: Some(300),
                rps: Some(RpsMode::Masks(vec!["1".into(), "2".into()])),
                napi: Some(true),
                napi_defer_hard_irqs: Some(2),
                gro_flush_timeout_us: Some(50),
            },
            DutSettings::Command {
                command: "sleep 9".into(),
                version_command: Some("echo 1".into()),
                addresses: Some(false),
                settle_seconds: Some(0.5),
            },
        ] {
            let s = Settings {
                dut,
                pattern: Pattern::Bidirectional,
                ..s.clone()
            };
            let back = Settings::from_toml_str(&s.to_toml(), "saved.toml").unwrap();
            assert_eq!(back, s);
        }
    }

    #[test]
    fn search_goals_are_checked() {
        let s = Settings::from_toml_str(
            "goals = [\"ndr\", \"rfc2544\", \"1f5d0.1l50e\"]\n",
            "g.toml",
        )
        .unwrap();
        let g = s.search_goals();
        assert_eq!(g.len(), 3);
        assert!(g[1].is_strict_rfc2544());
        assert_eq!(g[2].loss_pct, 0.1);
        let s = Settings::from_toml_str(
            "[[goals]]\nname = \"ndr\"\nduration_sum_seconds = 7\n",
            "g.toml",
        )
        .unwrap();
        assert_eq!(s.search_goals()[0].duration_sum_seconds, 7.0);
        let back = Settings::from_toml_str(&s.to_toml(), "saved.toml").unwrap();
        assert_eq!(back.search_goals(), s.search_goals());
        let e = Settings::from_toml_str(
            "tests = [\"throughput\"]\n[[goals]]\nname = \"pdr\"\nexceed_pct = 100\n",
            "g.toml",
        )
        .unwrap_err();
        assert_eq!(
            (e.line, e.field.as_deref()),
            (Some(4), Some("goals.0.exceed_pct"))
        );
        let e = Settings::from_toml_str("goals = [\"ndr\", \"ndr\"]\n", "g.toml").unwrap_err();
        assert_eq!(
            (e.line, e.field.as_deref()),
            (Some(1), Some("goals.1.name"))
        );
        let e = Settings::from_toml_str("goals = [\"fast\"]\n", "g.toml").unwrap_err();
        assert!(e.message.contains("every attribute"), "{e}");
        let e = Settings::from_toml_str("goals = []\n", "g.toml").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("goals"));
        let e = Settings::from_toml_str("tester = \"dpdk\"\n", "g.toml").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("tester"));
        assert!(e.message.contains("afxdp, afpacket, xdp"), "{e}");
        let e = Settings::from_toml_str("pin_cpus = false\nsoak = true\n", "g.toml").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("soak"));
    }

    #[test]
    fn profile_stages_is_a_setting_that_needs_pinned_cpus() {
        assert!(!Settings::default().profile_stages);
        let s = Settings::from_toml_str("profile_stages = true\n", "p.toml").unwrap();
        assert!(s.profile_stages);
        let back = Settings::from_toml_str(&s.to_toml(), "saved.toml").unwrap();
        assert!(back.profile_stages);
        let e = Settings::from_toml_str(
            "soak = false\npin_cpus = false\nprofile_stages = true\n",
            "p.toml",
        )
        .unwrap_err();
        assert_eq!(
            (e.line, e.field.as_deref()),
            (Some(3), Some("profile_stages"))
        );
        assert!(e.to_string().starts_with("p.toml:3:"), "{e}");
        let e = Settings::from_toml_str("profile_stages = \"yes\"\n", "p.toml").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("profile_stages"));
    }
}
