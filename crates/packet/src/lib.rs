//! softrouter packet (to be written).
