#!/usr/bin/env bash
# Every performance ratio the project targets, in one run on this machine,
# each beside its target: the ciphers per SIMD path this processor runs
# (one thread, 512-byte units, through the backends' C ABI, from
# `cargo bench -p tcd-tests --bench xts`) against OpenSSL's aes-256-xts in
# the same run, the header search (dist/bench-kdf.sh) and the mounted
# volume against a plain loop device (dist/bench-mount.sh: random 4 KiB at
# queue depth 32, sequential). Run as root after
# `cargo build --release --workspace`, on an otherwise idle machine; it
# takes 5-10 minutes.
#   TCD_BENCH_SECONDS   time per cipher figure (default 0.5; best of five rounds)
#   TCD_BENCH_MIB       file size of the sequential runs (default 512)
#   CARGO               the cargo to run (default: from PATH, or the
#                       invoking user's ~/.cargo/bin under sudo)
set -euo pipefail
cd "$(dirname "$0")/.."
export TCD_BENCH_SECONDS="${TCD_BENCH_SECONDS:-0.5}"
cargo="${CARGO:-$(command -v cargo || echo "$(getent passwd "${SUDO_USER:-root}" | cut -d: -f6)/.cargo/bin/cargo")}"
for tool in openssl fio bc "$cargo"; do
    command -v "$tool" >/dev/null || { echo "$tool is needed" >&2; exit 1; }
done
[ -x target/release/tcd ] || { echo "run cargo build --release --workspace first" >&2; exit 1; }

flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' |
    grep -xE 'sse2|ssse3|sse4_2|avx|avx2|bmi2|aes|vaes|pclmulqdq|vpclmulqdq|sha_ni|gfni|avx512f|avx512bw|avx512vl|avx512vbmi' |
    tr '\n' ' ')
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
echo "flags: $flags"
echo "kernel: $(uname -r); $(openssl version)"
echo

# OpenSSL's AES-256-XTS MB/s on one 1 MiB data unit (its best case), one
# process. OPENSSL_ia32cap hides AVX-512 (leaf 7 EBX: F, DQ, IFMA, CD, BW,
# VL) for the narrower levels, as on an AVX2-only processor.
openssl_mbs() { # level
    local cap=()
    [ "$1" != avx512 ] && cap=(env OPENSSL_ia32cap="~0x0:~0xD0230000")
    "${cap[@]}" openssl speed -evp aes-256-xts -bytes 1048576 -seconds 2 2>/dev/null |
        awk '/k$/ { v = $NF } END { sub(/k$/, "", v); printf "%.0f", v * 1000 / 1e6 }'
}

levels=(sse2)
grep -qw avx2 /proc/cpuinfo && levels=(avx2 "${levels[@]}")
grep -qw avx512f /proc/cpuinfo && levels=(avx512 "${levels[@]}")

echo "== ciphers: MB/s, one thread, XTS, 512-byte units (mean of encrypt and decrypt) =="
bench=$(TCD_BENCH_ALGORITHMS="AES,Serpent,Twofish,AES-Twofish-Serpent,Camellia,Kuznyechik" \
    "$cargo" bench -q -p tcd-tests --bench xts 2>/dev/null)
# The mean one-thread figure of an algorithm on backends at a level.
figure() { # algorithm backends level
    awk -v a="$1" -v b="$2" -v l="$3" '$1 == a && $2 == b && $3 == l && $4 == 512 { printf "%.0f", ($5 + $6) / 2 }' <<<"$bench"
}
verdict() { # value target (">= N" or "-")
    if [ "$2" = "-" ]; then echo ""; elif [ "$(echo "$1 ${2% *} ${2#* }" | bc -l)" = 1 ]; then echo "met"; else echo "MISSED"; fi
}
line() { # label figure target
    printf '%-48s %9s %9s  %s\n' "$1" "$2" "$3" "$(verdict "$2" "$3")"
}
printf '%-48s %9s %9s\n' "measurement" "figure" "target"
for level in "${levels[@]}"; do
    ossl=$(openssl_mbs "$level")
    aesni=$(figure AES aesni "$level")
    case $level in
        avx512) target_ni=">= 1.5" ;;
        avx2) target_ni=">= 1.3" ;;
        *) target_ni="-" ;;
    esac
    t() { if [ "$level" = sse2 ]; then echo "-"; else echo ">= $1"; fi; }
    line "TCD_SIMD=$level OpenSSL aes-256-xts (1 MiB unit)" "$ossl" "-"
    line "TCD_SIMD=$level AES aesni" "$aesni" "-"
    line "TCD_SIMD=$level AES aesni / OpenSSL" "$(printf '%.2f' "$(echo "$aesni / $ossl" | bc -l)")" "$target_ni"
    line "TCD_SIMD=$level AES soft" "$(figure AES soft "$level")" "$(t 400)"
    line "TCD_SIMD=$level Serpent" "$(figure Serpent soft "$level")" "$(t 800)"
    line "TCD_SIMD=$level Twofish" "$(figure Twofish soft "$level")" "$(t 500)"
    line "TCD_SIMD=$level AES-Twofish-Serpent all soft" "$(figure AES-Twofish-Serpent soft+soft+soft "$level")" "$(t 150)"
    line "TCD_SIMD=$level Camellia" "$(figure Camellia soft "$level")" "$(t 300)"
    line "TCD_SIMD=$level Kuznyechik" "$(figure Kuznyechik soft "$level")" "$(t 200)"
done
echo "(cipher targets are the AVX2 class's; the avx512 rows must not fall below them, sse2 has none)"
echo

echo "== header search (dist/bench-kdf.sh, one run each) =="
TCD_BENCH_RUNS=1 dist/bench-kdf.sh | tail -n +4
echo

echo "== mounted AES volume on aesni against a plain loop device (dist/bench-mount.sh) =="
mount_out=$(TCD_BENCH_MIB="${TCD_BENCH_MIB:-512}" TCD_BENCH_CASES="AES aesni" dist/bench-mount.sh)
echo "$mount_out"
printf '%-48s %9s %9s\n' "measurement" "ratio" "target"
for transport in io_uring classic; do
    read -r sw sr rw rr < <(awk -v t="($transport)" '$1 == "AES" && $3 == "aesni" && $4 == t { print $9, $10, $11, $12 }' <<<"$mount_out")
    line "random 4 KiB write, queue depth 32, $transport" "$rw" ">= 0.6"
    line "random 4 KiB read, queue depth 32, $transport" "$rr" ">= 0.6"
    line "sequential write, $transport" "$sw" ">= 0.5"
    line "sequential read, $transport" "$sr" ">= 0.9"
done
