#!/usr/bin/env bash
# Header search time against OpenSSL's PBKDF2-HMAC-SHA-512 (500,000
# iterations, one 64-byte block), in one run on this machine: a wrong
# password (the full search: every PRF of both formats, Argon2id, every
# header location) and the correct password of a VeraCrypt volume made with
# the defaults (SHA-512, PIM 0), both through `tcctl info` against a daemon
# started here. Prints the CPU's SIMD/SHA flags, the times and the ratios.
# Run as root after `cargo build --release`, on an otherwise idle machine
# (the ratios are of wall times; the daemon's CPU seconds are printed too).
#   TCD_BENCH_RUNS   runs of each measurement, best kept (default 3)
#   TCD_BENCH_BIN    where tcd, tcctl and the backends are (target/release)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${TCD_BENCH_BIN:-$PWD/target/release}"
runs="${TCD_BENCH_RUNS:-3}"
root=$(mktemp -d /tmp/tcd-bench-kdf.XXXXXX)
export TCD_SOCKET="$root/tcd.sock"
cleanup() {
    [ -n "${daemon:-}" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
    rm -rf "$root"
}
trap cleanup EXIT

"$bin/tcd" --socket "$TCD_SOCKET" --runtime-dir "$root/run" --backend-dir "$bin" \
    >"$root/tcd.log" 2>&1 &
daemon=$!
for _ in $(seq 50); do [ -S "$TCD_SOCKET" ] && break; sleep 0.1; done

# Best wall time in seconds of running "$@" $runs times (exit status ignored).
best() {
    local b="" t0 t1 t
    for _ in $(seq "$runs"); do
        t0=$(date +%s.%N)
        "$@" >/dev/null 2>&1 || true
        t1=$(date +%s.%N)
        t=$(echo "$t1 - $t0" | bc -l)
        if [ -z "$b" ] || [ "$(echo "$t < $b" | bc -l)" = 1 ]; then b=$t; fi
    done
    printf '%.3f' "$b"
}
openssl_unit() {
    openssl kdf -keylen 64 -kdfopt digest:SHA512 -kdfopt pass:password \
        -kdfopt hexsalt:"$(printf '5a%.0s' $(seq 64))" -kdfopt iter:500000 PBKDF2
}
info() { # password
    echo "$1" | "$bin/tcctl" info "$vol" --password-stdin
}

vol="$root/bench.hc"
echo "bench" | "$bin/tcctl" create "$vol" --size 4M --filesystem none --force --password-stdin >/dev/null
info bench >/dev/null || { echo "the correct password does not open the volume" >&2; exit 1; }

flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' |
    grep -xE 'sse2|ssse3|sse4_2|avx|avx2|bmi2|aes|vaes|pclmulqdq|vpclmulqdq|sha_ni|avx512f|avx512bw|avx512vl|gfni' |
    tr '\n' ' ')
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
echo "flags: $flags"
echo "TCD_SIMD=${TCD_SIMD:-(unset)}; best of $runs runs each"
unit=$(best openssl_unit)
right=$(best info bench)
wrong=$(best info wrong-password)
cpu_before=$(awk '{ print $14 + $15 }' "/proc/$daemon/stat")
wrong_once=$(runs=1 best info wrong-password)
cpu_after=$(awk '{ print $14 + $15 }' "/proc/$daemon/stat")
printf '%-46s %8s %8s %8s\n' "measurement" "seconds" "units" "target"
printf '%-46s %8s %8s\n' "OpenSSL PBKDF2-SHA-512 500,000 x 1 block" "$unit" "1.00"
printf '%-46s %8s %8.2f %8s\n' "correct password (VeraCrypt, SHA-512, PIM 0)" "$right" \
    "$(echo "$right / $unit" | bc -l)" "<= 1.3"
printf '%-46s %8s %8.2f %8s\n' "wrong password (full search)" "$wrong" \
    "$(echo "$wrong / $unit" | bc -l)" "<= 20"
printf 'one more wrong-password search: %s s wall, %s s of the daemon'"'"'s CPU time (%s cores)\n' \
    "$wrong_once" "$(echo "($cpu_after - $cpu_before) / $(getconf CLK_TCK)" | bc -l | xargs printf '%.2f')" "$(nproc)"
