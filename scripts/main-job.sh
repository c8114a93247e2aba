#!/usr/bin/env bash
# README's first command: set up, build, and run the main job (`ranklab run`).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Builds only the command: the tests and benchmarks are test.sh's (a fresh machine spent
# most of ~9 minutes compiling them before a job of a few milliseconds).
BUILD_TARGETS="${BUILD_TARGETS:-ranklab}" source "$ROOT/scripts/setup.sh"
cd "$ROOT"
exec "$BUILD_DIR/cli/ranklab" run "$@"
