//! softrouter config (to be written).
