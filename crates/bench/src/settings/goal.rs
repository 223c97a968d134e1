//! Search goals of the throughput search, as RFC 9971 (MLRsearch)
//! defines them: a goal loss ratio, a goal exceed ratio, a goal final
//! trial duration, a goal duration sum, a goal initial trial duration and
//! a goal width.
//!
//! Why goals and not one loss tolerance: on a host whose scheduler stalls
//! the DUT now and then, one lost frame in one trial decided the old
//! search, so the zero-loss rate landed wherever a stall happened. A goal
//! classifies a load from the *sum* of trial durations there: with an
//! exceed ratio of 50 %, a load is a lower bound when at least half of
//! the goal duration sum was low-loss, so a rare stall no longer decides
//! the result, while a DUT that really loses frames at a load still makes
//! it an upper bound.
//!
//! In the `goals` setting (and `--goals`) an entry is a built-in goal by
//! name, an RFC 9971 goal code, or a table:
//!
//! ```toml
//! goals = ["ndr", "pdr"]                  # the preset's built-ins (the default)
//! goals = ["ndr", "rfc2544"]              # strict RFC 2544 beside the NDR
//! goals = ["1f21d0.1l50e"]                # code: final 1 s, sum 21 s, loss 0.1 %, exceed 50 %
//! [[goals]]                               # a table: a built-in's name overrides its values,
//! name = "ndr"                            # any other name needs them all
//! duration_sum_seconds = 11
//! ```
//!
//! The built-ins (`ndr`, `pdr` depend on the preset, `rfc2544` does not):
//!
//! | name | loss | exceed | final trial | duration sum | initial trial | width |
//! |---|---|---|---|---|---|---|
//! | `ndr`, preset `rfc` | 0 % | 50 % | 1 s | 21 s | 1 s | 0.5 % |
//! | `pdr`, preset `rfc` | 0.5 % | 50 % | 1 s | 21 s | 1 s | 0.5 % |
//! | `ndr`, preset `quick` | 0 % | 50 % | 0.1 s | 2 s | 0.1 s | 2 % |
//! | `pdr`, preset `quick` | 0.5 % | 50 % | 0.1 s | 2 s | 0.1 s | 2 % |
//! | `rfc2544` | 0 % | 0 % | 60 s | 60 s | 1 s | 0.5 % |
//!
//! The `rfc` preset's NDR and PDR are FD.io CSIT's, the reference the RFC
//! was written from. The `quick` preset keeps their loss and exceed
//! ratios and the ratio of duration sum to trial (20 trials decide a
//! load, CSIT's 21), with 0.1 s trials: each the window of a 1 s stream
//! (`throughput::window`), so a stream measures ten trials for the cost
//! of one. Why 0.1 s: this VM's host pauses a vCPU for more than the
//! DUT's 256-frame ring holds about once or twice a second, so a 1 s
//! zero-loss trial failed one time in two or three at any load from 0.5
//! to 1 Mpps and where the 50 % exceed ratio was crossed was chance (the
//! same command gave NDRs 10-49 % apart); a 0.1 s window meets such a
//! pause one time in ten to fifteen, far from the exceed ratio, while a
//! load beyond the DUT loses in every window. The width is 2 % so that
//! the quick suite stays within a few minutes. `rfc2544` is the strict
//! RFC 2544 throughput (one 60 s zero-loss trial decides); shorter trials
//! serve it only as upper bounds.
//!
//! The width is relative: a goal is reached when its relevant lower and
//! upper bounds differ by at most `width_pct` % of the upper bound (RFC
//! 9971 recommends a relative width no lower than the loss ratio).

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use super::values::Preset;

/// One search goal, every attribute given (RFC 9971 section 4.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchGoal {
    /// How results name it (`ndr`, `pdr`, `rfc2544`, or the user's).
    pub name: String,
    /// Goal loss ratio, %: a trial losing more is high-loss.
    pub loss_pct: f64,
    /// Goal exceed ratio, %: the share of the duration sum that may be
    /// high-loss at a lower bound.
    pub exceed_pct: f64,
    /// Goal final trial duration, s: only trials at least this long make
    /// a load a lower bound.
    pub final_trial_seconds: f64,
    /// Goal duration sum, s: how much trial time decides a load.
    pub duration_sum_seconds: f64,
    /// Goal initial trial duration, s: the shortest trial the search
    /// runs for this goal (at most the final duration).
    pub initial_trial_seconds: f64,
    /// Goal width, % of the relevant upper bound: the precision at which
    /// the search stops.
    pub width_pct: f64,
}

