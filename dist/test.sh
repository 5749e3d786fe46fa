#!/usr/bin/env bash
# The whole test suite. The tests load the backend libraries the build
# makes, so build the workspace first, then test it.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --workspace --all-targets
cargo test --workspace
