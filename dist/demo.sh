#!/usr/bin/env bash
# Builds tcd and tcctl, starts the daemon, and makes and mounts a first
# volume: a 64 MiB VeraCrypt container with ext4 inside, mounted on
# /tmp/tcd-demo/mnt. Everything it writes stays under /tmp/tcd-demo (the
# daemon's state too); it ends by saying how to stop. Run as root (FUSE,
# loop devices, mount).
#   TCD_DEMO_PASSWORD   the volume's password (default: "demo password")
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --workspace
bin="$PWD/target/release"
demo=/tmp/tcd-demo
mkdir -p "$demo/mnt"
export TCD_SOCKET="$demo/tcd.sock"
if ! "$bin/tcctl" list >/dev/null 2>&1; then
    "$bin/tcd" --socket "$TCD_SOCKET" --runtime-dir "$demo/run" \
        --backend-dir "$bin" --state-dir "$demo/state" \
        --system-favorites "$demo/system-favorites.toml" >"$demo/tcd.log" 2>&1 &
    echo $! >"$demo/tcd.pid"
    for _ in $(seq 50); do [ -S "$TCD_SOCKET" ] && break; sleep 0.1; done
fi
password="${TCD_DEMO_PASSWORD:-demo password}"
if [ ! -e "$demo/first.vc" ]; then
    echo "$password" | "$bin/tcctl" create "$demo/first.vc" --size 64M \
        --filesystem ext4 --password-stdin
fi
echo "$password" | "$bin/tcctl" mount "$demo/first.vc" "$demo/mnt" --password-stdin
"$bin/tcctl" list
echo
echo "The daemon's socket: $TCD_SOCKET (log: $demo/tcd.log). Try:"
echo "  export TCD_SOCKET=$TCD_SOCKET"
echo "  $bin/tcctl list --json"
echo "  $bin/tcctl dismount $demo/mnt"
echo "Stop the daemon (it dismounts what is still mounted):"
echo "  kill \$(cat $demo/tcd.pid)"
