//! Finding repeated map keys for the encoders' duplicate-key notes, without a SipHash set.
//!
//! Why: every encoder notes a map whose keys repeat, and checking that was the largest single
//! cost of encoding small objects (a SipHash set per map, and a `Vec` per key in MessagePack).
//! How: maps of up to [`PAIRWISE`] keys compare them pairwise (most differ in length or first
//! byte); larger ones go through an open-addressing table keyed by a fast 64-bit hash, comparing
//! the bytes of keys whose hashes are equal. Keys come from the input, so a crafted map could
//! make hashes collide: once probing has cost more than a few steps per key, the map is checked
//! again by sorting `(hash, index)` pairs, where a run of equal hashes longer than [`PAIRWISE`]
//! is sorted by the key bytes, so the worst case stays `n log n` comparisons, never quadratic.

/// Maps with at most this many keys compare them pairwise.
pub(crate) const PAIRWISE: usize = 16;

/// The indices of the keys equal to an earlier key, ascending. `key(i)` gives key `i`'s bytes.
pub(crate) fn repeated<'k>(n: usize, key: impl Fn(usize) -> &'k [u8]) -> Vec<usize> {
    let mut found = Vec::new();
    if n <= PAIRWISE {
        // Each key sets one of 64 bits picked by its length and its first and last bytes; equal
        // keys pick the same bit, so a key whose bit is still clear repeats none before it, and
        // only the others are compared with the keys before them.
        let mut keys: [&[u8]; PAIRWISE] = [&[]; PAIRWISE];
        let mut seen = 0u64;
        for i in 0..n {
            let k = key(i);
            let Some(slot) = keys.get_mut(i) else {
                break;
            };
            *slot = k;
            let bit = 1u64 << signature(k);
            if seen & bit == 0 {
                seen |= bit;
                continue;
            }
            // Lengths first: most keys of a map differ in length.
            if keys[..i].iter().any(|j| j.len() == k.len() && *j == k) {
                found.push(i);
            }
        }
        return found;
    }
    // Linear probing in a table at most half full, within a budget of probes.
    let size = n.saturating_mul(2).next_power_of_two();
    let mask = size - 1;
    let mut table: Vec<(u64, usize)> = vec![(0, usize::MAX); size];
    let mut budget = n.saturating_mul(4).saturating_add(64);
    for i in 0..n {
        let k = key(i);
        let h = hash(k);
        let mut slot = h as usize & mask;
        while let Some(entry) = table.get_mut(slot) {
            if entry.1 == usize::MAX {
                *entry = (h, i);
                break;
            }
            let (g, j) = *entry;
            if g == h && key(j) == k {
                found.push(i);
                break;
            }
            budget = match budget.checked_sub(1) {
                Some(b) => b,
                None => return by_sorting(n, key),
            };
            slot = (slot + 1) & mask;
        }
    }
    found
}

/// [`repeated`] one key at a time, for a map of at most [`PAIRWISE`] keys checked as they are
/// written: whether key `i`, `k`, equals one of the keys before it (`earlier(j)` for `j < i`).
/// `seen` carries the keys' signature bits from one call to the next (0 before the first key).
#[inline]
pub(crate) fn repeats_earlier<'k>(
    seen: &mut u64,
    i: usize,
    k: &[u8],
    earlier: impl Fn(usize) -> &'k [u8],
) -> bool {
    let bit = 1u64 << signature(k);
    if *seen & bit == 0 {
        *seen |= bit;
        return false;
    }
    (0..i).any(|j| {
        let e = earlier(j);
        e.len() == k.len() && e == k
    })
}

/// [`repeated`] for large maps by sorting: `n log n` whatever the hashes.
fn by_sorting<'k>(n: usize, key: impl Fn(usize) -> &'k [u8]) -> Vec<usize> {
    let mut found = Vec::new();
    let mut hashed: Vec<(u64, usize)> = (0..n).map(|i| (hash(key(i)), i)).collect();
    hashed.sort_unstable();
    let mut run_start = 0;
    while run_start < hashed.len() {
        let h = hashed[run_start].0;
        let run_end = hashed[run_start..]
            .iter()
            .position(|&(g, _)| g != h)
            .map_or(hashed.len(), |len| run_start + len);
        let run = &mut hashed[run_start..run_end];
        if run.len() > 1 {
            if run.len() > PAIRWISE {
                // Equal keys end up next to each other, the first of them first.
                run.sort_by(|a, b| key(a.1).cmp(key(b.1)).then(a.1.cmp(&b.1)));
                found.extend(run.windows(2).filter_map(|w| match w {
                    [a, b] if key(a.1) == key(b.1) => Some(b.1),
                    _ => None,
                }));
            } else {
                // A run is in index order (the pairs sorted by hash, then index).
                for (x, &(_, i)) in run.iter().enumerate() {
                    if run[..x].iter().any(|&(_, j)| key(j) == key(i)) {
                        found.push(i);
                    }
                }
            }
        }
        run_start = run_end;
    }
    found.sort_unstable();
    found
}

