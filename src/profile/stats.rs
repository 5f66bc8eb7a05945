//! Summary statistics of timing samples, as criterion computes them, for an interactive tool.
//!
//! A timing job yields a few dozen samples (time per operation, in nanoseconds). [`summarize`]
//! turns them into the numbers a report shows: median, mean, min, max, 5th/95th percentiles,
//! median absolute deviation, a 95% bootstrap confidence interval of the median, standard
//! deviation and coefficient of variation.
//!
//! Definitions (so independent tools can check them):
//! - Percentiles interpolate linearly between order statistics (R's type 7, NumPy's default):
//!   the p-th percentile of sorted `x[0..n]` is at rank `p/100 · (n−1)`.
//! - MAD is the median of `|x − median|`, scaled by 1.4826 so that it estimates the standard
//!   deviation of normal data (criterion scales it the same way).
//! - The confidence interval is a percentile bootstrap of the median: `resamples` resamples with
//!   replacement, drawn from a seeded generator (so a report is reproducible), and the 2.5th and
//!   97.5th percentiles of their medians.
//! - Standard deviation uses `n − 1`; CV is standard deviation over mean.
//!
//! It does not detect outliers or fit a regression line (criterion's linear sampling); batches
//! are flat and the median is the robust estimate.

use serde::Serialize;

/// The scale that makes the MAD of normal data estimate its standard deviation.
pub const MAD_SCALE: f64 = 1.4826;

/// Summary of one set of samples (all in the samples' unit).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// Median.
    pub median: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
    /// 5th percentile.
    pub p5: f64,
    /// 95th percentile.
    pub p95: f64,
    /// First quartile (25th percentile).
    pub p25: f64,
    /// Third quartile (75th percentile).
    pub p75: f64,
    /// Median absolute deviation, scaled by [`MAD_SCALE`].
    pub mad: f64,
    /// Lower end of the 95% bootstrap confidence interval of the median.
    pub ci_low: f64,
    /// Upper end of the 95% bootstrap confidence interval of the median.
    pub ci_high: f64,
    /// Sample standard deviation (n − 1).
    pub std_dev: f64,
    /// Coefficient of variation: standard deviation / mean (0 when the mean is 0).
    pub cv: f64,
}

/// Summarises `samples` (NaNs are dropped) with a bootstrap of `resamples` resamples seeded with
/// `seed`. `None` when no sample is left.
pub fn summarize(samples: &[f64], resamples: usize, seed: u64) -> Option<Summary> {
    let mut sorted: Vec<f64> = samples.iter().copied().filter(|x| !x.is_nan()).collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let mean = sorted.iter().sum::<f64>() / n as f64;
    let median = percentile(&sorted, 50.0);
    let std_dev = if n > 1 {
        (sorted.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let (ci_low, ci_high) = bootstrap_median_ci(&sorted, resamples, 0.95, seed);
    Some(Summary {
        n,
        median,
        mean,
        min: sorted[0],
        max: sorted[n - 1],
        p5: percentile(&sorted, 5.0),
        p95: percentile(&sorted, 95.0),
        p25: percentile(&sorted, 25.0),
        p75: percentile(&sorted, 75.0),
        mad: mad(&sorted, median),
        ci_low,
        ci_high,
        std_dev,
        cv: if mean == 0.0 { 0.0 } else { std_dev / mean },
    })
}

/// The `p`-th percentile (0–100) of `sorted` (ascending), interpolating linearly (type 7).
/// `NaN` for an empty slice.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    let rank = (p.clamp(0.0, 100.0) / 100.0) * (n - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    let (a, b) = (sorted[lo.min(n - 1)], sorted[hi.min(n - 1)]);
    a + (b - a) * (rank - lo as f64)
}

/// Median absolute deviation from `median`, scaled by [`MAD_SCALE`].
pub fn mad(samples: &[f64], median: f64) -> f64 {
    let mut dev: Vec<f64> = samples.iter().map(|x| (x - median).abs()).collect();
    dev.sort_by(f64::total_cmp);
    percentile(&dev, 50.0) * MAD_SCALE
}

/// Percentile-bootstrap confidence interval of the median of `sorted` at `confidence` (0–1).
/// With fewer than 2 samples or no resamples, the interval is the median itself.
pub fn bootstrap_median_ci(
    sorted: &[f64],
    resamples: usize,
    confidence: f64,
    seed: u64,
) -> (f64, f64) {
    let n = sorted.len();
    let median = percentile(sorted, 50.0);
    if n < 2 || resamples == 0 {
        return (median, median);
    }
    let mut rng = Rng::new(seed);
    let mut medians = Vec::with_capacity(resamples);
    let mut resample = vec![0.0; n];
    for _ in 0..resamples {
        for slot in resample.iter_mut() {
            *slot = sorted[rng.below(n)];
        }
        resample.sort_by(f64::total_cmp);
        medians.push(percentile(&resample, 50.0));
    }
    medians.sort_by(f64::total_cmp);
    let tail = (1.0 - confidence.clamp(0.0, 1.0)) / 2.0 * 100.0;
    (
        percentile(&medians, tail),
        percentile(&medians, 100.0 - tail),
    )
}

/// A small seeded generator (SplitMix64): reproducible resampling without a dependency.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform float in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A uniform index in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        // Multiply-shift: unbiased enough for resampling (bias < n / 2^64).
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

#[cfg(test)]
mod tests;
