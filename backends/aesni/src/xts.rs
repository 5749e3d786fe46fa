//! XTS-AES-256 (IEEE 1619, as TrueCrypt and VeraCrypt use it) with the
//! processor's AES instructions.
//!
//! Three code paths, one chosen at key setup by runtime detection, the
//! fastest at or below the `TCD_SIMD` cap (see `tcd_backend_kit::simd`:
//! `avx512`, `avx2`, `sse2` for AES-NI on xmm registers):
//! - [`Path::Vaes512`]: VAES on zmm registers, 4 blocks each, 32 in flight;
//! - [`Path::Vaes256`]: VAES on ymm registers, 2 blocks each, 16 in flight;
//! - [`Path::AesNi`]: AES-NI on xmm registers, 8 blocks in flight.
//!
//! Each encrypts the tweaks (unit numbers) of 8 or 16 units in one batch and
//! makes a unit's later tweaks in registers, several per instruction.

#[cfg(target_arch = "x86_64")]
mod keys;
#[cfg(target_arch = "x86_64")]
mod ni;
#[cfg(all(test, target_arch = "x86_64"))]
mod tests;
#[cfg(target_arch = "x86_64")]
mod vaes256;
#[cfg(target_arch = "x86_64")]
mod vaes512;

#[cfg(not(target_arch = "x86_64"))]
use tcd_backend_kit::XtsCipher;
use tcd_backend_kit::simd::{self, Level};

/// An implementation of the mode, by the instructions it uses.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// AES-NI, 128-bit registers.
    AesNi,
    /// VAES and VPCLMULQDQ on 256-bit registers, AVX2.
    Vaes256,
    /// VAES and VPCLMULQDQ on 512-bit registers, AVX-512 F/BW.
    Vaes512,
}

impl Path {
    /// Every path, fastest first on the processors we measured.
    pub const ALL: [Path; 3] = [Path::Vaes512, Path::Vaes256, Path::AesNi];

    /// Whether this processor has everything the path uses.
    #[cfg(target_arch = "x86_64")]
    pub fn supported(self) -> bool {
        use std::arch::is_x86_feature_detected as has;
        let ni = has!("aes") && has!("sse2");
        match self {
            Path::AesNi => ni,
            Path::Vaes256 => ni && has!("avx2") && has!("vaes") && has!("vpclmulqdq"),
            Path::Vaes512 => {
                ni && has!("avx512f") && has!("avx512bw") && has!("vaes") && has!("vpclmulqdq")
            }
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    pub fn supported(self) -> bool {
        false
    }

    /// The `TCD_SIMD` level the path counts as.
    pub fn level(self) -> Level {
        match self {
            Path::AesNi => Level::Sse2,
            Path::Vaes256 => Level::Avx2,
            Path::Vaes512 => Level::Avx512,
        }
    }

    /// The path's name for people (the ABI's `xts_path`).
    pub fn name(self) -> &'static core::ffi::CStr {
        match self {
            Path::AesNi => c"AES-NI",
            Path::Vaes256 => c"VAES-256",
            Path::Vaes512 => c"VAES-512",
        }
    }

    /// The fastest path this processor supports at or below the `TCD_SIMD`
    /// cap; `None` without AES-NI.
    pub fn best() -> Option<Path> {
        let cap = simd::cap();
        Path::ALL
            .into_iter()
            .find(|p| p.level() <= cap && p.supported())
    }
}

/// True when this processor has AES-NI; nothing else is called otherwise.
pub fn cpu_supported() -> bool {
    Path::AesNi.supported()
}

#[cfg(target_arch = "x86_64")]
pub use imp::AesXts;

#[cfg(target_arch = "x86_64")]
mod imp {
    use super::Path;
    use super::keys::Schedule;
    use super::{ni, vaes256, vaes512};
    use tcd_backend_kit::XtsCipher;
    use zeroize::Zeroize;

