#!/usr/bin/env bash
# A soak run, as before a release: several mounted volumes under fio with
# verify, then a loop that SIGKILLs the daemon during fsync'ed writes and
# checks, after the next daemon has cleaned up, that every acknowledged
# record is there, that a read-only mount shows them too, and that fsck is
# clean. Prints a summary; exits non-zero if anything was lost or wrong.
# Run as root after `cargo build --release` (or set TCD_BIN).
#   TCD_SOAK_MINUTES  minutes of fio (default 4)
#   TCD_SOAK_VOLUMES  volumes under fio at once (default 3)
#   TCD_SOAK_KILLS    daemon kills in the second part (default 10)
#   TCD_BIN           folder with tcd, tcctl and the backends (default target/release)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${TCD_BIN:-$PWD/target/release}"
minutes="${TCD_SOAK_MINUTES:-4}"
volumes="${TCD_SOAK_VOLUMES:-3}"
kills="${TCD_SOAK_KILLS:-10}"
for tool in fio mkfs.ext4 fsck.ext4 python3; do
    command -v "$tool" >/dev/null || { echo "soak: $tool is missing" >&2; exit 2; }
done
[ -x "$bin/tcd" ] || { echo "soak: no $bin/tcd (cargo build --release, or set TCD_BIN)" >&2; exit 2; }

root=$(mktemp -d /tmp/tcd-soak.XXXXXX)
export TCD_SOCKET="$root/tcd.sock"
pw="soak words, twenty and more"
fails=0
daemon=
cleanup() {
    [ -n "${writer:-}" ] && kill "$writer" 2>/dev/null || true
    [ -n "$daemon" ] && "$bin/tcctl" dismount --all --force >/dev/null 2>&1 || true
    [ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null || true
    # Whatever is still mounted under the folder (after a failure).
    awk -v r="$root/" 'index($5, r) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
        while read -r m; do umount -l "$m" 2>/dev/null || true; done
    [ -n "${keep:-}" ] && { echo "kept $root (daemon log: $root/tcd.log)"; return; }
    rm -rf "$root"
}
trap cleanup EXIT

start_daemon() {
    rm -f "$TCD_SOCKET"
    "$bin/tcd" --socket "$TCD_SOCKET" --runtime-dir "$root/run" --backend-dir "$bin" \
        >>"$root/tcd.log" 2>&1 &
    daemon=$!
    for _ in $(seq 100); do [ -S "$TCD_SOCKET" ] && return; sleep 0.1; done
    echo "soak: the daemon did not start" >&2; tail "$root/tcd.log" >&2; exit 1
}
status_kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
tcctl() { "$bin/tcctl" "$@"; }
open_args=(--pim 1 --hash sha512 --password-stdin)
problem() { echo "  PROBLEM: $*"; fails=$((fails + 1)); keep=1; }
# fsck -n of the volume's filesystem, with nothing else mounted.
check_fsck() {
    local dev
    echo "$pw" | tcctl mount "$1" --filesystem none "${open_args[@]}" >/dev/null ||
        { problem "$2: cannot attach it for fsck"; return 1; }
    dev=$(tcctl list --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["volumes"][0]["device"])')
    fsck.ext4 -n -f "$dev" >"$root/fsck.out" 2>&1 || { problem "$2: fsck: $(tail -2 "$root/fsck.out")"; tcctl dismount "$dev" >/dev/null; return 1; }
    tcctl dismount "$dev" >/dev/null || problem "$2: dismount after fsck failed"
}
# Mounts (extra arguments passed on) or records a problem.
mount_vol() {
    local out
    out=$(echo "$pw" | tcctl mount "$@" "${open_args[@]}" 2>&1 >/dev/null) ||
        { problem "tcctl mount $*: $out"; return 1; }
}

start_daemon
fresh_rss=$(status_kib "$daemon" VmRSS)
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')
flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -Ex 'avx512f|avx2|aes|vaes|sha_ni|gfni' | sort | tr '\n' ' ')
echo "tcd soak: $volumes volumes x $minutes min of fio, $kills daemon kills"
echo "cpu: $cpu ($(nproc) threads; $flags)"

# Part 1: fio with verify on several volumes at once.
fio_jobs=()
for i in $(seq "$volumes"); do
    vol="$root/v$i.hc"
    echo "$pw" | tcctl create "$vol" --size 320M --filesystem ext4 "${open_args[@]}" >/dev/null
    mkdir -p "$root/mnt$i"
    mount_vol "$vol" "$root/mnt$i"
    fio --name="v$i" --directory="$root/mnt$i" --size=96M --bs=4k --rw=randwrite \
        --ioengine=psync --iodepth=1 --numjobs=2 --fsync=32 --verify=crc32c \
        --verify_backlog=1024 --do_verify=1 --verify_fatal=0 --verify_state_save=0 --time_based --runtime="$((minutes * 60))" \
        --output-format=json --output="$root/fio$i.json" >/dev/null 2>"$root/fio$i.err" &
    fio_jobs+=($!)
