//! softrouter bench (to be written).