    /// XTS-AES-256 keyed with a data key and a tweak key.
    ///
    /// Holds only round keys (wiped on drop) and the chosen path, so one
    /// context serves any number of threads at once.
    pub struct AesXts {
        data: Schedule,
        tweak: Schedule,
        path: Path,
    }

    impl AesXts {
        /// Keys a context from 64 bytes: the data key, then the tweak key.
        /// Uses the fastest path this processor supports at or below the
        /// `TCD_SIMD` cap.
        ///
        /// Call only when [`super::cpu_supported`] is true (the backend's
        /// `available` entry point). On a processor without AES-NI this
        /// panics (the ABI shim turns that into an error status) rather
        /// than execute instructions the processor lacks.
        pub fn new(key: &[u8; 64]) -> AesXts {
            match Path::best() {
                Some(path) => Self::keyed(key, path),
                None => panic!("AES-NI backend used on a processor without AES-NI"),
            }
        }

        /// A context on a given path, or `None` if the processor lacks it.
        /// For tests and benchmarks.
        #[doc(hidden)]
        pub fn with_path(key: &[u8; 64], path: Path) -> Option<AesXts> {
            path.supported().then(|| Self::keyed(key, path))
        }

        /// The path this context runs.
        #[doc(hidden)]
        pub fn path(&self) -> Path {
            self.path
        }

        fn keyed(key: &[u8; 64], path: Path) -> AesXts {
            let mut half = [0u8; 32];
            half.copy_from_slice(&key[..32]);
            // SAFETY: every path needs AES-NI and SSE2, and both callers
            // (`new`, `with_path`) pass only a path whose features runtime
            // detection found.
            let data = unsafe { Schedule::new(&half) };
            half.copy_from_slice(&key[32..]);
            // SAFETY: as above.
            let tweak = unsafe { Schedule::new(&half) };
            half.zeroize();
            AesXts { data, tweak, path }
        }

        fn run<const ENC: bool>(&self, data: &mut [u8], first_unit: u64, unit_size: usize) {
            debug_assert!(
                unit_size > 0
                    && unit_size.is_multiple_of(16)
                    && data.len().is_multiple_of(unit_size)
            );
            if unit_size == 0 || !unit_size.is_multiple_of(16) {
                return;
            }
            let rk = if ENC { &self.data.enc } else { &self.data.dec };
            let tk = &self.tweak.enc;
            match self.path {
                // SAFETY: the path was chosen (in `new` or `with_path`) only
                // after runtime detection found all of its features.
                Path::AesNi => unsafe { ni::crypt::<ENC>(rk, tk, data, first_unit, unit_size) },
                // SAFETY: as above.
                Path::Vaes256 => unsafe {
                    vaes256::crypt::<ENC>(rk, tk, data, first_unit, unit_size)
                },
                // SAFETY: as above.
                Path::Vaes512 => unsafe {
                    vaes512::crypt::<ENC>(rk, tk, data, first_unit, unit_size)
                },
            }
        }
    }

    impl XtsCipher for AesXts {
        fn encrypt(&self, data: &mut [u8], first_unit: u64, unit_size: usize) {
            self.run::<true>(data, first_unit, unit_size);
        }
        fn decrypt(&self, data: &mut [u8], first_unit: u64, unit_size: usize) {
            self.run::<false>(data, first_unit, unit_size);
        }
        fn path(&self) -> Option<&'static core::ffi::CStr> {
            Some(self.path.name())
        }
    }
}

/// Stand-in on other architectures, where `cpu_supported` is false and
/// nothing here is ever called.
#[cfg(not(target_arch = "x86_64"))]
pub struct AesXts;

#[cfg(not(target_arch = "x86_64"))]
impl AesXts {
    pub fn new(_key: &[u8; 64]) -> AesXts {
        AesXts
    }
}

#[cfg(not(target_arch = "x86_64"))]
impl XtsCipher for AesXts {
    fn encrypt(&self, _data: &mut [u8], _first_unit: u64, _unit_size: usize) {}
    fn decrypt(&self, _data: &mut [u8], _first_unit: u64, _unit_size: usize) {}
}