impl SearchGoal {
    /// A built-in goal by name under `preset` (module docs).
    pub fn builtin(name: &str, preset: Preset) -> Option<SearchGoal> {
        let rfc = preset == Preset::Rfc;
        let csit = |name: &str, loss_pct: f64| SearchGoal {
            name: name.into(),
            loss_pct,
            exceed_pct: 50.0,
            final_trial_seconds: if rfc { 1.0 } else { 0.1 },
            duration_sum_seconds: if rfc { 21.0 } else { 2.0 },
            initial_trial_seconds: if rfc { 1.0 } else { 0.1 },
            width_pct: if rfc { 0.5 } else { 2.0 },
        };
        match name {
            "ndr" => Some(csit("ndr", 0.0)),
            "pdr" => Some(csit("pdr", 0.5)),
            "rfc2544" => Some(SearchGoal {
                name: "rfc2544".into(),
                loss_pct: 0.0,
                exceed_pct: 0.0,
                final_trial_seconds: 60.0,
                duration_sum_seconds: 60.0,
                initial_trial_seconds: 1.0,
                width_pct: 0.5,
            }),
            _ => None,
        }
    }

    /// The built-in names.
    pub const BUILTIN: &'static [&'static str] = &["ndr", "pdr", "rfc2544"];

    /// The default goals of every preset: the NDR and the PDR.
    pub fn defaults(preset: Preset) -> Vec<SearchGoal> {
        ["ndr", "pdr"]
            .iter()
            .filter_map(|n| SearchGoal::builtin(n, preset))
            .collect()
    }

    /// The RFC 9971 goal code, `<final>f<sum>d<loss>l<exceed>e` (the
    /// RFC's appendix writes `60f60d0l0e` for RFC 2544), with the width
    /// (`w`) and, when shorter than the final, the initial trial (`i`).
    pub fn code(&self) -> String {
        let n = |v: f64| {
            let s = format!("{v:.3}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        };
        let mut c = format!(
            "{}f{}d{}l{}e{}w",
            n(self.final_trial_seconds),
            n(self.duration_sum_seconds),
            n(self.loss_pct),
            n(self.exceed_pct),
            n(self.width_pct)
        );
        if self.initial_trial_seconds < self.final_trial_seconds {
            c.push_str(&format!("{}i", n(self.initial_trial_seconds)));
        }
        c
    }

    /// `name (code)`, or just the name when it is the code; the strict
    /// RFC 2544 goal says so.
    pub fn label(&self) -> String {
        let code = self.code();
        let strict = if self.is_strict_rfc2544() {
            ", strict RFC 2544"
        } else {
            ""
        };
        if self.name == code {
            format!("{code}{strict}")
        } else {
            format!("{} ({code}{strict})", self.name)
        }
    }

    /// Zero loss, zero exceed ratio and 60 s final trials: RFC 2544's own
    /// throughput, which the report labels as such.
    pub fn is_strict_rfc2544(&self) -> bool {
        self.loss_pct == 0.0 && self.exceed_pct == 0.0 && self.final_trial_seconds >= 60.0
    }

    /// Parse a goal code (`1f21d0.5l50e`, optionally `...0.5w` and
    /// `...0.5i`, in any order after the four required parts): missing
    /// width is 0.5 %, missing initial trial the final one. The goal is
    /// named by its code.
    pub fn from_code(code: &str) -> Result<SearchGoal, String> {
        let bad = |why: &str| {
            format!(
                "{code:?}: {why}; a goal code is <final s>f<sum s>d<loss %>l<exceed %>e \
                 [<width %>w] [<initial s>i], e.g. 1f21d0.5l50e"
            )
        };
        let (mut f, mut d, mut l, mut e, mut w, mut i) = (None, None, None, None, None, None);
        let mut num = String::new();
        for c in code.trim().chars() {
            if c.is_ascii_digit() || c == '.' {
                num.push(c);
                continue;
            }
            let v: f64 = num.parse().map_err(|_| bad("a number is missing"))?;
            num.clear();
            let slot = match c {
                'f' => &mut f,
                'd' => &mut d,
                'l' => &mut l,
                'e' => &mut e,
                'w' => &mut w,
                'i' => &mut i,
                _ => return Err(bad(&format!("unknown letter {c:?}"))),
            };
            if slot.replace(v).is_some() {
                return Err(bad(&format!("{c:?} given twice")));
            }
        }
        if !num.is_empty() {
            return Err(bad("a number without its letter at the end"));
        }
        let (Some(f), Some(d), Some(l), Some(e)) = (f, d, l, e) else {
            return Err(bad("f, d, l and e are required"));
        };
        Ok(SearchGoal {
            name: code.trim().to_string(),
            loss_pct: l,
            exceed_pct: e,
            final_trial_seconds: f,
            duration_sum_seconds: d,
            initial_trial_seconds: i.unwrap_or(f),
            width_pct: w.unwrap_or(0.5),
        })
    }

    /// The goal's attributes within RFC 9971's ranges: `(field, why)`.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        let positive = |v: f64| v.is_finite() && v > 0.0;
        if self.name.trim().is_empty() {
            return Err(("name", "must not be empty".into()));
        }
        if !(0.0..100.0).contains(&self.loss_pct) {
            return Err(("loss_pct", "must be in [0, 100)".into()));
        }
        if !(0.0..100.0).contains(&self.exceed_pct) {
            return Err(("exceed_pct", "must be in [0, 100)".into()));
        }
        if !positive(self.final_trial_seconds) {
            return Err(("final_trial_seconds", "must be positive".into()));
        }
        if !positive(self.duration_sum_seconds) {
            return Err(("duration_sum_seconds", "must be positive".into()));
        }
        if !positive(self.initial_trial_seconds)
            || self.initial_trial_seconds > self.final_trial_seconds
        {
            return Err((
                "initial_trial_seconds",
                "must be positive and at most final_trial_seconds".into(),
            ));
        }
        if !positive(self.width_pct) || self.width_pct >= 100.0 {
            return Err(("width_pct", "must be in (0, 100)".into()));
        }
        Ok(())
    }
}

