//! Percentiles and rates over measured durations.

use std::time::Duration;

/// The `q` quantile (0..=1) of `samples` in milliseconds, nearest-rank; 0 when empty.
pub fn percentile_ms(samples: &mut [Duration], q: f64) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    samples.sort_unstable();
    let n = samples.len();
    // The smallest rank whose share of the samples reaches q, found in integers.
    let rank = (1..=n).find(|r| *r as f64 >= q * n as f64).unwrap_or(n);
    samples[rank - 1].as_secs_f64() * 1_000.0
}

/// `count` per second over `elapsed`; 0 for an empty interval.
pub fn rate(count: u64, elapsed: Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    if secs > 0.0 {
        count as f64 / secs
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_take_the_nearest_rank() {
        let mut s: Vec<Duration> = (1..=100).rev().map(Duration::from_millis).collect();
        assert_eq!(percentile_ms(&mut s, 0.5), 50.0);
        assert_eq!(percentile_ms(&mut s, 0.95), 95.0);
        assert_eq!(percentile_ms(&mut s, 1.0), 100.0);
        assert_eq!(percentile_ms(&mut [], 0.5), 0.0);
    }

    #[test]
    fn rates_are_per_second() {
        assert_eq!(rate(500, Duration::from_millis(250)), 2_000.0);
        assert_eq!(rate(5, Duration::ZERO), 0.0);
    }
}
