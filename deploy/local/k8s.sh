#!/usr/bin/env bash
# A real Kubernetes control plane on 127.0.0.1, without Docker: etcd, kube-apiserver (RBAC, token
# auth), kube-controller-manager, kube-scheduler, a kwok fake node and the Kubeflow Spark operator
# (controller only, its CRDs from the same module version), all built from the Go module proxy.
# Usage: k8s.sh install|start|stop|status|wait|up|env
#   install  builds what is missing into $ICEPACK_CACHE/k8s/bin (cold: ~20 min on two cores; the
#            binaries are named by version, so a version bump builds anew and nothing else does)
#   env      prints `export KUBECONFIG=…` for the admin kubeconfig (eval it)
# Nothing runs the pods: kwok marks non-driver pods Running; Spark driver pods are left Pending
# for the kubelet stand-in of the tests (test/src/k8s-real/), which runs them with a local Spark.
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

k8s_cache="$ICEPACK_CACHE/k8s"
bin="$k8s_cache/bin"
manifests="$k8s_cache/manifests/spark-operator-$ICEPACK_SPARK_OPERATOR_VERSION"
k8s_run="$ICEPACK_RUN/k8s"
pki="$k8s_run/pki"
admin_kubeconfig="$k8s_run/admin.kubeconfig"
api_url="https://127.0.0.1:$ICEPACK_K8S_API_PORT"
# The one fake node; the kubelet stand-in runs the Spark drivers scheduled on it.
node_name="${ICEPACK_K8S_NODE:-icepack-kwok-0}"
# The builds run beside other work (./dev test starts them early): keep them polite.
build_nice="${ICEPACK_K8S_BUILD_NICE:-10}"
staging_version="v0.${ICEPACK_K8S_VERSION#v1.}" # v1.37.2 -> v0.37.2 (k8s.io/api, client-go, …)

# Go builds share one cache in $ICEPACK_CACHE (the module proxy is the only source).
export GOPATH="$ICEPACK_CACHE/go" GOMODCACHE="$ICEPACK_CACHE/go/mod" GOCACHE="$ICEPACK_CACHE/go/build"
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}" GOFLAGS="${GOFLAGS:--buildvcs=false}"

# name:module:version — each binary, the module whose version it is built from.
binaries=(
  "etcd:go.etcd.io/etcd/server/v3:$ICEPACK_ETCD_VERSION"
  "kube-apiserver:k8s.io/kubernetes:$ICEPACK_K8S_VERSION"
  "kube-controller-manager:k8s.io/kubernetes:$ICEPACK_K8S_VERSION"
  "kube-scheduler:k8s.io/kubernetes:$ICEPACK_K8S_VERSION"
  "kubectl:k8s.io/kubernetes:$ICEPACK_K8S_VERSION"
  "kwok:sigs.k8s.io/kwok:$ICEPACK_KWOK_VERSION"
  "spark-operator:github.com/kubeflow/spark-operator/v2:$ICEPACK_SPARK_OPERATOR_VERSION"
)
# Start order; stop goes the other way.
components=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok spark-operator)

version_of() { # name
  local entry
  for entry in "${binaries[@]}"; do [[ "${entry%%:*}" == "$1" ]] && { echo "${entry##*:}"; return; }; done
  die "unknown binary $1"
}
exe() { echo "$bin/$1-$(version_of "$1")"; }
kubectl_admin() { "$(exe kubectl)" --kubeconfig="$admin_kubeconfig" "$@"; }
pidfile_of() { echo "$k8s_run/$1.pid"; }
logfile_of() { echo "$ICEPACK_LOGS/k8s-$1.log"; }

# adopt NAME MODULE VERSION: a binary built as $bin/NAME (without a version in its name, e.g. by
# the worked recipe in the shared tools) is kept when its build info names MODULE at VERSION.
adopt() {
  local name="$1" module="$2" version="$3"
  [[ -x "$bin/$name" ]] || return 1
  go version -m "$bin/$name" 2>/dev/null | awk '$1 == "mod" || $1 == "dep" { print $2 "@" $3 }' \
    | grep -qxF "$module@$version" || return 1
  ln -f "$bin/$name" "$bin/$name-$version"
  log "k8s: reusing $bin/$name ($module $version)"
}