/// One entry of the `goals` setting as written: a built-in name or a code
/// (a string), or a table naming a goal and giving some or all of its
/// attributes. [`GoalEntry::resolve`] makes it a [`SearchGoal`] under a
/// preset.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GoalEntry {
    /// A built-in name (`ndr`, `pdr`, `rfc2544`), a goal code, or the
    /// name of a goal whose attributes all follow.
    pub name: String,
    /// Goal loss ratio, %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_pct: Option<f64>,
    /// Goal exceed ratio, %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exceed_pct: Option<f64>,
    /// Goal final trial duration, s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_trial_seconds: Option<f64>,
    /// Goal duration sum, s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_sum_seconds: Option<f64>,
    /// Goal initial trial duration, s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_trial_seconds: Option<f64>,
    /// Goal width, % of the upper bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width_pct: Option<f64>,
}

impl GoalEntry {
    /// An entry by name or code alone.
    pub fn named(name: &str) -> GoalEntry {
        GoalEntry {
            name: name.to_string(),
            ..GoalEntry::default()
        }
    }

    /// Every attribute given, from a goal.
    pub fn from_goal(g: &SearchGoal) -> GoalEntry {
        GoalEntry {
            name: g.name.clone(),
            loss_pct: Some(g.loss_pct),
            exceed_pct: Some(g.exceed_pct),
            final_trial_seconds: Some(g.final_trial_seconds),
            duration_sum_seconds: Some(g.duration_sum_seconds),
            initial_trial_seconds: Some(g.initial_trial_seconds),
            width_pct: Some(g.width_pct),
        }
    }

    /// The goal under `preset`: a built-in's or a code's attributes with
    /// the table's overrides; any other name needs every attribute.
    pub fn resolve(&self, preset: Preset) -> Result<SearchGoal, (&'static str, String)> {
        let name = self.name.trim();
        let base = match SearchGoal::builtin(name, preset) {
            Some(g) => Some(g),
            None if name.starts_with(|c: char| c.is_ascii_digit()) => {
                Some(SearchGoal::from_code(name).map_err(|e| ("name", e))?)
            }
            None => None,
        };
        let missing = |field: &'static str| {
            (
                field,
                format!(
                    "goal {name:?} is not built in ({}) nor a goal code, so it needs every \
                     attribute: loss_pct, exceed_pct, final_trial_seconds, \
                     duration_sum_seconds, width_pct (initial_trial_seconds defaults to the \
                     final one)",
                    SearchGoal::BUILTIN.join(", ")
                ),
            )
        };
        let pick = |v: Option<f64>, b: Option<f64>, field| v.or(b).ok_or_else(|| missing(field));
        let b = base.as_ref();
        let final_trial_seconds = pick(
            self.final_trial_seconds,
            b.map(|b| b.final_trial_seconds),
            "final_trial_seconds",
        )?;
        let g = SearchGoal {
            name: name.to_string(),
            loss_pct: pick(self.loss_pct, b.map(|b| b.loss_pct), "loss_pct")?,
            exceed_pct: pick(self.exceed_pct, b.map(|b| b.exceed_pct), "exceed_pct")?,
            final_trial_seconds,
            duration_sum_seconds: pick(
                self.duration_sum_seconds,
                b.map(|b| b.duration_sum_seconds),
                "duration_sum_seconds",
            )?,
            initial_trial_seconds: self
                .initial_trial_seconds
                .or(b.map(|b| b.initial_trial_seconds.min(final_trial_seconds)))
                .unwrap_or(final_trial_seconds),
            width_pct: pick(self.width_pct, b.map(|b| b.width_pct), "width_pct")?,
        };
        g.validate()?;
        Ok(g)
    }
}

