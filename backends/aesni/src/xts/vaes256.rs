//! The 256-bit VAES path: two blocks per ymm register, 16 blocks in flight,
//! tweaks made two at a time with AVX2 and VPCLMULQDQ. For processors with
//! VAES but no AVX-512 (Zen 3, Alder Lake), and to compare on those with it.
//! Needs AVX2, VAES, VPCLMULQDQ.

use super::keys::ROUND_KEYS;
use core::arch::x86_64::{
    __m128i, __m256i, _mm256_aesdec_epi128, _mm256_aesdeclast_epi128, _mm256_aesenc_epi128,
    _mm256_aesenclast_epi128, _mm256_broadcastsi128_si256, _mm256_bslli_epi128,
    _mm256_clmulepi64_epi128, _mm256_loadu_si256, _mm256_permute4x64_epi64, _mm256_set_epi64x,
    _mm256_set1_epi64x, _mm256_setzero_si256, _mm256_slli_epi64, _mm256_sllv_epi64,
    _mm256_srli_epi64, _mm256_srlv_epi64, _mm256_storeu_si256, _mm256_xor_si256,
};
use zeroize::Zeroize;

/// Blocks per register.
const LANES: usize = 2;
/// Registers of tweaks encrypted together: 8 units per batch.
const TWEAK_REGS: usize = 4;
/// Registers in flight in the main loop.
const WIDE: usize = 8;
/// Bytes per register.
const REG: usize = 16 * LANES;

type RoundKeys = [__m256i; ROUND_KEYS];

