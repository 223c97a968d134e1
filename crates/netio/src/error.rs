//! Errors of port set-up. The per-packet path has no errors: it counts.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum NetioError {
    #[error("{path}: {source}")]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not a pcap file: {reason}")]
    BadPcap { path: PathBuf, reason: String },
    #[error("port {port}: {message}")]
    Port { port: String, message: String },
    #[error("buffer pool: {0}")]
    Pool(std::io::Error),
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
}

impl NetioError {
    pub fn port(port: &str, message: impl Into<String>) -> Self {
        NetioError::Port {
            port: port.to_string(),
            message: message.into(),
        }
    }

    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        NetioError::Io {
            context: context.into(),
            source,
        }
    }
}
