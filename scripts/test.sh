#!/usr/bin/env bash
# Runs every test: the README's test command, and the one CI runs after fmt and clippy.
# On a fresh machine with only Rust it first installs what the tests need: cargo-nextest
# (with cargo), and tmux, kubectl, etcd and tzdata (with apt, as root) for the terminal UI,
# kubectl, etcd-backend and CEL time-zone tests. Arguments go to `cargo nextest run`, e.g.
# a filter by module path:
#
#   scripts/test.sh                            # everything (and the fidelity and engine tests again on etcd)
#   scripts/test.sh -E 'test(/^kubectl_/)'     # the tests of one area
#   scripts/test.sh tui_e2e::                  # or by name
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

apt_packages=()
# The real kubectl runs the plugin in the tests; Debian's kubernetes-client is the fallback.
command -v kubectl >/dev/null 2>&1 || apt_packages+=(kubernetes-client)
# tmux drives the terminal UI in its end-to-end tests.
command -v tmux >/dev/null 2>&1 || apt_packages+=(tmux)
# The etcd backend's tests start a real etcd on loopback (and fail without one).
command -v etcd >/dev/null 2>&1 || [ -x /usr/bin/etcd ] || apt_packages+=(etcd-server)
# CEL reads time zones from the system's zoneinfo, as kube-apiserver's Go does.
[ -e /usr/share/zoneinfo/America/New_York ] || apt_packages+=(tzdata)
if [ ${#apt_packages[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing: ${apt_packages[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${apt_packages[@]}" >/dev/null
  else
    echo "error: the tests need ${apt_packages[*]}; install them (as root this script does it with apt)" >&2
    exit 1
  fi
fi
# nextest runs each test in a process of its own, in parallel, with one summary.
if ! cargo nextest --version >/dev/null 2>&1; then
  echo "installing: cargo-nextest"
  cargo install --locked cargo-nextest
fi

# The fidelity tests compare with the recordings in ../shared/reference. A clone of a
# local checkout (git clone /work/main /tmp/x) finds them beside the checkout it came from.
if [ ! -d ../shared/reference/kube-apiserver-1.32 ] && [ -z "${KUBECTL_CRD_REFERENCE_DIR:-}" ]; then
  origin=$(git remote get-url origin 2>/dev/null || true)
  if [ -n "$origin" ] && [ -d "$origin/../shared/reference/kube-apiserver-1.32" ]; then
    export KUBECTL_CRD_REFERENCE_DIR
    KUBECTL_CRD_REFERENCE_DIR=$(cd "$origin/../shared/reference/kube-apiserver-1.32" && pwd)
    echo "reference recordings: $KUBECTL_CRD_REFERENCE_DIR (beside the clone's origin)"
  else
    echo "error: ../shared/reference/kube-apiserver-1.32 is missing (set KUBECTL_CRD_REFERENCE_DIR)" >&2
    exit 1
  fi
fi

if [ $# -gt 0 ]; then
  exec cargo nextest run --locked --no-fail-fast "$@"
fi
# Everything, the documentation's examples, then the differential corpus, the kubectl tests and the in-process engine
# suites again with the engine's store on etcd (each test's engine on an etcd of its own):
# the same answers on both backends. The second pass takes about 4 minutes (the engine
# suites about 1.5 of them).
status=0
cargo nextest run --locked --no-fail-fast || status=$?
# nextest runs no documentation examples; cargo does, in seconds.
echo "== the documentation's examples"
cargo test --locked --doc --workspace || status=$?
echo "== again on etcd: the differential corpus, the kubectl tests and the engine suites"
KUBECTL_CRD_TEST_STORAGE=etcd cargo nextest run --locked --no-fail-fast -p kubectl-crd --test it \
  -E 'test(/^differential::|^kubectl_|^engine_/)' || status=$?
exit "$status"
