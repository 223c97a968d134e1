//! softrouter dataplane (to be written).