missing_binaries() {
  local entry name rest module version
  for entry in "${binaries[@]}"; do
    IFS=: read -r name module version <<<"$entry"
    [[ -x "$bin/$name-$version" ]] || adopt "$name" "$module" "$version" || echo "$name"
  done
}

# wrapper_module DIR MODULE VERSION [REPLACE_LINES]: `go install module@version` is refused for
# modules whose go.mod has replace directives (etcd, kubernetes, the operator): build them from a
# throw-away main module that requires them.
wrapper_module() {
  local dir="$1" module="$2" version="$3" replaces="${4:-}" pkgs
  shift 4
  mkdir -p "$dir"
  printf 'module local/build\n\ngo 1.26.0\n\nrequire %s %s\n\n%s\n' "$module" "$version" "$replaces" >"$dir/go.mod"
  { printf '//go:build tools\n\npackage tools\n\nimport (\n'
    for pkgs in "$@"; do printf '\t_ "%s"\n' "$pkgs"; done
    printf ')\n'; } >"$dir/tools.go"
  (cd "$dir" && timeout "$ICEPACK_DOWNLOAD_TIMEOUT" go mod tidy >&2) || die "go mod tidy failed in $dir (module proxy?)"
}

go_build() { # dir output package [ldflags]
  local t0=$SECONDS
  (cd "$1" && nice -n "$build_nice" go build -trimpath -ldflags "-s -w ${4:-}" -o "$2.tmp" "$3" >&2) \
    || die "go build of $3 failed"
  mv "$2.tmp" "$2"
  log "k8s: built $(basename "$2") in $((SECONDS - t0))s"
}

build_one() {
  local name="$1" version out src="$k8s_cache/src"
  version="$(version_of "$name")"
  out="$bin/$name-$version"
  [[ -x "$out" ]] && return 0
  case "$name" in
    etcd)
      wrapper_module "$src/etcd-$version" go.etcd.io/etcd/server/v3 "$version" "" go.etcd.io/etcd/server/v3
      go_build "$src/etcd-$version" "$out" go.etcd.io/etcd/server/v3 ;;
    kube-* | kubectl)
      local kmod dir="$src/k8s-$version" minor ld="" kv
      timeout "$ICEPACK_DOWNLOAD_TIMEOUT" go mod download "k8s.io/kubernetes@$version" >&2 || die "go mod download k8s.io/kubernetes@$version failed"
      kmod="$GOMODCACHE/k8s.io/kubernetes@$version/go.mod"
      # Every staging module (v0.0.0 in kubernetes' go.mod) is published as the matching v0.X.Y tag.
      [[ -f "$dir/go.sum" ]] || wrapper_module "$dir" k8s.io/kubernetes "$version" \
        "$(printf 'replace (\n'; grep -E '^\s+k8s.io/[a-z-]+ v0\.0\.0$' "$kmod" \
          | awk -v v="$staging_version" '{ printf "\t%s => %s %s\n", $1, $1, v }'; printf ')')" \
        k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
        k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl
      minor="${version#v1.}"; minor="${minor%%.*}"
      for kv in "gitVersion=$version" gitMajor=1 "gitMinor=$minor" gitTreeState=clean; do
        ld="$ld -X k8s.io/component-base/version.$kv"
      done
      go_build "$dir" "$out" "k8s.io/kubernetes/cmd/$name" "$ld" ;;
    kwok)
      # No replace directives: a plain go install.
      local t0=$SECONDS tmp
      tmp="$(mktemp -d)"
      GOBIN="$tmp" nice -n "$build_nice" go install -trimpath -ldflags '-s -w' "sigs.k8s.io/kwok/cmd/kwok@$version" >&2 \
        || die "go install sigs.k8s.io/kwok/cmd/kwok@$version failed"
      mv "$tmp/kwok" "$out" && rmdir "$tmp"
      log "k8s: built kwok in $((SECONDS - t0))s" ;;
    spark-operator)
      local m dir="$src/spark-operator-$version"
      m="$(operator_module)"
      wrapper_module "$dir" github.com/kubeflow/spark-operator/v2 "$version" \
        "$(sed -n '/^replace (/,/^)/p' "$m/go.mod")" github.com/kubeflow/spark-operator/v2/cmd/operator
      go_build "$dir" "$out" github.com/kubeflow/spark-operator/v2/cmd/operator ;;
  esac
}

