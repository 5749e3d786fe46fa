#!/usr/bin/env bash
# Builds the Debian packages (target/debian/tcd_*.deb, and the desktop
# application's target/debian/tcd-gtk_*.deb): release binaries,
# man pages and completions generated from the command-line definitions,
# then cargo-deb (`cargo install cargo-deb`).
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --workspace
rm -rf target/release/dist
mkdir -p target/release/dist
target/release/tcctl generate-dist target/release/dist
target/release/tcd --generate-man target/release/dist
gzip -9nf target/release/dist/*.1 target/release/dist/tcd.8
cargo deb -p tcd --no-build --no-strip
cargo deb -p tcd-gtk --no-build --no-strip
ls target/debian/tcd_*.deb target/debian/tcd-gtk_*.deb
