#!/usr/bin/env bash
# Takes the README's screenshots: runs `kubectl crd tui --demo` in tmux, walks through the
# main screens with keys, captures each with its colours (capture-pane -e) and renders it
# to PNG with render.py. Usage: assets/screenshots/take.sh [path/to/kubectl-crd]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="${1:-$here/../../target/release/kubectl-crd}"
work="$(mktemp -d)"
sock="$work/tmux.sock"
trap 'tmux -S "$sock" kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
cols=132 rows=36

# One editor for every edit: the CEL workbench's values, an apply-as document, a status.
cat >"$work/editor.sh" <<'ED'
#!/bin/sh
if grep -q "CEL workbench" "$1"; then sed -i 's/^self: [0-9]*/self: 1/' "$1"
elif grep -q "Server-side apply" "$1"; then sed -i 's/^# manager: .*/# manager: ci-bot/; s/^  replicas: [0-9]*/  replicas: 7/' "$1"
else sed -i 's/phase: Stopped/phase: X/; s/phase: Running/phase: Stopped/; s/phase: X/phase: Running/' "$1"; fi
ED
chmod +x "$work/editor.sh"

t() { tmux -S "$sock" "$@"; }
keys() { for k in "$@"; do t send-keys -t shot "$k"; sleep 0.3; done; }
wait_for() {
  for _ in $(seq 1 100); do
    if t capture-pane -p -t shot | grep -qF -- "$1"; then return 0; fi
    sleep 0.1
  done
  echo "timed out waiting for: $1" >&2; t capture-pane -p -t shot >&2; exit 1
}
shot() {
  sleep 0.4
  t capture-pane -e -p -t shot >"$work/$1.ansi"
  python3 "$here/render.py" "$work/$1.ansi" "$here/$1.png" "$cols" "$rows"
  echo "wrote $here/$1.png"
}

# The demo served (so kubectl can change objects while the TUI watches), the TUI on it.
"$bin" --local="$work/data" demo >/dev/null
"$bin" serve --listen 127.0.0.1:0 --data-dir "$work/data" >"$work/serve.out" 2>/dev/null &
serve_pid=$!
# kubectl's discovery cache of this server only (loopback ports are reused).
export KUBECACHEDIR="$work/kube-cache"
trap 'kill $serve_pid 2>/dev/null || true; tmux -S "$sock" kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do grep -q "ready on" "$work/serve.out" && break; sleep 0.1; done
patch_widget() {
  KUBECONFIG="$work/data/kubeconfig" kubectl patch widgets.demo.example.com widget-001 --type=merge \
    --field-manager=autoscaler -p "{\"spec\":{\"replicas\":$1}}" >/dev/null
}
t new-session -d -s shot -x "$cols" -y "$rows" \
  "KUBE_EDITOR=$work/editor.sh $bin --local=$work/data tui 2>/dev/null; sleep 30"
wait_for "widgets.demo.example.com"
keys j; shot registrations
keys j i; wait_for "Names (spec"; shot detail-conflict
keys Escape; sleep 0.3; keys G i Tab j l j; wait_for "schema"; shot detail
keys Enter; wait_for "widgets(default)"; keys j Space Space j; shot resources
keys Escape; sleep 0.3; keys Escape; sleep 0.3
t send-keys -t shot -l ":db"; keys Enter; wait_for "databases("; keys 0; wait_for "databases(all)"; shot resources-all-namespaces
keys 1; sleep 0.3; t send-keys -t shot -l ":wd"; keys Enter; wait_for "widget-001"; keys Enter; wait_for "phase:"; shot resource
keys E; wait_for "saved the status"; shot resource-after-status-edit
keys s; wait_for "desired"; keys + +; shot scale
keys Escape; sleep 0.3; keys y; wait_for "apiVersion"; shot yaml
keys Escape; sleep 0.3; keys d; wait_for "Name:"; shot describe
keys Escape; sleep 0.3; keys M; wait_for "MANAGER"; shot field-owners
keys Escape; sleep 0.3; keys A; wait_for "apply as ci-bot"; shot apply-as
keys Escape; sleep 0.3; keys w; wait_for "ADDED"; patch_widget 4; wait_for "MODIFIED"; patch_widget 2; sleep 0.5
shot events
keys Escape; sleep 0.3; keys "?"; wait_for "help"; shot help
keys Escape; sleep 0.3; keys Escape; sleep 0.3; keys Escape; sleep 0.3
t send-keys -t shot -l ":crd"; keys Enter; wait_for "widgets.demo.example.com"
keys /; t send-keys -t shot -l "databases"; keys Enter; sleep 0.3
keys i; wait_for "Names (spec"; keys Tab j l j l j; wait_for "CEL"; shot schema-explorer
keys Escape; sleep 0.3; keys c; wait_for "rules]"; keys j j Enter; wait_for "FAILED"; shot cel-workbench
keys Escape; sleep 0.3; keys Escape; sleep 0.3
t send-keys -t shot -l ":db"; keys Enter; wait_for "databases("; keys 0; wait_for "postgres-01"
keys /; t send-keys -t shot -l "postgres-01"; keys Enter; sleep 0.3; keys j o; wait_for "policy-01"; shot owner-tree
keys Escape; sleep 0.3; keys Enter; wait_for "team-a/postgres-01"; keys t; wait_for "TYPE"
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
KUBECONFIG="$work/data/kubeconfig" kubectl -n team-a patch databases.demo.example.com postgres-01 \
  --subresource=status --type=merge -p "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\",\"reason\":\"Failover\",\"message\":\"the primary is being replaced\",\"lastTransitionTime\":\"$now\"}]}}" >/dev/null
wait_for "Failover"; shot conditions-timeline
keys Escape; sleep 0.3; keys q
