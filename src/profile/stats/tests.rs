//! Statistics against values known independently of this code: closed forms for a fixed
//! sequence (the same numbers NumPy's default percentile gives) and for the normal and
//! exponential distributions.

use super::*;

fn normal(rng: &mut Rng, mean: f64, sd: f64) -> f64 {
    // Box–Muller.
    let u1 = rng.next_f64().max(f64::MIN_POSITIVE);
    let u2 = rng.next_f64();
    mean + sd * (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn one_to_a_hundred() {
    let xs: Vec<f64> = (1..=100).rev().map(f64::from).collect();
    let s = summarize(&xs, 1000, 7).expect("samples");
    assert_eq!(s.n, 100);
    assert!(close(s.median, 50.5, 1e-12));
    assert!(close(s.mean, 50.5, 1e-12));
    assert_eq!((s.min, s.max), (1.0, 100.0));
    // numpy.percentile(range(1, 101), [5, 95]) == [5.95, 95.05]
    assert!(close(s.p5, 5.95, 1e-9), "{}", s.p5);
    assert!(close(s.p95, 95.05, 1e-9), "{}", s.p95);
    // numpy.percentile(range(1, 101), [25, 75]) == [25.75, 75.25]
    assert!(close(s.p25, 25.75, 1e-9), "{}", s.p25);
    assert!(close(s.p75, 75.25, 1e-9), "{}", s.p75);
    // |x − 50.5| takes 0.5, 1.5, … 49.5 twice each: its median is 25.
    assert!(close(s.mad, 25.0 * MAD_SCALE, 1e-9));
    // Standard deviation of 1..=n (n − 1 denominator): sqrt(n(n+1)/12).
    assert!(close(s.std_dev, (100.0f64 * 101.0 / 12.0).sqrt(), 1e-9));
    assert!(close(s.cv, s.std_dev / 50.5, 1e-12));
    assert!(s.ci_low <= s.median && s.median <= s.ci_high);
    assert!(s.ci_low >= 40.0 && s.ci_high <= 61.0, "{s:?}");
}

#[test]
fn small_and_degenerate_inputs() {
    assert_eq!(percentile(&[1.0, 2.0, 3.0], 50.0), 2.0);
    assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0], 50.0), 2.5);
    assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0], 0.0), 1.0);
    assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0], 100.0), 4.0);
    assert!(percentile(&[], 50.0).is_nan());
    assert!(summarize(&[], 100, 1).is_none());
    assert!(summarize(&[f64::NAN], 100, 1).is_none());
    let one = summarize(&[5.0], 100, 1).expect("one sample");
    assert_eq!(
        (one.median, one.ci_low, one.ci_high, one.std_dev, one.mad),
        (5.0, 5.0, 5.0, 0.0, 0.0)
    );
    let flat = summarize(&[3.0; 40], 200, 1).expect("flat");
    assert_eq!((flat.ci_low, flat.ci_high, flat.cv), (3.0, 3.0, 0.0));
}

#[test]
fn normal_distribution() {
    let mut rng = Rng::new(42);
    let xs: Vec<f64> = (0..20_000).map(|_| normal(&mut rng, 10.0, 2.0)).collect();
    let s = summarize(&xs, 400, 3).expect("samples");
    assert!(close(s.median, 10.0, 0.05), "{s:?}");
    assert!(close(s.mean, 10.0, 0.05), "{s:?}");
    assert!(close(s.std_dev, 2.0, 0.05), "{s:?}");
    // The scaled MAD estimates σ for normal data.
    assert!(close(s.mad, 2.0, 0.06), "{s:?}");
    // Φ⁻¹(0.95) = 1.6449.
    assert!(close(s.p95, 10.0 + 1.6449 * 2.0, 0.1), "{s:?}");
    assert!(close(s.p5, 10.0 - 1.6449 * 2.0, 0.1), "{s:?}");
    // The median's standard error is σ·sqrt(π/(2n)); a 95% interval is about ±1.96 of it.
    let se = 2.0 * (std::f64::consts::PI / 2.0 / 20_000.0).sqrt();
    let width = s.ci_high - s.ci_low;
    assert!(
        width > 2.0 * 1.96 * se * 0.6 && width < 2.0 * 1.96 * se * 1.5,
        "{width} vs {se}"
    );
    assert!(s.ci_low <= 10.0 + 3.0 * se && s.ci_high >= 10.0 - 3.0 * se);
}

#[test]
fn exponential_distribution() {
    let mut rng = Rng::new(9);
    let xs: Vec<f64> = (0..20_000).map(|_| -(1.0 - rng.next_f64()).ln()).collect();
    let s = summarize(&xs, 200, 5).expect("samples");
    assert!(close(s.median, std::f64::consts::LN_2, 0.03), "{s:?}");
    assert!(close(s.p95, -(0.05f64).ln(), 0.12), "{s:?}");
    assert!(close(s.mean, 1.0, 0.03), "{s:?}");
    // P(|X − ln 2| ≤ m) = ½ gives sinh(m) = ½ for Exp(1): the MAD is asinh(½).
    assert!(close(s.mad, 0.5f64.asinh() * MAD_SCALE, 0.03), "{s:?}");
}

#[test]
fn bootstrap_interval_covers_the_true_median() {
    // 95% nominal; the percentile bootstrap of a median of 31 samples covers a bit less or more.
    let mut rng = Rng::new(1234);
    let trials = 200;
    let mut covered = 0;
    for t in 0..trials {
        let mut xs: Vec<f64> = (0..31).map(|_| normal(&mut rng, 0.0, 1.0)).collect();
        xs.sort_by(f64::total_cmp);
        let (lo, hi) = bootstrap_median_ci(&xs, 300, 0.95, t);
        if lo <= 0.0 && 0.0 <= hi {
            covered += 1;
        }
    }
    let rate = f64::from(covered) / f64::from(trials as u32);
    assert!((0.88..=0.995).contains(&rate), "coverage {rate}");
}

#[test]
fn same_seed_same_interval() {
    let xs: Vec<f64> = (0..50).map(|i| f64::from(i * i % 17)).collect();
    let a = summarize(&xs, 500, 11).expect("samples");
    let b = summarize(&xs, 500, 11).expect("samples");
    assert_eq!(a, b);
}
