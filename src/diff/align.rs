//! Aligning two arrays: which item of one is which item of the other.
//!
//! Items are compared by their meaning hashes. The common head and tail are matched first; what
//! lies between is aligned with Myers' O((N+M)·D) algorithm, stopped once the edit distance
//! passes a bound or its work passes a budget, in which case the caller falls back to pairing
//! items by index and says so.

/// Matched index pairs `(a, b)`, increasing in both, or `None` when the bound was passed.
pub(crate) fn lcs(a: &[u64], b: &[u64], max_edits: usize) -> Option<Vec<(usize, usize)>> {
    let head = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (mid_a, mid_b) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    let mut pairs: Vec<(usize, usize)> = (0..head).map(|i| (i, i)).collect();
    let middle = myers(mid_a, mid_b, max_edits)?;
    pairs.extend(middle.into_iter().map(|(i, j)| (i + head, j + head)));
    let (ta, tb) = (a.len() - tail, b.len() - tail);
    pairs.extend((0..tail).map(|i| (ta + i, tb + i)));
    Some(pairs)
}

/// Work (snake steps plus diagonals visited) after which alignment gives up.
const WORK_BUDGET: usize = 50_000_000;

/// Myers' greedy forward algorithm with a trace for backtracking; `None` past `max_d` edits.
fn myers(a: &[u64], b: &[u64], max_d: usize) -> Option<Vec<(usize, usize)>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    if n == 0 || m == 0 {
        return (a.len() + b.len() <= max_d).then(Vec::new);
    }
    let max_d = max_d.min(a.len() + b.len());
    let off = max_d as isize + 1;
    let width = 2 * max_d + 3;
    let mut v = vec![0isize; width];
    let mut trace: Vec<Vec<isize>> = Vec::new();
    let mut work = 0usize;
    let at = |k: isize| (k + off) as usize;
    for d in 0..=max_d as isize {
        trace.push(v[at(-d - 1).min(at(-d))..=at(d + 1).min(width - 1)].to_vec());
        let mut k = -d;
        while k <= d {
            let mut x = if k == -d || (k != d && v[at(k - 1)] < v[at(k + 1)]) {
                v[at(k + 1)]
            } else {
                v[at(k - 1)] + 1
            };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
                work += 1;
            }
            v[at(k)] = x;
            work += 1;
            if x >= n && y >= m {
                return Some(backtrack(&trace, n, m, off));
            }
            k += 2;
        }
        if work > WORK_BUDGET {
            return None;
        }
    }
    None
}

/// Walks the trace back from `(n, m)`, collecting the diagonal steps (the matches).
fn backtrack(trace: &[Vec<isize>], n: isize, m: isize, off: isize) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    let (mut x, mut y) = (n, m);
    for (d, saved) in trace.iter().enumerate().rev() {
        let d = d as isize;
        // `saved` holds v[k] for k from -d-1 (index 0) upward.
        let base = (-d - 1 + off).max(0);
        let get = |k: isize| saved.get((k + off - base) as usize).copied().unwrap_or(0);
        let k = x - y;
        if d == 0 {
            break;
        }
        let prev_k = if k == -d || (k != d && get(k - 1) < get(k + 1)) {
            k + 1
        } else {
            k - 1
        };
        let prev_x = get(prev_k);
        let prev_y = prev_x - prev_k;
        while x > prev_x && y > prev_y {
            x -= 1;
            y -= 1;
            pairs.push((x as usize, y as usize));
        }
        x = prev_x;
        y = prev_y;
    }
    while x > 0 && y > 0 {
        x -= 1;
        y -= 1;
        pairs.push((x as usize, y as usize));
    }
    pairs.reverse();
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(a: &[u64], b: &[u64], expect: usize) {
        let pairs = lcs(a, b, 100).expect("within the bound");
        assert_eq!(pairs.len(), expect, "{a:?} vs {b:?}: {pairs:?}");
        for w in pairs.windows(2) {
            assert!(w[0].0 < w[1].0 && w[0].1 < w[1].1);
        }
        for (i, j) in pairs {
            assert_eq!(a[i], b[j]);
        }
    }

    #[test]
    fn aligns_insertions_deletions_and_changes() {
        check(&[1, 2, 3], &[1, 2, 3], 3);
        check(&[1, 2, 3], &[1, 9, 2, 3], 3);
        check(&[1, 2, 3, 4], &[1, 3, 4], 3);
        check(&[1, 2, 3, 4, 5], &[5, 4, 3, 2, 1], 1);
        check(&[], &[1, 2], 0);
        check(&[7, 1, 2, 8], &[1, 6, 2], 2);
        check(&[1, 2, 3, 4, 5, 6], &[2, 1, 4, 3, 6, 5], 3);
    }

    #[test]
    fn gives_up_past_the_bound() {
        let a: Vec<u64> = (0..100).collect();
        let b: Vec<u64> = (100..200).collect();
        assert!(lcs(&a, &b, 10).is_none());
        assert!(lcs(&a, &b, 200).is_some());
    }
}
