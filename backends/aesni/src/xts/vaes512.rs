//! The 512-bit VAES path: four blocks per zmm register, 32 blocks (one
//! TrueCrypt sector) in flight, tweaks made four at a time with AVX-512 and
//! VPCLMULQDQ. Needs AVX-512 F/BW, VAES, VPCLMULQDQ.

use super::keys::ROUND_KEYS;
use core::arch::x86_64::{
    __m128i, __m512i, _mm512_add_epi64, _mm512_aesdec_epi128, _mm512_aesdeclast_epi128,
    _mm512_aesenc_epi128, _mm512_aesenclast_epi128, _mm512_broadcast_i32x4, _mm512_bslli_epi128,
    _mm512_clmulepi64_epi128, _mm512_loadu_si512, _mm512_permutexvar_epi64, _mm512_set_epi64,
    _mm512_set1_epi64, _mm512_setzero_si512, _mm512_slli_epi64, _mm512_sllv_epi64,
    _mm512_srli_epi64, _mm512_srlv_epi64, _mm512_storeu_si512, _mm512_ternarylogic_epi64,
    _mm512_xor_si512,
};
use zeroize::Zeroize;

/// Blocks per register.
const LANES: usize = 4;
/// Registers of tweaks encrypted together: 16 units per batch.
const TWEAK_REGS: usize = 4;
/// Registers in flight in the main loop.
const WIDE: usize = 8;
/// Bytes per register.
const REG: usize = 16 * LANES;

type RoundKeys = [__m512i; ROUND_KEYS];

/// `ternarylogic` truth table for `a ^ b ^ c`.
const XOR3: i32 = 0x96;

#[inline]
#[target_feature(enable = "avx512f")]
fn load(bytes: &[u8; REG]) -> __m512i {
    // SAFETY: `bytes` is 64 readable bytes; `loadu` has no alignment needs.
    unsafe { _mm512_loadu_si512(bytes.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "avx512f")]
fn store(bytes: &mut [u8; REG], v: __m512i) {
    // SAFETY: `bytes` is 64 writable bytes; `storeu` has no alignment needs.
    unsafe { _mm512_storeu_si512(bytes.as_mut_ptr().cast(), v) }
}

/// Shifts each 128-bit lane left by per-qword counts `left` (with `right`
/// = 64 - `left`, a count of 64 giving zero) and folds the bits shifted out
/// of the top of the lane back in with the XTS polynomial: multiplies lane
/// i by alpha^left_i. Counts up to 56 keep the fold inside the low qword.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq")]
fn shift_fold(shifted: __m512i, carry: __m512i) -> __m512i {
    // Carries out of the low qword move up into the high qword.
    let up = _mm512_bslli_epi128::<8>(carry);
    // Carries out of the high qword, times x^7+x^2+x+1, into the low one.
    let folded = _mm512_clmulepi64_epi128::<0x01>(carry, _mm512_set1_epi64(0x87));
    _mm512_ternarylogic_epi64::<XOR3>(shifted, up, folded)
}

/// Multiplies each lane's tweak by alpha^4: the next register of tweaks.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq")]
fn mul_alpha4(t: __m512i) -> __m512i {
    shift_fold(_mm512_slli_epi64::<4>(t), _mm512_srli_epi64::<60>(t))
}

/// From a tweak `t` in every lane, the register `t, t*a, t*a^2, t*a^3`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq")]
fn spread(t: __m512i) -> __m512i {
    let left = _mm512_set_epi64(3, 3, 2, 2, 1, 1, 0, 0);
    let right = _mm512_set_epi64(61, 61, 62, 62, 63, 63, 64, 64);
    shift_fold(_mm512_sllv_epi64(t, left), _mm512_srlv_epi64(t, right))
}

/// Encrypts `N` registers side by side; `last` is each one's final round
/// key (the tweak folded in).
#[inline]
#[target_feature(enable = "avx512f,vaes")]
fn encrypt_n<const N: usize>(rk: &RoundKeys, x: &mut [__m512i; N], last: &[__m512i; N]) {
    for k in &rk[1..ROUND_KEYS - 1] {
        for v in x.iter_mut() {
            *v = _mm512_aesenc_epi128(*v, *k);
        }
    }
    for (v, l) in x.iter_mut().zip(last) {
        *v = _mm512_aesenclast_epi128(*v, *l);
    }
}

/// XTS over `N` consecutive registers of one unit; `t` holds the tweaks of
/// the first four blocks and is advanced past the last.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,vaes,vpclmulqdq")]
fn run<const N: usize, const ENC: bool>(
    rk: &RoundKeys,
    blocks: &mut [[u8; REG]; N],
    t: &mut __m512i,
) {
    let mut tw = [*t; N];
    for i in 1..N {
        tw[i] = mul_alpha4(tw[i - 1]);
    }
    *t = mul_alpha4(tw[N - 1]);
    let mut x = [_mm512_setzero_si512(); N];
    for i in 0..N {
        // Pre-whitening: data ^ tweak ^ round key 0 in one instruction.
        x[i] = _mm512_ternarylogic_epi64::<XOR3>(load(&blocks[i]), tw[i], rk[0]);
    }
    for k in &rk[1..ROUND_KEYS - 1] {
        for v in x.iter_mut() {
            *v = if ENC {
                _mm512_aesenc_epi128(*v, *k)
            } else {
                _mm512_aesdec_epi128(*v, *k)
            };
        }
    }
    for i in 0..N {
        // The last round ends with an XOR of its key: fold the
        // post-whitening tweak into it.
        let last = _mm512_xor_si512(rk[ROUND_KEYS - 1], tw[i]);
        let out = if ENC {
            _mm512_aesenclast_epi128(x[i], last)
        } else {
            _mm512_aesdeclast_epi128(x[i], last)
        };
        store(&mut blocks[i], out);
    }
}

/// XTS over one data unit; `t` holds its first tweak in every lane.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,vaes,vpclmulqdq")]
fn unit<const ENC: bool>(rk: &RoundKeys, data: &mut [u8], t: __m512i) {
    let mut t = spread(t);
    if let Ok(sector) = <&mut [u8; WIDE * REG]>::try_from(&mut *data) {
        // A 512-byte unit (a TrueCrypt sector) is one pass of the main
        // loop: skip the remainder handling.
        let (regs, _) = sector.as_chunks_mut::<REG>();
        if let Ok(regs) = <&mut [[u8; REG]; WIDE]>::try_from(regs) {
            run::<WIDE, ENC>(rk, regs, &mut t);
            return;
        }
    }
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
        // One to three blocks: run them through a register-sized buffer.
        let mut buf = [[0u8; REG]; 1];
        let n = tail.len().min(REG);
        buf[0][..n].copy_from_slice(&tail[..n]);
        run::<1, ENC>(rk, &mut buf, &mut t);
        tail[..n].copy_from_slice(&buf[0][..n]);
        buf.zeroize();
    }
}