#[inline]
#[target_feature(enable = "avx")]
fn load(bytes: &[u8; REG]) -> __m256i {
    // SAFETY: `bytes` is 32 readable bytes; `loadu` has no alignment needs.
    unsafe { _mm256_loadu_si256(bytes.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "avx")]
fn store(bytes: &mut [u8; REG], v: __m256i) {
    // SAFETY: `bytes` is 32 writable bytes; `storeu` has no alignment needs.
    unsafe { _mm256_storeu_si256(bytes.as_mut_ptr().cast(), v) }
}

/// Completes a per-lane multiply by a small power of alpha: `shifted` is
/// each qword shifted left, `carry` the bits shifted out of each qword.
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq")]
fn shift_fold(shifted: __m256i, carry: __m256i) -> __m256i {
    // Carries out of the low qword move up into the high qword.
    let up = _mm256_bslli_epi128::<8>(carry);
    // Carries out of the high qword, times x^7+x^2+x+1, into the low one.
    let folded = _mm256_clmulepi64_epi128::<0x01>(carry, _mm256_set1_epi64x(0x87));
    _mm256_xor_si256(_mm256_xor_si256(shifted, up), folded)
}

/// Multiplies each lane's tweak by alpha^2: the next register of tweaks.
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq")]
fn mul_alpha2(t: __m256i) -> __m256i {
    shift_fold(_mm256_slli_epi64::<2>(t), _mm256_srli_epi64::<62>(t))
}

/// From a tweak `t` in both lanes, the register `t, t*a`.
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq")]
fn spread(t: __m256i) -> __m256i {
    let left = _mm256_set_epi64x(1, 1, 0, 0);
    let right = _mm256_set_epi64x(63, 63, 64, 64);
    shift_fold(_mm256_sllv_epi64(t, left), _mm256_srlv_epi64(t, right))
}

#[inline]
#[target_feature(enable = "avx2,vaes")]
fn encrypt_n<const N: usize>(rk: &RoundKeys, x: &mut [__m256i; N], last: &[__m256i; N]) {
    for k in &rk[1..ROUND_KEYS - 1] {
        for v in x.iter_mut() {
            *v = _mm256_aesenc_epi128(*v, *k);
        }
    }
    for (v, l) in x.iter_mut().zip(last) {
        *v = _mm256_aesenclast_epi128(*v, *l);
    }
}

/// XTS over `N` consecutive registers of one unit; `t` holds the tweaks of
/// the first two blocks and is advanced past the last.
#[inline]
#[target_feature(enable = "avx2,vaes,vpclmulqdq")]
fn run<const N: usize, const ENC: bool>(
    rk: &RoundKeys,
    blocks: &mut [[u8; REG]; N],
    t: &mut __m256i,
) {
    let mut tw = [*t; N];
    for i in 1..N {
        tw[i] = mul_alpha2(tw[i - 1]);
    }
    *t = mul_alpha2(tw[N - 1]);
    let mut x = [_mm256_setzero_si256(); N];
    for i in 0..N {
        x[i] = _mm256_xor_si256(_mm256_xor_si256(load(&blocks[i]), tw[i]), rk[0]);
    }
    for k in &rk[1..ROUND_KEYS - 1] {
        for v in x.iter_mut() {
            *v = if ENC {
                _mm256_aesenc_epi128(*v, *k)
            } else {
                _mm256_aesdec_epi128(*v, *k)
            };
        }
    }
    for i in 0..N {
        // The last round ends with an XOR of its key: fold the
        // post-whitening tweak into it.
        let last = _mm256_xor_si256(rk[ROUND_KEYS - 1], tw[i]);
        let out = if ENC {
            _mm256_aesenclast_epi128(x[i], last)
        } else {
            _mm256_aesdeclast_epi128(x[i], last)
        };
        store(&mut blocks[i], out);
    }
}

/// XTS over one data unit; `t` holds its first tweak in both lanes.
#[inline]
#[target_feature(enable = "avx2,vaes,vpclmulqdq")]
fn unit<const ENC: bool>(rk: &RoundKeys, data: &mut [u8], t: __m256i) {
    let mut t = spread(t);
    let (regs, tail) = data.as_chunks_mut::<REG>();
    let (wide, rest) = regs.as_chunks_mut::<WIDE>();
    for c in wide {
        run::<WIDE, ENC>(rk, c, &mut t);
    }
    let (four, rest) = rest.as_chunks_mut::<4>();
    for c in four {
        run::<4, ENC>(rk, c, &mut t);
    }
    let (two, rest) = rest.as_chunks_mut::<2>();
    for c in two {
        run::<2, ENC>(rk, c, &mut t);
    }
    let (one, _) = rest.as_chunks_mut::<1>();
    for c in one {
        run::<1, ENC>(rk, c, &mut t);
    }
    if !tail.is_empty() {
        // One block left: run it through a register-sized buffer.
        let mut buf = [[0u8; REG]; 1];
        let n = tail.len().min(REG);
        buf[0][..n].copy_from_slice(&tail[..n]);
        run::<1, ENC>(rk, &mut buf, &mut t);
        tail[..n].copy_from_slice(&buf[0][..n]);
        buf.zeroize();
    }
}

/// XTS over `data`, consecutive units of `unit_size` bytes from `first_unit`.
/// `rk` are the data key's encryption or decryption round keys (per `ENC`),
/// `tk` the tweak key's encryption round keys.
#[target_feature(enable = "avx2,vaes,vpclmulqdq")]
pub(crate) fn crypt<const ENC: bool>(
    rk: &[__m128i; ROUND_KEYS],
    tk: &[__m128i; ROUND_KEYS],
    data: &mut [u8],
    first_unit: u64,
    unit_size: usize,
) {
    let mut rk = rk.map(|k| _mm256_broadcastsi128_si256(k));
    let mut tk = tk.map(|k| _mm256_broadcastsi128_si256(k));
    let mut tweaks = [_mm256_setzero_si256(); TWEAK_REGS];
    let mut tweak_last = [tk[ROUND_KEYS - 1]; TWEAK_REGS];
    let mut unit_no = first_unit;
    for group in data.chunks_mut(unit_size * LANES * TWEAK_REGS) {
        for (i, t) in tweaks.iter_mut().enumerate() {
            // Unit numbers past the end are encrypted but never used.
            let n = unit_no.wrapping_add((LANES * i) as u64);
            *t = _mm256_set_epi64x(0, n.wrapping_add(1) as i64, 0, n as i64);
            *t = _mm256_xor_si256(*t, tk[0]);
        }
        encrypt_n(&tk, &mut tweaks, &tweak_last);
        for (pair, t) in group.chunks_mut(unit_size * LANES).zip(&tweaks) {
            let mut units = pair.chunks_exact_mut(unit_size);
            if let Some(data) = units.next() {
                // Qwords 0,1,0,1: lane 0 in both lanes.
                unit::<ENC>(&rk, data, _mm256_permute4x64_epi64::<0x44>(*t));
            }
            if let Some(data) = units.next() {
                // Qwords 2,3,2,3: lane 1 in both lanes.
                unit::<ENC>(&rk, data, _mm256_permute4x64_epi64::<0xee>(*t));
            }
        }
        unit_no = unit_no.wrapping_add((LANES * TWEAK_REGS) as u64);
    }
    tweaks.zeroize();
    tweak_last.zeroize();
    rk.zeroize();
    tk.zeroize();
}
