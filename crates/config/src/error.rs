//! Configuration errors: one message that names file, line and field.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub file: PathBuf,
    /// 1-based line, 0 when the error is not tied to a line (unreadable file).
    pub line: usize,
    pub message: String,
}

/// Longest message an error carries. Messages quote user input through
/// [`crate::excerpt`]; this is the backstop for text from elsewhere (serde
/// quotes a mistyped value in full).
pub const MAX_MESSAGE: usize = 400;

fn capped(mut m: String) -> String {
    if m.len() > MAX_MESSAGE {
        let mut end = MAX_MESSAGE;
        while !m.is_char_boundary(end) {
            end -= 1;
        }
        m.truncate(end);
        m.push_str("...");
    }
    m
}

impl ConfigError {
    pub fn io(path: &Path, e: std::io::Error) -> Self {
        ConfigError {
            file: path.to_path_buf(),
            line: 0,
            message: capped(e.to_string()),
        }
    }

    /// An error at 1-based `line` of `path` (0: not tied to a line).
    pub fn line(path: &Path, line: usize, message: impl Into<String>) -> Self {
        ConfigError {
            file: path.to_path_buf(),
            line,
            message: capped(message.into()),
        }
    }

    /// An error at byte span `span` of `text`.
    pub fn at(path: &Path, text: &str, span: Range<usize>, message: impl Into<String>) -> Self {
        ConfigError {
            file: path.to_path_buf(),
            line: line_of(text, span.start),
            message: capped(message.into()),
        }
    }

    /// A TOML or type error. serde's type errors do not name the field, so
    /// the key written on the offending line is added when there is one.
    pub(crate) fn from_toml(path: &Path, text: &str, e: &toml::de::Error) -> Self {
        let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(0);
        let mut message = e.message().trim().to_string();
        let key = text
            .lines()
            .nth(line.wrapping_sub(1))
            .and_then(|l| l.split_once('='))
            .map(|(k, _)| k.trim())
            .filter(|k| !k.is_empty() && !message.contains(*k));
        if let Some(key) = key {
            message = format!("{key}: {message}");
        }
        ConfigError {
            file: path.to_path_buf(),
            line,
            message: capped(message),
        }
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    text.as_bytes()[..offset]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: {}", self.file.display(), self.line, self.message)
        } else {
            write!(f, "{}: {}", self.file.display(), self.message)
        }
    }
}

impl std::error::Error for ConfigError {}
