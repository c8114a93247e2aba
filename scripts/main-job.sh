#!/usr/bin/env bash
# README's first command: set up, build, and run the main job (`ranklab run`).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/setup.sh"
cd "$ROOT"
exec "$BUILD_DIR/cli/ranklab" run "$@"
