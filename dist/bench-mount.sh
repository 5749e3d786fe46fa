#!/usr/bin/env bash
# Mounted-volume throughput against a plain loop-mounted ext4 image, side
# by side in one run, everything in RAM (tmpfs): sequential overwrite of a
# large file (dd, fsync at the end) and a cold read of it (caches dropped).
# For AES on the AES-NI backend, AES on the software backend, and the
# AES-Twofish-Serpent cascade. Run as root after `cargo build --release`.
#   TCD_BENCH_MIB   file size in MiB (default 1024)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$PWD/target/release"
mib="${TCD_BENCH_MIB:-1024}"
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

"$bin/tcd" --socket "$TCD_SOCKET" --runtime-dir "$root/run" --backend-dir "$bin" \
    >"$root/tcd.log" 2>&1 &
daemon=$!
for _ in $(seq 50); do [ -S "$TCD_SOCKET" ] && break; sleep 0.1; done

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

truncate -s "${img_mib}M" "$root/plain.img"
mkfs.ext4 -q -F "$root/plain.img"
plain_loop=$(losetup -f --show "$root/plain.img")
mkdir -p "$root/plain-mnt"
mount "$plain_loop" "$root/plain-mnt"
read -r pw pr < <(measure "$root/plain-mnt")
umount "$root/plain-mnt"; losetup -d "$plain_loop"; plain_loop=
rm -f "$root/plain.img"

printf '%-34s %9s %9s %8s %8s\n' "volume (ext4, ${mib} MiB file)" "write" "read" "w ratio" "r ratio"
printf '%-34s %9s %9s\n' "plain loop device" "$pw" "$pr"
for case in "AES aesni" "AES soft" "AES-Twofish-Serpent default"; do
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
    "$bin/tcctl" dismount "$root/mnt" >/dev/null
    rm -f "$vol"
    printf '%-34s %9s %9s %8.2f %8.2f\n' "$enc on $backend" "$w" "$r" \
        "$(echo "$w / $pw" | bc -l)" "$(echo "$r / $pr" | bc -l)"
done
echo "MB/s = 10^6 bytes/s; ratios against the plain loop device in this run."
