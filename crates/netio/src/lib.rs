//! softrouter netio (to be written).