/// A number below 64 from the length and the first and last bytes of `k`.
#[inline]
fn signature(k: &[u8]) -> u32 {
    let first = u32::from(k.first().copied().unwrap_or(0));
    let last = u32::from(k.last().copied().unwrap_or(0));
    let mixed = (k.len() as u32).wrapping_mul(0x9E37_79B1)
        ^ first.wrapping_mul(0x85EB_CA77)
        ^ last.wrapping_mul(0xC2B2_AE3D);
    mixed.wrapping_mul(0x27D4_EB2F) >> 26
}

/// The FxHash mixing step over 8 bytes at a time, and the length.
fn hash(bytes: &[u8]) -> u64 {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    let mix = |h: u64, word: u64| (h.rotate_left(5) ^ word).wrapping_mul(SEED);
    let mut h = mix(0, bytes.len() as u64);
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        h = mix(h, u64::from_le_bytes(word));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        h = mix(h, u64::from_le_bytes(word));
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The obvious quadratic answer, to compare against.
    fn naive(keys: &[Vec<u8>]) -> Vec<usize> {
        (0..keys.len())
            .filter(|&i| keys[..i].contains(&keys[i]))
            .collect()
    }

    fn check(keys: &[Vec<u8>]) {
        assert_eq!(repeated(keys.len(), |i| &keys[i]), naive(keys), "{keys:?}");
    }

    #[test]
    fn small_and_large_maps() {
        let words = |v: &[&str]| v.iter().map(|s| s.as_bytes().to_vec()).collect::<Vec<_>>();
        check(&words(&[]));
        check(&words(&["a"]));
        check(&words(&["a", "b", "a", "a", "c", "b"]));
        // Small maps whose keys share length, first and last byte (one signature bit) with
        // and without repeating: the comparison behind the bit decides.
        check(&words(&["ab", "ab", "aab", "abb", "aab", "", ""]));
        let same_bit: Vec<Vec<u8>> = (0..16)
            .map(|i| vec![b'k', b'0' + (i % 10) as u8, b'k'])
            .collect();
        check(&same_bit);
        let mut many: Vec<Vec<u8>> = (0..40).map(|i| format!("key{i}").into_bytes()).collect();
        check(&many);
        many.push(b"key7".to_vec());
        many.push(b"key39".to_vec());
        many.insert(3, b"key30".to_vec());
        check(&many);
        assert_eq!(repeated(many.len(), |i| &many[i]), vec![31, 41, 42]);
        // Keys that differ only past the first 8 bytes, and the empty key.
        let mut long: Vec<Vec<u8>> = (0..30)
            .map(|i| format!("a_long_common_prefix_{i}").into_bytes())
            .collect();
        long.push(Vec::new());
        long.push(b"a_long_common_prefix_29".to_vec());
        long.push(Vec::new());
        check(&long);
    }

    /// [`repeats_earlier`], key by key, finds what [`repeated`] finds.
    #[test]
    fn one_at_a_time_agrees() {
        let words = |v: &[&str]| v.iter().map(|s| s.as_bytes().to_vec()).collect::<Vec<_>>();
        let same_bit: Vec<Vec<u8>> = (0..16)
            .map(|i| vec![b'k', b'0' + (i % 10) as u8, b'k'])
            .collect();
        let cases = [
            words(&[]),
            words(&["a", "b", "a", "a", "c", "b"]),
            words(&["ab", "ab", "aab", "abb", "aab", "", ""]),
            same_bit,
        ];
        for keys in &cases {
            let mut seen = 0;
            let found: Vec<usize> = (0..keys.len())
                .filter(|&i| repeats_earlier(&mut seen, i, &keys[i], |j| &keys[j]))
                .collect();
            assert_eq!(found, naive(keys), "{keys:?}");
        }
    }

    #[test]
    fn sorting_agrees() {
        let keys: Vec<Vec<u8>> = (0..100)
            .map(|i: usize| format!("k{}", i * 7 % 60).into_bytes())
            .collect();
        assert_eq!(by_sorting(keys.len(), |i| &keys[i]), naive(&keys));
        let keys: Vec<Vec<u8>> = (0..100).map(|i| vec![b'x'; i % 3]).collect();
        assert_eq!(by_sorting(keys.len(), |i| &keys[i]), naive(&keys));
    }

    #[test]
    fn long_runs_of_equal_hashes() {
        // Few distinct keys among many: runs of equal hashes of up to 16 (pairwise) and longer
        // (sorted by bytes).
        let keys: Vec<Vec<u8>> = (0..100).map(|i| vec![(i % 7) as u8]).collect();
        check(&keys);
        let keys: Vec<Vec<u8>> = (0..100).map(|i| vec![b'x'; i % 3]).collect();
        check(&keys);
    }
}
