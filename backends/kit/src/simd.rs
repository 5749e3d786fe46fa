//! The `TCD_SIMD` switch: caps the instruction-set level a backend's cipher
//! code may use, so every path can be measured and tested on a machine that
//! has a faster one.
//!
//! `TCD_SIMD=avx512`, `avx2` or `sse2` (case-insensitive) is read at each
//! key setup. A cipher then runs its fastest path at or below that level
//! that this processor supports, so forcing a level the processor lacks
//! falls back to the best it has below it and never executes an
//! instruction the processor lacks. Unset, empty or any other value: no cap.

/// An instruction-set level, slowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// SSE2 (the x86_64 baseline) or portable code.
    Sse2,
    /// AVX2 (and, for AES-NI, 256-bit VAES).
    Avx2,
    /// AVX-512 (and, for AES-NI, 512-bit VAES).
    Avx512,
}

/// The environment variable read by [`cap`].
pub const ENV: &str = "TCD_SIMD";

impl Level {
    /// Every level, fastest first.
    pub const ALL: [Level; 3] = [Level::Avx512, Level::Avx2, Level::Sse2];

    /// The value of `TCD_SIMD` that forces this level.
    pub fn name(self) -> &'static str {
        match self {
            Level::Sse2 => "sse2",
            Level::Avx2 => "avx2",
            Level::Avx512 => "avx512",
        }
    }

    /// The level named `s`, if any.
    pub fn parse(s: &str) -> Option<Level> {
        Level::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(s.trim()))
    }
}

/// The highest level cipher code may use: `TCD_SIMD` if it names one,
/// otherwise [`Level::Avx512`] (no cap).
pub fn cap() -> Level {
    std::env::var(ENV)
        .ok()
        .and_then(|v| Level::parse(&v))
        .unwrap_or(Level::Avx512)
}

/// Whether this processor runs code of `level`: AVX-512 code may use
/// AVX2 and AVX-512VL's 256-bit forms as well.
pub fn supported(level: Level) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        match level {
            Level::Sse2 => true,
            Level::Avx2 => has!("avx2"),
            Level::Avx512 => has!("avx2") && has!("avx512f") && has!("avx512vl"),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        level == Level::Sse2
    }
}

/// The fastest level at or below `cap` that this processor runs.
pub fn best(cap: Level) -> Level {
    Level::ALL
        .into_iter()
        .find(|&l| l <= cap && supported(l))
        .unwrap_or(Level::Sse2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_by_name_and_order_by_speed() {
        assert_eq!(Level::parse("AVX2"), Some(Level::Avx2));
        assert_eq!(Level::parse(" sse2 "), Some(Level::Sse2));
        assert_eq!(Level::parse("avx512"), Some(Level::Avx512));
        assert_eq!(Level::parse("neon"), None);
        assert!(Level::Sse2 < Level::Avx2 && Level::Avx2 < Level::Avx512);
    }

    #[test]
    fn the_best_level_never_passes_the_cap_or_the_processor() {
        assert_eq!(best(Level::Sse2), Level::Sse2);
        for cap in Level::ALL {
            let b = best(cap);
            assert!(b <= cap && supported(b));
        }
    }
}
