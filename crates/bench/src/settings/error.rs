//! Settings errors located in the experiment file: file, line, column and
//! dotted field (`bench.toml:7:16: field `trial_seconds`: invalid type ...`).

/// A settings error, located in its file when possible.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsError {
    /// File name (or "command line").
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

impl SettingsError {
    /// From a TOML parse error in `text`.
    pub(super) fn from_toml(text: &str, file: &str, e: &toml::de::Error) -> SettingsError {
        let (line, column) = match e.span() {
            Some(sp) => {
                let (l, c) = line_col(text, sp.start);
                (Some(l), Some(c))
            }
            None => (None, None),
        };
        let message = e.message().trim().to_string();
        // Errors inside an internally tagged table (`[dut]`) are reported
        // at its header; the value the message quotes names the key.
        let (line, column) = match line.and_then(|l| quoted_value_line(text, l, &message)) {
            Some(l) => (Some(l.0), Some(l.1)),
            None => (line, column),
        };
        SettingsError {
            file: file.to_string(),
            line,
            column,
            field: line.and_then(|l| key_at_line(text, l)),
            message,
        }
    }

    /// From a validation error on `field`, located where `text` sets it.
    pub(super) fn from_validation(
        text: &str,
        file: &str,
        field: String,
        message: String,
    ) -> SettingsError {
        // A field inside an inline value (`goals = ["x"]`) is located at
        // its top-level key.
        let pos = locate_key(text, &field).or_else(|| {
            let top = field.split('.').next().unwrap_or(&field);
            locate_key(text, top)
        });
        SettingsError {
            file: file.to_string(),
            line: pos.map(|p| p.0),
            column: pos.map(|p| p.1),
            field: Some(field),
            message,
        }
    }
}

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

/// When `line` (1-based) is a `[table]` header: the (line, column) of the
/// first key in that table whose value contains a string the message
/// quotes (`"most": expected ...`).
fn quoted_value_line(text: &str, line: usize, message: &str) -> Option<(usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    if !lines.get(line.checked_sub(1)?)?.trim().starts_with('[') {
        return None;
    }
    let quoted: Vec<&str> = message.split('"').skip(1).step_by(2).collect();
    lines
        .iter()
        .enumerate()
        .skip(line)
        .take_while(|(_, l)| !l.trim().starts_with('['))
        .find(|(_, l)| {
            l.split_once('=').is_some_and(|(_, v)| {
                quoted
                    .iter()
                    .any(|q| !q.is_empty() && v.contains(&format!("\"{q}\"")))
            })
        })
        .map(|(i, l)| (i + 1, l.len() - l.trim_start().len() + 1))
}

/// The (line, column) where top-level, `[table]` or `[[array]]` key
/// `dotted` is set (`duts.1.rps`: key `rps` of the second `[[duts]]`).
fn locate_key(text: &str, dotted: &str) -> Option<(usize, usize)> {
    let (table, key) = match dotted.rsplit_once('.') {
        Some((t, k)) => (Some(t), k),
        None => (None, dotted),
    };
    let mut current: Option<String> = None;
    let mut seen: std::collections::HashMap<String, usize> = Default::default();
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if t.starts_with('[') {
            let name = t.trim_matches(|c| c == '[' || c == ']').trim().to_string();
            current = Some(if t.starts_with("[[") {
                let n = seen.entry(name.clone()).or_default();
                *n += 1;
                format!("{name}.{}", *n - 1)
            } else {
                name
            });
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
