#!/usr/bin/env bash
# Mounted-volume throughput against a plain loop-mounted ext4 image, side
# by side in one run, everything in RAM (tmpfs): sequential overwrite of a
# large file (dd, fsync at the end) and a cold read of it (caches dropped),
# then random 4 KiB reads and writes with fio (direct I/O, queue depth 32,
# IOPS). For AES on the AES-NI backend, AES on the software backend, and
# the AES-Twofish-Serpent cascade. Run as root after `cargo build --release`.
#   TCD_BENCH_MIB     file size in MiB (default 1024)
#   TCD_BENCH_CASES   "ENCRYPTION BACKEND" pairs, comma-separated (default
#                     "AES aesni,AES soft,AES-Twofish-Serpent default")
#   TCD_BENCH_FIO_SECONDS   seconds of each random I/O run (default 10)
#   TCD_BENCH_TRANSPORTS    how the daemon takes FUSE requests, space-separated
#                     (default "io_uring classic": FUSE over io_uring, then
#                     /dev/fuse; each case runs once per transport)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$PWD/target/release"
mib="${TCD_BENCH_MIB:-1024}"
cases="${TCD_BENCH_CASES:-AES aesni,AES soft,AES-Twofish-Serpent default}"
fio_seconds="${TCD_BENCH_FIO_SECONDS:-10}"
transports="${TCD_BENCH_TRANSPORTS:-io_uring classic}"
command -v fio >/dev/null || { echo "fio is needed (package fio)" >&2; exit 1; }
img_mib=$((mib + mib / 4 + 64))
root=$(mktemp -d /tmp/tcd-bench.XXXXXX)
mount -t tmpfs -o size=$((img_mib * 2 + 256))M tcd-bench "$root"
export TCD_SOCKET="$root/tcd.sock"
cleanup() {
    "$bin/tcctl" dismount --all --force >/dev/null 2>&1 || true
    [ -n "${daemon:-}" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
    umount "$root/plain-mnt" 2>/dev/null || true
    [ -n "${plain_loop:-}" ] && losetup -d "$plain_loop" 2>/dev/null
    umount "$root" 2>/dev/null || true
    rmdir "$root" 2>/dev/null || true
}
trap cleanup EXIT

start_daemon() { # transport
    if [ -n "${daemon:-}" ]; then kill "$daemon"; wait "$daemon" 2>/dev/null || true; fi
    rm -f "$TCD_SOCKET"
    local mode=auto
    [ "$1" = classic ] && mode=classic
    TCD_FUSE_TRANSPORT=$mode "$bin/tcd" --socket "$TCD_SOCKET" --runtime-dir "$root/run" \
        --backend-dir "$bin" >>"$root/tcd.log" 2>&1 &
    daemon=$!
    for _ in $(seq 50); do [ -S "$TCD_SOCKET" ] && break; sleep 0.1; done
}

# MB/s of a dd line ("... bytes ... copied, S s, X MB/s"), recomputed.
rate() { awk -v b="$1" '/copied/ { for (i = 1; i <= NF; i++) if ($i == "s,") s = $(i-1); printf "%.0f", b / s / 1e6 }'; }

measure() { # folder -> "write read"
    local dir=$1 bytes=$((mib << 20))
    local w r
    w=$(dd if=/dev/zero of="$dir/big" bs=1M count="$mib" conv=fsync 2>&1 | rate "$bytes")
    sync; echo 3 > /proc/sys/vm/drop_caches
    r=$(dd if="$dir/big" of=/dev/null bs=1M 2>&1 | rate "$bytes")
    rm -f "$dir/big"; sync
    echo "$w $r"
}

iops() { # folder rw -> IOPS of 4 KiB requests at queue depth 32
    fio --name=rand --directory="$1" --filename=fio.dat --size=256M --bs=4k --direct=1 \
        --ioengine=libaio --iodepth=32 --rw="$2" --runtime="$fio_seconds" --time_based \
        --output-format=json 2>/dev/null |
        python3 -c 'import json, sys; j = json.load(sys.stdin)["jobs"][0]; print(round(j["read"]["iops"] + j["write"]["iops"]))'
}

measure_random() { # folder -> "randwrite randread"
    local w r
    w=$(iops "$1" randwrite)
    r=$(iops "$1" randread)
    rm -f "$1/fio.dat"; sync
    echo "$w $r"
}

truncate -s "${img_mib}M" "$root/plain.img"
mkfs.ext4 -q -F "$root/plain.img"
plain_loop=$(losetup -f --show "$root/plain.img")
mkdir -p "$root/plain-mnt"
mount "$plain_loop" "$root/plain-mnt"
read -r pw pr < <(measure "$root/plain-mnt")
read -r prw prr < <(measure_random "$root/plain-mnt")
umount "$root/plain-mnt"; losetup -d "$plain_loop"; plain_loop=
rm -f "$root/plain.img"

row() { # label write read randwrite randread [ratios...]
    printf '%-34s %7s %7s %8s %8s' "$1" "$2" "$3" "$4" "$5"
    shift 5
    [ $# -gt 0 ] && printf ' %7.2f %7.2f %7.2f %7.2f' "$@"
    echo
}
ratio() { echo "$1 / $2" | bc -l; }
row "volume (ext4, ${mib} MiB file)" write read "4K wr/s" "4K rd/s"
printf '%-34s %7s %7s %8s %8s %7s %7s %7s %7s\n' "" "" "" "" "" "w" "r" "4K w" "4K r"
row "plain loop device" "$pw" "$pr" "$prw" "$prr"
IFS=, read -r -a case_list <<<"$cases"
for transport in $transports; do
start_daemon "$transport"
for case in "${case_list[@]}"; do
    set -- $case
    enc=$1 backend=$2
    vol="$root/$enc-$backend.vc"
    echo "bench" | "$bin/tcctl" create "$vol" --size "${img_mib}M" --encryption "$enc" \
        --filesystem ext4 --pim 1 --force --password-stdin >/dev/null
    mkdir -p "$root/mnt"
    backend_arg=(); [ "$backend" != default ] && backend_arg=(--backend "$backend")
    echo "bench" | "$bin/tcctl" mount "$vol" "$root/mnt" --pim 1 --password-stdin \
        "${backend_arg[@]}" >/dev/null
    read -r w r < <(measure "$root/mnt")
    read -r rw rr < <(measure_random "$root/mnt")
    "$bin/tcctl" dismount "$root/mnt" >/dev/null
    rm -f "$vol"
    row "$enc on $backend ($transport)" "$w" "$r" "$rw" "$rr" \
        "$(ratio "$w" "$pw")" "$(ratio "$r" "$pr")" "$(ratio "$rw" "$prw")" "$(ratio "$rr" "$prr")"
done
done
echo "write, read: MB/s = 10^6 bytes/s; 4K: IOPS; ratios against the plain loop device in this run."
