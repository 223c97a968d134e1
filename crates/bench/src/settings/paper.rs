//! Published figures of a paper, to be set beside what this bench
//! measured (issue 11, "reproduce the papers").
//!
//! Why in the settings: an experiment file that reproduces a paper's
//! figure carries the paper's numbers next to the options that repeat
//! its setup, so the results file holds both and `softrouter report`
//! can put them side by side without another input (a separate
//! `--papers FILE.toml` with the same `[[paper]]` rows works too).
//!
//! ```toml
//! [[paper]]
//! paper = "000"              # which paper
//! figure = "Fig. 4"          # where in it
//! metric = "ndr_mpps"        # see PaperValue::metric
//! size = "64"                # frame size as in `sizes`
//! dut = "linux"              # whose measurement (default: the first run)
//! published = 1.2            # the paper's value
//! unit = "Mpps"
//! # measured = 0.9           # optional: given here instead of looked up
//! # not_measurable = "why"   # a figure this testbed cannot measure
//! ```

use serde::{Deserialize, Serialize};

/// One published value of a paper.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaperValue {
    /// The paper (an id or a short title).
    pub paper: String,
    /// Figure or table in the paper.
    #[serde(default)]
    pub figure: String,
    /// What is measured. These are looked up in the results when
    /// `measured` is not given (`bench::html::papers::METRICS` lists them
    /// with where each comes from): `ndr_mpps`, `pdr_mpps`,
    /// `latency_{min,mean,median,p99,max}_us`, `cycles_per_packet` and by
    /// stage `cycles_{rx,tx,memory,skb,processing}`,
    /// `overload_latency_{min,mean,median,p99,max}_us`,
    /// `overload_cpu_available_pct`, `overload_irq_per_s`,
    /// `b2b_burst_frames`, `b2b_latency_{min,mean,max}_us`; any other name
    /// needs `measured`.
    pub metric: String,
    /// Frame size as in the settings' `sizes` (`64`, `imix`).
    #[serde(default)]
    pub size: String,
    /// IP version (default 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip: Option<u8>,
    /// The run whose figure is meant, by DUT name (`softrouter`,
    /// `linux`, `softrouter-noxdp`), with options where an experiment
    /// runs one kind several ways (`linux napi_budget=2`: the bench names
    /// such runs by their options); default: the first run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dut: Option<String>,
    /// The value the paper gives.
    pub published: f64,
    /// Its unit, as the paper writes it.
    #[serde(default)]
    pub unit: String,
    /// What this bench measured, when not looked up from `metric`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<f64>,
    /// Why this testbed cannot measure the figure (hardware interrupts,
    /// NIC rings, a CPU count it lacks): the report lists the row with
    /// this reason instead of a measured value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_measurable: Option<String>,
}

impl PaperValue {
    /// `Err(message)` for a value that cannot be compared.
    pub fn validate(&self) -> Result<(), String> {
        if !self.published.is_finite() {
            return Err(format!("{}: published must be a number", self.paper));
        }
        if self.measured.is_some_and(|m| !m.is_finite()) {
            return Err(format!("{}: measured must be a number", self.paper));
        }
        if self.measured.is_some() && self.not_measurable.is_some() {
            return Err(format!(
                "{}: a row is either measured or not_measurable, not both",
                self.paper
            ));
        }
        if self
            .not_measurable
            .as_ref()
            .is_some_and(|w| w.trim().is_empty())
        {
            return Err(format!("{}: not_measurable needs a reason", self.paper));
        }
        if self.ip.is_some_and(|ip| ip != 4 && ip != 6) {
            return Err(format!("{}: ip must be 4 or 6", self.paper));
        }
        Ok(())
    }
}

/// A file of `[[paper]]` rows (`softrouter report --papers FILE.toml`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PapersFile {
    /// The rows.
    #[serde(default)]
    pub paper: Vec<PaperValue>,
}

impl PapersFile {
    /// Parse and check TOML text; `file` names it in errors.
    pub fn from_toml_str(text: &str, file: &str) -> Result<PapersFile, String> {
        let f: PapersFile = toml::from_str(text).map_err(|e| format!("{file}: {e}"))?;
        for (i, p) in f.paper.iter().enumerate() {
            p.validate()
                .map_err(|e| format!("{file}: paper {}: {e}", i + 1))?;
        }
        Ok(f)
    }
}
