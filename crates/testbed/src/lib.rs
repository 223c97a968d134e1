//! softrouter testbed (to be written).