# operator_module: the downloaded module (its CRDs and go.mod). `go list -m -versions` is refused
# for it by the proxy, but the exact version downloads.
operator_module() {
  timeout "$ICEPACK_DOWNLOAD_TIMEOUT" go mod download "github.com/kubeflow/spark-operator/v2@$ICEPACK_SPARK_OPERATOR_VERSION" >&2 \
    || die "go mod download of the Spark operator $ICEPACK_SPARK_OPERATOR_VERSION failed"
  echo "$GOMODCACHE/github.com/kubeflow/spark-operator/v2@$ICEPACK_SPARK_OPERATOR_VERSION"
}

cmd_install() {
  local todo=() name t0=$SECONDS
  mapfile -t todo < <(missing_binaries)
  if [[ ${#todo[@]} -eq 0 && -f "$manifests/.complete" ]]; then return 0; fi
  command -v go >/dev/null || die "Go is required to build the Kubernetes control plane (from the Go module proxy)"
  command -v jq >/dev/null || die "jq is required (the fake spark-submit of the Spark operator uses it)"
  lock "$ICEPACK_CACHE/.k8s-build.lock"
  mkdir -p "$bin"
  mapfile -t todo < <(missing_binaries)
  if [[ ${#todo[@]} -gt 0 ]]; then
    log "k8s: building ${todo[*]} with $(go version | cut -d' ' -f3) (cold: ~20 min on two cores)"
    for name in "${todo[@]}"; do build_one "$name"; done
  fi
  if [[ ! -f "$manifests/.complete" ]]; then
    local m
    m="$(operator_module)"
    mkdir -p "$manifests"
    install -m 644 "$m"/charts/spark-operator-chart/crds/*.yaml "$manifests/"
    touch "$manifests/.complete"
  fi
  log "k8s: installed in $((SECONDS - t0))s ($bin)"
}

gen_pki() {
  [[ -f "$pki/tokens.csv" ]] && return 0
  command -v openssl >/dev/null || die "openssl is required (certificates of the local API server)"
  mkdir -p "$pki"
  (
    cd "$pki"
    umask 077
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=icepack-local-ca -keyout ca.key -out ca.crt 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj /CN=kube-apiserver -keyout apiserver.key -out apiserver.csr 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\nextendedKeyUsage=serverAuth\n' >san.ext
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -extfile san.ext -out apiserver.crt 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    # Static tokens (--token-auth-file: token,user,uid,"groups"), one per component so the API
    # server's logs tell them apart. The components are cluster admins, as on a kubeadm cluster's
    # control-plane node; what Icepack's services may do is tested with ServiceAccount tokens.
    local who token
    for who in admin kube-controller-manager kube-scheduler kwok spark-operator; do
      token="$(openssl rand -hex 24)"
      echo "$token" >"$who.token"
      printf '%s,%s,%s-uid,"system:masters"\n' "$token" "$who" "$who" >>tokens.csv.tmp
    done
    mv tokens.csv.tmp tokens.csv
  ) || die "could not create the certificates and tokens in $pki"
}

write_kubeconfig() { # file token-file (mode 600: it holds the token); replaced whole, by a rename
  (
    umask 077
    cat >"$1.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: icepack-local
  cluster:
    server: $api_url
    certificate-authority: $pki/ca.crt
users:
- name: $(basename "$2" .token)
  user:
    token: $(cat "$2")
contexts:
- name: icepack-local
  context: {cluster: icepack-local, user: $(basename "$2" .token), namespace: default}
current-context: icepack-local
EOF
    mv "$1.tmp" "$1"
  )
}

api_ready() {
  curl -fsS --max-time 2 --cacert "$pki/ca.crt" -H "Authorization: Bearer $(cat "$pki/admin.token")" "$api_url/readyz" >/dev/null 2>&1
}
operator_ready() { curl -fsS --max-time 2 "http://127.0.0.1:$ICEPACK_SPARK_OPERATOR_PORT/readyz" >/dev/null 2>&1; }
node_ready() {
  [[ "$(kubectl_admin get node "$node_name" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" == True ]]
}
crds_established() {
  local crd
  for crd in sparkapplications scheduledsparkapplications sparkconnects; do
    [[ "$(kubectl_admin get crd "$crd.sparkoperator.k8s.io" -o jsonpath='{.status.conditions[?(@.type=="Established")].status}' 2>/dev/null)" == True ]] || return 1
  done
}

# start_component NAME PORT... -- COMMAND...: reuses a running one; refuses a port taken by another.
start_component() {
  local name="$1" pidfile port ports=()
  shift
  while [[ "$1" != -- ]]; do ports+=("$1"); shift; done
  shift
  pidfile="$(pidfile_of "$name")"
  if pid_alive "$pidfile"; then return 0; fi
  for port in "${ports[@]}"; do
    port_open "$port" && die "port $port (for $name) is taken by another process; stop it or change the port (deploy/local/lib.sh)"
  done
  log "k8s: starting $name (log: $(logfile_of "$name"))"
  daemonize "$pidfile" "$(logfile_of "$name")" "$@"
}

# wait_until WHAT SECONDS COMPONENT CHECK...: like wait_for, but fails at once when COMPONENT exits.
wait_until() {
  local what="$1" secs="$2" component="$3" i
  shift 3
  for ((i = 0; i < secs * 5; i++)); do
    "$@" && return 0
    pid_alive "$(pidfile_of "$component")" || die "$component exited during start-up (log: $(logfile_of "$component"))"
    sleep 0.2
  done
  die "$what not ready after ${secs}s (log: $(logfile_of "$component"))"
}

# kwok's "fast" stages (node ready at once; pods Running at once; Job pods completed; deleted pods
# removed) with one change: Spark driver pods are left alone, so that only the kubelet stand-in
# moves them (Running, then Succeeded or Failed with the job's real exit code).
write_kwok_stages() {
  local s="$GOMODCACHE/sigs.k8s.io/kwok@$ICEPACK_KWOK_VERSION/kustomize/stage"
  [[ -d "$s" ]] || timeout "$ICEPACK_DOWNLOAD_TIMEOUT" go mod download "sigs.k8s.io/kwok@$ICEPACK_KWOK_VERSION" >&2 \
    || die "go mod download sigs.k8s.io/kwok@$ICEPACK_KWOK_VERSION failed"
  {
    cat "$s/node/fast/node-initialize.yaml"
    echo '---'
    sed '/^    matchExpressions:$/a\    - key: '"'"'.metadata.labels["spark-role"]'"'"'\n      operator: '"'"'NotIn'"'"'\n      values:\n      - '"'"'driver'"'"'' \
      "$s/pod/fast/pod-ready.yaml"
    echo '---'
    cat "$s/pod/fast/pod-complete.yaml"
    echo '---'
    cat "$s/pod/fast/pod-delete.yaml"
  } >"$k8s_run/kwok-stages.yaml"
  grep -q 'spark-role' "$k8s_run/kwok-stages.yaml" || die "could not gate kwok's pod-ready stage (its layout changed?)"
}

ensure_node() {
  kubectl_admin get node "$node_name" >/dev/null 2>&1 || kubectl_admin create -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $node_name
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: $node_name, type: kwok}
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110"}
  capacity: {cpu: "32", memory: 256Gi, pods: "110"}
EOF
  wait_until "node $node_name" 60 kwok node_ready
  # New nodes carry node.kubernetes.io/not-ready:NoSchedule until the node-lifecycle controller
  # (not run: it would evict pods whenever kwok's leases lag) lifts it: lift it here.
  kubectl_admin taint nodes "$node_name" node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true
}

cmd_start() {
  cmd_install
  command -v curl >/dev/null || die "curl is required"
  lock "$ICEPACK_RUN/.k8s.lock"
  mkdir -p "$k8s_run"
  local api_pid="$(pidfile_of kube-apiserver)"
  if pid_alive "$api_pid"; then
    instance_running k8s "$api_pid" "$ICEPACK_K8S_API_PORT"
  fi
  # Running and healthy: nothing is rewritten. Test files that run two at a time each start it,
  # and the second must not replace the kubeconfigs, the CRDs or the operator's spark-submit
  # while the first uses them.
  if cmd_status >/dev/null 2>&1; then return 0; fi
  gen_pki
  local who
  for who in admin kube-controller-manager kube-scheduler kwok spark-operator; do
    write_kubeconfig "$k8s_run/$who.kubeconfig" "$pki/$who.token"
  done

  start_component etcd "$ICEPACK_ETCD_PORT" "$ICEPACK_ETCD_PEER_PORT" -- "$(exe etcd)" --name=icepack \
    --data-dir="$k8s_run/etcd" \
    --listen-client-urls="http://127.0.0.1:$ICEPACK_ETCD_PORT" --advertise-client-urls="http://127.0.0.1:$ICEPACK_ETCD_PORT" \
    --listen-peer-urls="http://127.0.0.1:$ICEPACK_ETCD_PEER_PORT" --initial-advertise-peer-urls="http://127.0.0.1:$ICEPACK_ETCD_PEER_PORT" \
    --initial-cluster="icepack=http://127.0.0.1:$ICEPACK_ETCD_PEER_PORT" \
    --unsafe-no-fsync --quota-backend-bytes=$((2 * 1024 * 1024 * 1024)) --log-level=warn
  wait_until etcd 30 etcd curl -fsS --max-time 2 "http://127.0.0.1:$ICEPACK_ETCD_PORT/health" -o /dev/null

  # --endpoint-reconciler-type=none: with a loopback advertise address the default reconciler
  # refuses to start. Default admission plugins (NamespaceLifecycle, LimitRanger, ServiceAccount,
  # ResourceQuota, PodSecurity, …) are all on.
  record_port "$api_pid" "$ICEPACK_K8S_API_PORT"
  start_component kube-apiserver "$ICEPACK_K8S_API_PORT" -- "$(exe kube-apiserver)" \
    --etcd-servers="http://127.0.0.1:$ICEPACK_ETCD_PORT" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$ICEPACK_K8S_API_PORT" \
    --endpoint-reconciler-type=none \
    --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
    --client-ca-file="$pki/ca.crt" --token-auth-file="$pki/tokens.csv" \
    --authorization-mode=RBAC \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
    --service-cluster-ip-range=10.0.0.0/24 --allow-privileged=true --profiling=false
  wait_until "kube-apiserver on $api_url" 90 kube-apiserver api_ready

  # namespace (deletion), serviceaccount ("default" accounts), serviceaccount-token, resourcequota
  # (status.used), garbage-collector (ownerReferences), and what Deployments/Jobs need.
  start_component kube-controller-manager -- "$(exe kube-controller-manager)" \
    --kubeconfig="$k8s_run/kube-controller-manager.kubeconfig" \
    --authentication-kubeconfig="$k8s_run/kube-controller-manager.kubeconfig" \
    --authorization-kubeconfig="$k8s_run/kube-controller-manager.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port=0 --leader-elect=false \
    --controllers=namespace-controller,serviceaccount-controller,serviceaccount-token-controller,resourcequota-controller,garbage-collector-controller,clusterrole-aggregation-controller,root-ca-certificate-publisher-controller,replicaset-controller,deployment-controller,job-controller,ttl-after-finished-controller \
    --service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt" \
    --resource-quota-sync-period=10s
  start_component kube-scheduler -- "$(exe kube-scheduler)" \
    --kubeconfig="$k8s_run/kube-scheduler.kubeconfig" \
    --authentication-kubeconfig="$k8s_run/kube-scheduler.kubeconfig" \
    --authorization-kubeconfig="$k8s_run/kube-scheduler.kubeconfig" \
    --leader-elect=false --bind-address=127.0.0.1 --secure-port=0
  write_kwok_stages
  start_component kwok "$ICEPACK_KWOK_PORT" -- "$(exe kwok)" --kubeconfig="$k8s_run/kwok.kubeconfig" \
    --config="$k8s_run/kwok-stages.yaml" --manage-all-nodes=false \
    --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --server-address="127.0.0.1:$ICEPACK_KWOK_PORT" --node-lease-duration-seconds=40

  # The SparkApplication CRD is ~800 KB: a client-side apply would exceed the annotation limit.
  kubectl_admin apply --server-side --force-conflicts -f "$manifests/" >/dev/null || die "applying the Spark operator CRDs failed"
  wait_until "the Spark operator CRDs" 60 kube-apiserver crds_established
  ensure_node

  # The operator exits when its CRDs are not served yet ("failed to get restmapping"): start it last.
  mkdir -p "$k8s_run/spark-home/bin"
  install -m 755 "$ICEPACK_ROOT/deploy/local/k8s/spark-submit" "$k8s_run/spark-home/bin/spark-submit"
  start_component spark-operator "$ICEPACK_SPARK_OPERATOR_PORT" -- env \
    KUBECONFIG="$k8s_run/spark-operator.kubeconfig" ICEPACK_KUBECTL="$(exe kubectl)" \
    SPARK_HOME="$k8s_run/spark-home" KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT="$ICEPACK_K8S_API_PORT" \
    "$(exe spark-operator)" controller start --kubeconfig="$k8s_run/spark-operator.kubeconfig" \
    --health-probe-bind-address="127.0.0.1:$ICEPACK_SPARK_OPERATOR_PORT" --metrics-bind-address=0 \
    --enable-ui-service=false --leader-election=false
}

cmd_wait() {
  [[ -f "$pki/admin.token" ]] || die "k8s: not started (k8s.sh start)"
  wait_until "kube-apiserver on $api_url" 90 kube-apiserver api_ready
  wait_until "the Spark operator" 60 spark-operator operator_ready
  local c
  for c in "${components[@]}"; do
    pid_alive "$(pidfile_of "$c")" || die "k8s: $c is not running (log: $(logfile_of "$c"))"
  done
}

cmd_stop() {
  local i
  for ((i = ${#components[@]} - 1; i >= 0; i--)); do
    stop_pidfile "k8s ${components[i]}" "$(pidfile_of "${components[i]}")" 30
  done
}

cmd_status() {
  local c down=()
  for c in "${components[@]}"; do pid_alive "$(pidfile_of "$c")" || down+=("$c"); done
  if [[ ${#down[@]} -eq 0 ]] && api_ready && operator_ready; then
    echo "k8s      healthy  $api_url  kubeconfig: $admin_kubeconfig  logs: $ICEPACK_LOGS/k8s-*.log"
  else
    echo "k8s      down     $api_url  ${down[*]:+not running: ${down[*]}}  logs: $ICEPACK_LOGS/k8s-*.log"
    return 1
  fi
}

cmd_env() {
  echo "export KUBECONFIG=$admin_kubeconfig"
  echo "export PATH=$k8s_run/bin:\$PATH"
  mkdir -p "$k8s_run/bin"
  ln -sf "$(exe kubectl)" "$k8s_run/bin/kubectl"
}

cmd_up() {
  cmd_start
  cmd_wait
  cmd_status
}

run_subcommand "k8s.sh install|start|stop|status|wait|up|env" "$@"
