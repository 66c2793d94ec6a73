#!/usr/bin/env bash
# Static checks of the deployment artefacts, with real tools installed from the registries
# into ~/.cache/icepack (see tools.sh). No Docker engine and no cluster are needed:
#   1. hadolint on deploy/docker/*.Dockerfile
#   2. helm lint --strict, for the default values and every deploy/checks/values/*.yaml
#   3. helm template of each, validated offline by kubeconform against the Kubernetes JSON
#      schemas of the oldest (1.27) and newest (1.37) API versions the chart is checked for
#   4. docker compose config on docker-compose.yml (and that it refuses to run without a token)
# The rendered manifests land in $ICEPACK_RUN/deploy-checks/. The RBAC allow-list test
# (test/cross-service/src/deploy/rbac.test.ts) renders the chart itself with the helm installed here.
# `run.sh install` only installs the tools (./dev test starts it first, in the background: on a
# fresh machine their Go builds take minutes, and a check waits for a build under way).
source "$(dirname "${BASH_SOURCE[0]}")/../local/lib.sh"
source "$ICEPACK_ROOT/deploy/checks/tools.sh"

if [[ "${1:-}" == install ]]; then
  ensure_helm >/dev/null
  ensure_kubeconform >/dev/null
  ensure_compose >/dev/null
  ensure_deploy_venv >/dev/null
  exit 0
fi

chart="$ICEPACK_ROOT/deploy/helm/icepack"
out="$ICEPACK_RUN/deploy-checks"
rm -rf "$out"
mkdir -p "$out"

helm="$(ensure_helm)"
kubeconform="$(ensure_kubeconform)"
docker_config="$(ensure_compose)"
venv="$(ensure_deploy_venv)"
k8s_versions=(1.27.0 1.37.0)
schemas="$(k8s_schemas "$venv" "${k8s_versions[@]}")"
# Helm keeps its own state out of $HOME.
export HELM_CACHE_HOME="$ICEPACK_CACHE/helm-home/cache" HELM_CONFIG_HOME="$ICEPACK_CACHE/helm-home/config" \
  HELM_DATA_HOME="$ICEPACK_CACHE/helm-home/data"

checks=0
ok() { checks=$((checks + 1)); log "ok: $*"; }

"$venv/bin/hadolint" --config "$ICEPACK_ROOT/deploy/checks/hadolint.yaml" "$ICEPACK_ROOT"/deploy/docker/*.Dockerfile \
  || die "hadolint found problems in deploy/docker"
ok "hadolint deploy/docker/*.Dockerfile"

scenarios=(default)
for f in "$ICEPACK_ROOT"/deploy/checks/values/*.yaml; do scenarios+=("$(basename "$f" .yaml)"); done

for scenario in "${scenarios[@]}"; do
  values=()
  [[ "$scenario" == default ]] || values=(-f "$ICEPACK_ROOT/deploy/checks/values/$scenario.yaml")
  "$helm" lint --strict "$chart" "${values[@]}" >"$out/$scenario.lint.txt" 2>&1 \
    || { cat "$out/$scenario.lint.txt" >&2; die "helm lint failed for values '$scenario'"; }
  ok "helm lint --strict ($scenario)"
  "$helm" template icepack "$chart" --namespace icepack --kube-version 1.33.0 "${values[@]}" >"$out/$scenario.yaml" \
    || die "helm template failed for values '$scenario'"
  for k8s in "${k8s_versions[@]}"; do
    "$kubeconform" -strict -summary -kubernetes-version "$k8s" \
      -schema-location "$schemas/{{ .NormalizedKubernetesVersion }}-local-strict/{{ .ResourceKind }}{{ .KindSuffix }}.json" \
      "$out/$scenario.yaml" >&2 \
      || die "kubeconform: the rendered chart ($scenario) is not valid Kubernetes $k8s (manifests: $out/$scenario.yaml)"
    ok "kubeconform -strict, Kubernetes $k8s ($scenario)"
  done
done

compose() { DOCKER_CONFIG="$docker_config" docker compose --project-directory "$ICEPACK_ROOT" -f "$ICEPACK_ROOT/docker-compose.yml" "$@"; }
ICEPACK_API_TOKEN=check-only-token-0123456789 compose config --quiet \
  || die "docker compose config rejected docker-compose.yml"
ok "docker compose config (Compose $ICEPACK_COMPOSE_VERSION)"
if (unset ICEPACK_API_TOKEN; compose config --quiet) >/dev/null 2>&1; then
  die "docker compose config accepted docker-compose.yml without ICEPACK_API_TOKEN; the token must be required"
fi
ok "docker compose config requires ICEPACK_API_TOKEN"

log "deployment checks: all $checks ok (rendered manifests in $out)"
