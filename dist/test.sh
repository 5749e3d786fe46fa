#!/usr/bin/env bash
# The whole test suite. The tests load the backend libraries the build
# makes and install the Debian package, so build the workspace and the
# package first (cargo-deb: `cargo install cargo-deb`), then test.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --workspace --all-targets
./dist/deb/build.sh
cargo test --workspace
