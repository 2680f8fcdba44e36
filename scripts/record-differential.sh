#!/usr/bin/env bash
# Records the differential goldens from a real kube-apiserver 1.32 (the oracle kit in
# ../shared/oracle, or ORACLE_DIR): starts a fresh oracle in a temporary directory, runs the
# scenarios named on the command line (all without arguments) against it, writes
# tests/it/differential/goldens/<scenario>.json, and stops the oracle.
#
#   scripts/record-differential.sh            # every scenario
#   scripts/record-differential.sh lists crud # some
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
oracle=${ORACLE_DIR:-../shared/oracle}
if [ ! -x "$oracle/kube-apiserver" ]; then
  echo "error: no oracle at $oracle (set ORACLE_DIR to the kit holding kube-apiserver and start.sh)" >&2
  exit 2
fi
oracle=$(cd "$oracle" && pwd)
dir=$(mktemp -d /tmp/differential-oracle.XXXXXX)
stop() {
  "$oracle/stop.sh" "$dir" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap stop EXIT
"$oracle/start.sh" "$dir"
scenarios=$(IFS=,; echo "$*")
SECONDS=0
DIFFERENTIAL_ORACLE="$dir/kubeconfig" DIFFERENTIAL_SCENARIOS="$scenarios" \
  cargo test --locked --test it -- --ignored --exact differential::record --nocapture
echo "recorded in ${SECONDS} s (after the oracle started)"
