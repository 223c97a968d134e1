//! The token bucket that limits a worker's ICMP errors (per worker, so the
//! fast path shares nothing to limit them).

/// A token bucket of `rate` per second with one second of burst, in
/// thousandths of a token (the worker's ICMP error limiter, of
/// `router.icmp_rate`).
pub(crate) struct TokenBucket {
    rate: u64,
    tokens: u64,
    refill_ms: u64,
}

impl TokenBucket {
    /// A full bucket of `rate` errors per second.
    pub fn new(rate: u32) -> TokenBucket {
        let rate = u64::from(rate);
        TokenBucket {
            rate,
            tokens: rate * 1000,
            refill_ms: 0,
        }
    }

    /// Starts the refill clock at `now_ms`.
    pub fn start(&mut self, now_ms: u64) {
        self.refill_ms = now_ms;
    }

    /// Adds the tokens earned since the last refill (once per round).
    pub fn refill(&mut self, now_ms: u64) {
        let dt = now_ms.saturating_sub(self.refill_ms);
        if dt > 0 {
            self.tokens = (self.tokens + dt * self.rate).min(self.rate * 1000);
            self.refill_ms = now_ms;
        }
    }

    /// Takes a token if there is one.
    pub fn take(&mut self) -> bool {
        if self.tokens >= 1000 {
            self.tokens -= 1000;
            true
        } else {
            false
        }
    }
}