done
for job in "${fio_jobs[@]}"; do wait "$job" || true; done
loaded_rss=$(status_kib "$daemon" VmRSS)
summary=$(python3 - "$root" "$volumes" <<'EOF'
import json, sys
root, n = sys.argv[1], int(sys.argv[2])
reads = writes = errors = 0
for i in range(1, n + 1):
    try:
        d = json.load(open(f"{root}/fio{i}.json"))
    except Exception as e:
        print(f"fio {i}: no result ({e})"); errors += 1; continue
    for j in d["jobs"]:
        reads += j["read"]["io_bytes"]; writes += j["write"]["io_bytes"]
        errors += j.get("error", 0) + j.get("total_err", 0)
print(f"{reads / 2**20:.0f} {writes / 2**20:.0f} {errors}")
EOF
)
read -r read_mib write_mib fio_errors <<<"$(tail -1 <<<"$summary")"
grep -qi "verify" "$root"/fio*.err && problem "fio reported verify failures: $(grep -hi verify "$root"/fio*.err | head -3)"
[ "$fio_errors" = 0 ] || problem "fio reported $fio_errors errors"
unhealthy=$(tcctl list --json | python3 -c '
import json, sys
print(sum(1 for v in json.load(sys.stdin)["volumes"] if v["health"] != "ok"))')
[ "$unhealthy" = 0 ] || problem "$unhealthy volumes not healthy after fio"
for i in $(seq "$volumes"); do
    tcctl dismount "$root/mnt$i" >/dev/null || problem "dismount of volume $i failed"
done
for i in $(seq "$volumes"); do
    check_fsck "$root/v$i.hc" "volume $i"
    rm -f "$root/v$i.hc"
done
idle_rss=$(status_kib "$daemon" VmRSS)

# Part 2: SIGKILL the daemon during fsync'ed writes, again and again.
vol="$root/k.hc"
echo "$pw" | tcctl create "$vol" --size 64M --filesystem ext4 "${open_args[@]}" >/dev/null
mkdir -p "$root/kmnt"
acked_total=0 found_total=0 ro_short=0 fsck_bad=0
for k in $(seq "$kills"); do
    mount_vol "$vol" "$root/kmnt" || break
    # Each line is printed only after its record was fsync'ed.
    python3 -u -c '
import os, sys
k = sys.argv[2]
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
pad = chr(120) * 200
n = 0
while True:
    n += 1
    os.write(fd, f"{k}:{n}:{pad}\n".encode())
    os.fsync(fd)
    print(n)
' "$root/kmnt/records" "$k" >"$root/acked" 2>/dev/null &
    writer=$!
    sleep "$(python3 -c 'import random; print(round(random.uniform(1, 3), 2))')"
    kill -9 "$daemon"; wait "$daemon" 2>/dev/null || true
    kill "$writer" 2>/dev/null; wait "$writer" 2>/dev/null || true; writer=
    acked=$(tail -1 "$root/acked" 2>/dev/null || true)
    acked=${acked:-0}
    start_daemon # cleans up what the killed one left
    # Read-only first: every acknowledged record must be visible, and the
    # container must not change.
    before=$(sha256sum "$vol" | cut -d' ' -f1)
    if mount_vol "$vol" "$root/kmnt" --readonly; then
        ro=$(grep -c "^$k:" "$root/kmnt/records" 2>/dev/null || true)
        tcctl dismount "$root/kmnt" >/dev/null || problem "kill $k: read-only dismount failed"
        [ "${ro:-0}" -ge "$acked" ] || { ro_short=$((ro_short + 1)); problem "kill $k: the read-only mount shows ${ro:-0} of $acked acknowledged records"; }
    fi
    [ "$(sha256sum "$vol" | cut -d' ' -f1)" = "$before" ] || problem "kill $k: a read-only mount changed the container"
    mount_vol "$vol" "$root/kmnt" || break
    found=$(grep -c "^$k:" "$root/kmnt/records" 2>/dev/null || true)
    found=${found:-0}
    tcctl dismount "$root/kmnt" >/dev/null || problem "kill $k: dismount failed"
    [ "$found" -ge "$acked" ] || problem "kill $k: $found of $acked acknowledged records"
    acked_total=$((acked_total + acked))
    found_total=$((found_total + (found < acked ? found : acked)))
    check_fsck "$vol" "kill $k" || fsck_bad=$((fsck_bad + 1))
done
end_rss=$(status_kib "$daemon" VmRSS)
end_lck=$(status_kib "$daemon" VmLck)

echo
echo "fio:   ${read_mib} MiB read, ${write_mib} MiB written with verify on $volumes volumes; errors: $fio_errors; unhealthy after: $unhealthy"
echo "kills: $kills; acknowledged records intact: $found_total of $acked_total; read-only mounts short of records: $ro_short; fsck not clean: $fsck_bad"
echo "daemon memory (VmRSS): fresh $((fresh_rss / 1024)) MiB, under fio $((loaded_rss / 1024)) MiB, idle after $((idle_rss / 1024)) MiB; after the kill loop (new daemon) $((end_rss / 1024)) MiB, locked $((end_lck / 1024)) MiB"
if [ "$fails" = 0 ]; then echo "result: no problem"; else echo "result: $fails problems"; exit 1; fi
