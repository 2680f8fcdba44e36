#!/usr/bin/env bash
set -u
# Usage: record.sh ORACLE_KIT WORK_DIR (e.g. ../shared/oracle /tmp/outage); writes WORK_DIR/answers.json.
KIT=${1:?oracle kit}; D=${2:?work dir}/oracle; HERE=$(cd "$(dirname "$0")" && pwd)
rm -rf $D; $KIT/start.sh $D || exit 1
K="kubectl --kubeconfig $D/kubeconfig"
cat <<Y | $K apply -f -
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.etcd.example.com}
spec:
  group: etcd.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
Y
$K wait --for=condition=Established crd/widgets.etcd.example.com --timeout=30s
echo '{"apiVersion":"etcd.example.com/v1","kind":"Widget","metadata":{"name":"w1","namespace":"default"},"spec":{"size":1}}' | $K apply -f -
sleep 2
ETCD_PID=$(awk '$1=="etcd"{print $2}' $D/pids)
kill -KILL $ETCD_PID
sleep 1
python3 "$HERE/record.py" "$(cat $D/server)" "$(cat $D/token)" $D/ca.crt "$2/answers.json"
$KIT/stop.sh $D
