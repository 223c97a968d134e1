//! softrouter fib (to be written).