/// A string is a goal by name or code, a table a [`GoalEntry`] (whose own
/// errors keep their field names).
impl<'de> Deserialize<'de> for GoalEntryDe {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = GoalEntryDe;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a goal name (ndr, pdr, rfc2544), a goal code (1f21d0.5l50e) or a table",
                )
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<GoalEntryDe, E> {
                Ok(GoalEntryDe(GoalEntry::named(s)))
            }
            fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<GoalEntryDe, A::Error> {
                GoalEntry::deserialize(de::value::MapAccessDeserializer::new(m)).map(GoalEntryDe)
            }
        }
        d.deserialize_any(V)
    }
}

/// [`GoalEntry`] as the `goals` list reads it (string or table).
#[derive(Debug, Clone, PartialEq)]
pub struct GoalEntryDe(pub GoalEntry);

/// Serde for `goals`: each entry a string or a table on input; on output
/// a string when only the name is set, else a table.
pub mod goals_serde {
    use super::{GoalEntry, GoalEntryDe};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    /// Write entries (names alone as strings).
    pub fn serialize<S: Serializer>(v: &Option<Vec<GoalEntry>>, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(untagged)]
        enum Out<'a> {
            Name(&'a str),
            Table(&'a GoalEntry),
        }
        let out: Option<Vec<Out>> = v.as_ref().map(|v| {
            v.iter()
                .map(|e| {
                    if *e == GoalEntry::named(&e.name) {
                        Out::Name(&e.name)
                    } else {
                        Out::Table(e)
                    }
                })
                .collect()
        });
        out.serialize(s)
    }

    /// Read entries.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Vec<GoalEntry>>, D::Error> {
        let v: Option<Vec<GoalEntryDe>> = Option::deserialize(d)?;
        Ok(v.map(|v| v.into_iter().map(|e| e.0).collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_and_codes() {
        let ndr = SearchGoal::builtin("ndr", Preset::Rfc).unwrap();
        assert_eq!(ndr.code(), "1f21d0l50e0.5w");
        assert_eq!(ndr.label(), "ndr (1f21d0l50e0.5w)");
        let strict = SearchGoal::builtin("rfc2544", Preset::Quick).unwrap();
        assert!(strict.is_strict_rfc2544());
        assert_eq!(
            strict.label(),
            "rfc2544 (60f60d0l0e0.5w1i, strict RFC 2544)"
        );
        let c = SearchGoal::from_code("60f120d0l50e").unwrap();
        assert_eq!(
            (
                c.final_trial_seconds,
                c.duration_sum_seconds,
                c.loss_pct,
                c.exceed_pct
            ),
            (60.0, 120.0, 0.0, 50.0)
        );
        assert_eq!(c.initial_trial_seconds, 60.0);
        let c = SearchGoal::from_code("1f21d0.5l50e2w0.5i").unwrap();
        assert_eq!((c.width_pct, c.initial_trial_seconds), (2.0, 0.5));
        assert_eq!(SearchGoal::from_code(&c.code()).unwrap().code(), c.code());
        for bad in [
            "1f21d0.5l",
            "1f21d0.5l50x",
            "1f1f21d0l50e",
            "f21d0l50e",
            "1f21d0l50e3",
        ] {
            assert!(SearchGoal::from_code(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn entries_resolve_under_the_preset() {
        let q = GoalEntry::named("ndr").resolve(Preset::Quick).unwrap();
        assert_eq!((q.final_trial_seconds, q.duration_sum_seconds), (0.1, 2.0));
        let e = GoalEntry {
            duration_sum_seconds: Some(11.0),
            ..GoalEntry::named("pdr")
        };
        let g = e.resolve(Preset::Rfc).unwrap();
        assert_eq!((g.loss_pct, g.duration_sum_seconds), (0.5, 11.0));
        let e = GoalEntry {
            loss_pct: Some(0.1),
            ..GoalEntry::named("mine")
        };
        assert!(e
            .resolve(Preset::Rfc)
            .unwrap_err()
            .1
            .contains("every attribute"));
        let e = GoalEntry {
            exceed_pct: Some(100.0),
            ..GoalEntry::named("ndr")
        };
        assert_eq!(e.resolve(Preset::Rfc).unwrap_err().0, "exceed_pct");
        assert_eq!(
            GoalEntry::from_goal(&g).resolve(Preset::Quick).unwrap(),
            g,
            "a full entry is the same under any preset"
        );
    }
}