/// Broadcasts round keys to all four lanes.
#[inline]
#[target_feature(enable = "avx512f")]
fn broadcast(keys: &[__m128i; ROUND_KEYS]) -> RoundKeys {
    keys.map(|k| _mm512_broadcast_i32x4(k))
}

/// XTS over `data`, consecutive units of `unit_size` bytes from `first_unit`.
/// `rk` are the data key's encryption or decryption round keys (per `ENC`),
/// `tk` the tweak key's encryption round keys.
#[target_feature(enable = "avx512f,avx512bw,vaes,vpclmulqdq")]
pub(crate) fn crypt<const ENC: bool>(
    rk: &[__m128i; ROUND_KEYS],
    tk: &[__m128i; ROUND_KEYS],
    data: &mut [u8],
    first_unit: u64,
    unit_size: usize,
) {
    let mut rk = broadcast(rk);
    let mut tk = broadcast(tk);
    let mut tweaks = [_mm512_setzero_si512(); TWEAK_REGS];
    let mut tweak_last = [tk[ROUND_KEYS - 1]; TWEAK_REGS];
    // Qword indices that copy lane 0 of a register to all four lanes; add
    // 2 per lane to pick another.
    let pick0 = _mm512_set_epi64(1, 0, 1, 0, 1, 0, 1, 0);
    let mut unit_no = first_unit;
    for group in data.chunks_mut(unit_size * LANES * TWEAK_REGS) {
        for (i, t) in tweaks.iter_mut().enumerate() {
            // Unit numbers past the end are encrypted but never used.
            let n = unit_no.wrapping_add((LANES * i) as u64);
            let lane = |j: u64| n.wrapping_add(j) as i64;
            *t = _mm512_set_epi64(0, lane(3), 0, lane(2), 0, lane(1), 0, lane(0));
            *t = _mm512_xor_si512(*t, tk[0]);
        }
        encrypt_n(&tk, &mut tweaks, &tweak_last);
        for (quad, t) in group.chunks_mut(unit_size * LANES).zip(&tweaks) {
            let mut pick = pick0;
            for data in quad.chunks_exact_mut(unit_size) {
                unit::<ENC>(&rk, data, _mm512_permutexvar_epi64(pick, *t));
                pick = _mm512_add_epi64(pick, _mm512_set1_epi64(2));
            }
        }
        unit_no = unit_no.wrapping_add((LANES * TWEAK_REGS) as u64);
    }
    tweaks.zeroize();
    tweak_last.zeroize();
    rk.zeroize();
    tk.zeroize();
}
