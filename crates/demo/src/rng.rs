//! The demo's randomness: the same sequence for the same seed on every
//! platform, with no dependency.

/// splitmix64: tiny, fast, and good enough for demo data.
pub(super) struct Rng(u64);

impl Rng {
    pub(super) fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub(super) fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    pub(super) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        lo + self.below((hi - lo) as u64 + 1) as i64
    }

    /// True with probability `per_mille / 1000`.
    pub(super) fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }

    /// An index drawn with probability proportional to its weight (`None`
    /// when every weight is 0).
    pub(super) fn weighted(&mut self, weights: impl Iterator<Item = u64> + Clone) -> Option<usize> {
        let mut ticket = self.below(weights.clone().sum());
        weights.enumerate().find_map(|(index, weight)| {
            if ticket < weight {
                Some(index)
            } else {
                ticket -= weight;
                None
            }
        })
    }

    pub(super) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}
