#!/usr/bin/env bash
# Builds the e2e cluster's toolchain from the Go module proxy into a cache
# outside the repository, one folder per component and version:
#   ${PLATFORM_GITOPS_CACHE:-~/.cache/platform-gitops}/<component>-<version>/
# A folder exists only once its build finished (built in a temporary folder,
# then renamed), so an interrupted build is started again, never half-used.
# Every version is pinned here or in this folder's go.mod/go.sum.
#
# Usage: toolchain/build.sh [component ...]   (default: all)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
cache="${PLATFORM_GITOPS_CACHE:-$HOME/.cache/platform-gitops}"

# Pinned versions. Kubernetes and etcd come from kubernetes/go.mod, Argo CD from
# argocd/go.mod (each with its go.sum); a test checks that these lines agree.
KUBERNETES_VERSION=v1.36.3
ETCD_VERSION=v3.6.16
ARGOCD_VERSION=v3.6.1
# One Go toolchain builds every component: Argo CD v3.6 needs Go 1.27, and the go command
# fetches this release from the module proxy (golang.org/toolchain). The Go build cache keys a
# compiled package by its compiler too, so one release for all compiles the standard library,
# and each package two components build alike, once: 12,498 compiles instead of 13,211 when
# Argo CD and helm had Go 1.27 and the rest Go 1.26 (docs/performance.md, 2026-11-29). Each
# folder names it: another toolchain is another build.
GO_TOOLCHAIN=go1.27.4
# Built with `go install module@version`: their own go.mod and go.sum pin the rest.
KWOK_VERSION=v0.8.0
# Argo CD v3.6.1 ships helm 4.3.1 and kustomize 5.8.3 (hack/tool-versions.sh); one of
# kustomize 5.8.3's dependencies is not on the module proxy, so 5.8.1 (Argo CD v3.5's).
KUSTOMIZE_VERSION=v5.8.1
HELM_VERSION=v4.3.1
SOPS_VERSION=v3.13.3
AGE_VERSION=v1.3.2 # age-keygen makes each environment's key pair (npm run secrets -- init)
KUBECONFORM_VERSION=v0.8.0
# promtool, to test the rendered alert rules on Prometheus' own rule engine: Prometheus
# v3.14 (module v0.314.0, from prometheus/go.mod), the Prometheus kube-prometheus-stack 88.5.3
# runs (its values.yaml `prometheus.prometheusSpec.image.tag`: v3.14.0-distroless).
PROMETHEUS_VERSION=v0.314.0
# Envoy Gateway's control plane, the version the platform installs (src/infrastructure/releases.ts);
# its charts are among UPSTREAM_CHARTS.
ENVOY_GATEWAY_VERSION=v1.9.1
# cert-manager's controllers and webhook, the version the platform installs
# (src/infrastructure/releases.ts), from cert-manager/go.mod (two small mains over the module:
# its own cmd/controller and cmd/webhook modules are not on the module proxy); its chart is
# among UPSTREAM_CHARTS.
CERT_MANAGER_VERSION=v1.21.2
# prometheus-operator, the version kube-prometheus-stack 88.5.3 runs (its Chart.yaml appVersion;
# src/infrastructure/releases.ts): it turns the platform's PrometheusRules and AlertmanagerConfig
# into Prometheus' rule files and Alertmanager's configuration on the e2e cluster. Its pkg/client
# module is not on the module proxy, so it is generated here as upstream generates it
# (prometheus_operator_build).
PROMETHEUS_OPERATOR_VERSION=v0.93.1
# Alertmanager, for the rendered alert routing and the silences (npm run ops -- silence) on
# Alertmanager itself (test/e2e/alertmanager.test.ts): v0.35.0, the newest on the module proxy.
ALERTMANAGER_VERSION=v0.35.0
# Flagger, the release the platform installs (src/infrastructure/releases.ts; on the module proxy
# since 2026-11-27): its controller, which the e2e runs against the cluster, and its load
# tester, for the canary gates (npm run ops -- canary); its charts are among UPSTREAM_CHARTS.
FLAGGER_VERSION=v1.44.0
# The CNCF distribution registry, an OCI registry on loopback for the published application
# charts (npm run publish): v3.1.2, the newest v3 on the module proxy.
DISTRIBUTION_VERSION=v3.1.2
# cyclonus's NetworkPolicy engine (its pkg/matcher), from network-policy/go.mod: the e2e asks it
# whether the cluster's live policies allow each connection it plays between pods
# (network-policy/main.go, e2e/network-policy.ts). v0.5.6, the newest on the module proxy.
NETWORK_POLICY_VERSION=v0.5.6
# The upstream Helm charts the e2e serves to Argo CD in place of stand-ins, each from its pinned
# release's Go module (no compile: the module's chart folder, stamped as its release stamps it):
# one line each, "<chart> <chart version> <module>@<version> <folder in the module>". Every
# version the release table knows of a release is here (src/contract/release-versions.ts), so
# an environment's values may name any of them; a test holds this list to that table.
UPSTREAM_CHARTS=(
  "cert-manager v1.21.1 github.com/cert-manager/cert-manager@v1.21.1 deploy/charts/cert-manager"
  "cert-manager v1.21.2 github.com/cert-manager/cert-manager@v1.21.2 deploy/charts/cert-manager"
  "gateway-crds-helm $ENVOY_GATEWAY_VERSION github.com/envoyproxy/gateway@$ENVOY_GATEWAY_VERSION charts/gateway-crds-helm"
  "gateway-helm $ENVOY_GATEWAY_VERSION github.com/envoyproxy/gateway@$ENVOY_GATEWAY_VERSION charts/gateway-helm"
  "flagger ${FLAGGER_VERSION#v} github.com/fluxcd/flagger@$FLAGGER_VERSION charts/flagger"
  "loadtester 0.38.0 github.com/fluxcd/flagger@$FLAGGER_VERSION charts/loadtester"
)

# No DWARF from the compiler (-gcflags=all=-dwarf=false): the linker strips it anyway (-s -w),
# and generating it was a fifth of the compile. kwok from an empty Go build cache here
# (2026-11-28): 146 s wall, 277 s CPU with it; 115 s, 220 s without; the same binary size.
export CGO_ENABLED=0 GOFLAGS="-buildvcs=false -gcflags=all=-dwarf=false" GOTOOLCHAIN="$GO_TOOLCHAIN"

# sources_digest <component>: 12 hex digits over the component's go.mod, go.sum and Go files.
sources_digest() {
  (cd "$here/$1" && find . -type f \( -name go.mod -o -name go.sum -o -name '*.go' \) -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-12)
}

log() { printf '[toolchain %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# build_into <component> <version> <command...>: runs the command with $out set
# to a temporary folder, then publishes it as <component>-<version>.
build_into() {
  local component="$1" version="$2"
  shift 2
  # A component built from Go sources of this repository (not only a go.mod's pins): its
  # folder also names a digest of those sources, so a changed main is built again.
  local final
  final="$(folder_of "$component")"
  if [[ -d "$final" ]]; then
    log "$component $version: cached in $final"
    return
  fi
  local started=$SECONDS
  out="$(mktemp -d "$cache/.$component-$version.XXXXXX")"
  log "$component $version: building"
  # A line a minute while it builds: the longest component takes several minutes.
  # Its sleep holds none of this script's output open: a reader sees the end when the build ends.
  (while sleep 60 </dev/null >/dev/null 2>&1; do log "$component $version: still building ($(((SECONDS - started) / 60)) min)"; done) &
  local heartbeat=$!
  # Each build function returns its first failure (errexit does not apply inside `if`).
  if ! "$@"; then
    kill "$heartbeat" 2>/dev/null || true
    rm -rf "$out"
    log "$component $version: build failed"
    return 1
  fi
  kill "$heartbeat" 2>/dev/null || true
  # What this build took here, for --estimate.
  echo "$((SECONDS - started))" > "$out/.build-seconds"
  # Another build of the same component (a second command started meanwhile) may have
  # published first: keep that one.
  if [[ -d "$final" ]]; then rm -rf "$out"; else mv "$out" "$final"; fi
  log "$component $version: built in $((SECONDS - started)) s"
}

kubernetes_build() {
  local v="$KUBERNETES_VERSION" minor
  minor="${v#v1.}"
  minor="${minor%%.*}"
  (cd "$here/kubernetes" && go build -trimpath -o "$out/" -ldflags "-s -w \
    -X k8s.io/component-base/version.gitVersion=$v \
    -X k8s.io/component-base/version.gitMajor=1 \
    -X k8s.io/component-base/version.gitMinor=$minor \
    -X k8s.io/component-base/version.gitTreeState=clean" \
    k8s.io/kubernetes/cmd/kube-apiserver \
    k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler)
}

etcd_build() {
  (cd "$here/kubernetes" && go build -trimpath -ldflags "-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3)
}

argocd_build() {
  # One binary serves every Argo CD component by the name it is started as.
  (cd "$here/argocd" && go build -trimpath -o "$out/argocd" -ldflags "-s -w \
    -X github.com/argoproj/argo-cd/v3/common.version=${ARGOCD_VERSION#v} \
    -X github.com/argoproj/argo-cd/v3/common.gitTag=$ARGOCD_VERSION \
    -X github.com/argoproj/argo-cd/v3/common.gitTreeState=clean \
    -X github.com/argoproj/argo-cd/v3/common.kubectlVersion=v0.37.0" \
    github.com/argoproj/argo-cd/v3/cmd) || return 1
  local name module
  for name in argocd-server argocd-repo-server argocd-application-controller argocd-cmp-server argocd-git-ask-pass; do
    ln -s argocd "$out/$name" || return 1
  done
  # The scripts Argo CD's image puts beside the binary (its Dockerfile: COPY hack/...),
  # from the same module: the repository server runs git-verify-wrapper.sh on every commit.
  module="$(cd "$here/argocd" && go list -m -f '{{.Dir}}' github.com/argoproj/argo-cd/v3)" || return 1
  install -m 0755 "$module/hack/git-verify-wrapper.sh" "$module/hack/gpg-wrapper.sh" "$out/" || return 1
}

# mod_dir <module@version>: the folder of the downloaded module (downloaded if missing).
mod_dir() {
  local dir
  dir="$(go mod download -json "$1" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')" && [[ -n "$dir" ]] && echo "$dir"
}

# go_install <package@version>: a module that is `go install`-able as it is.
go_install() { GOBIN="$out" go install -trimpath -ldflags "-s -w" "$1"; }

kwok_build() { go_install "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"; }
kustomize_build() { go_install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"; }
helm_build() { go_install "helm.sh/helm/v4/cmd/helm@$HELM_VERSION"; }
sops_build() { go_install "github.com/getsops/sops/v3/cmd/sops@$SOPS_VERSION"; }
age_build() { go_install "filippo.io/age/cmd/age-keygen@$AGE_VERSION"; }
kubeconform_build() { go_install "github.com/yannh/kubeconform/cmd/kubeconform@$KUBECONFORM_VERSION"; }
envoy_gateway_build() { go_install "github.com/envoyproxy/gateway/cmd/envoy-gateway@$ENVOY_GATEWAY_VERSION"; }
cert_manager_build() {
  local program
  for program in controller webhook; do
    (cd "$here/cert-manager" && go build -trimpath -o "$out/cert-manager-$program" -ldflags "-s -w -X main.release=$CERT_MANAGER_VERSION" "./$program") || return 1
  done
}
prometheus_build() {
  # Its module replaces a dependency, so it is built from toolchain/prometheus/go.mod (like Kubernetes).
  (cd "$here/prometheus" && go build -trimpath -tags "${build_tags[prometheus]}" -o "$out/" -ldflags "-s -w \
    -X github.com/prometheus/common/version.Version=3.${PROMETHEUS_VERSION#v0.3}" \
    github.com/prometheus/prometheus/cmd/promtool)
}

prometheus_operator_build() {
  # The main module replaces its pkg/apis/monitoring and pkg/client modules with its own folders,
  # which a module download does not carry. pkg/apis/monitoring is served at the release;
  # pkg/client is not, and upstream generates it from those types (Makefile `k8s-client-gen`:
  # applyconfiguration-gen, client-gen, lister-gen, informer-gen, their flags as there), so it is
  # generated the same way, by k8s.io/code-generator at the client-go version the module
  # requires, with a go.mod whose requirements are the main module's versions.
  local p=github.com/prometheus-operator/prometheus-operator module apis apis_required tree gen client_go g
  local args=(--v=1 --logtostderr)
  local types=("$p/pkg/apis/monitoring/v1" "$p/pkg/apis/monitoring/v1alpha1" "$p/pkg/apis/monitoring/v1beta1")
  module="$(mod_dir "$p@$PROMETHEUS_OPERATOR_VERSION")" && apis="$(mod_dir "$p/pkg/apis/monitoring@$PROMETHEUS_OPERATOR_VERSION")" || return 1
  client_go="$(awk '$1 == "k8s.io/client-go" { print $2 }' "$module/go.mod")"
  # The version of pkg/apis/monitoring the main module requires (replaced by its folder): not
  # always the release's (v0.93.1 requires v0.93.0), and a higher one in pkg/client's go.mod
  # would make the go command ask for the main go.mod to be updated.
  apis_required="$(awk -v m="$p/pkg/apis/monitoring" '$1 == m && $2 ~ /^v/ { print $2; exit }' "$module/go.mod")"
  [[ -n "$client_go" && -n "$apis_required" ]] || return 1
  tree="$(mktemp -d)" && gen="$tree/.codegen" || return 1
  cp -R "$module/." "$tree/" && mkdir -p "$tree/pkg/apis" "$tree/pkg/client" && cp -R "$apis" "$tree/pkg/apis/monitoring" && chmod -R u+w "$tree" || { rm -rf "$tree"; return 1; }
  # The project's alertmanager-config (toolchain/prometheus-operator/alertmanager-config), a main
  # over the operator's own pkg/alertmanager, built in the same tree as the operator, with one
  # file added to that package exporting its check of an AlertmanagerConfig (pkg-alertmanager/).
  cp -R "$here/prometheus-operator/alertmanager-config" "$tree/cmd/platform-alertmanager-config" &&
    cp "$here/prometheus-operator/pkg-alertmanager/platform_export.go" "$tree/pkg/alertmanager/" || { rm -rf "$tree"; return 1; }
  for g in applyconfiguration-gen client-gen lister-gen informer-gen; do
    GOBIN="$gen" go install "k8s.io/code-generator/cmd/$g@$client_go" || { rm -rf "$tree"; return 1; }
  done
  {
    printf 'module %s/pkg/client\n\ngo %s\n\nrequire (\n\t%s/pkg/apis/monitoring %s\n' "$p" "$(awk '$1 == "go" { print $2 }' "$module/go.mod")" "$p" "$apis_required"
    awk '$1 ~ /^(k8s\.io\/(api|apimachinery|client-go)|sigs\.k8s\.io\/structured-merge-diff\/v6)$/ && $2 ~ /^v/ { printf "\t%s %s\n", $1, $2 }' "$module/go.mod"
    printf ')\n\nreplace %s/pkg/apis/monitoring => ../apis/monitoring\n' "$p"
  } > "$tree/pkg/client/go.mod"
  args+=(--go-header-file "$tree/.header")
  (cd "$tree" &&
    "$gen/applyconfiguration-gen" "${args[@]}" --output-pkg "$p/pkg/client/applyconfiguration" --output-dir pkg/client/applyconfiguration "${types[@]}" &&
    "$gen/client-gen" "${args[@]}" --apply-configuration-package "$p/pkg/client/applyconfiguration" --input-base "$p/pkg/apis" \
      --clientset-name versioned --output-pkg "$p/pkg/client" --output-dir pkg/client --input monitoring/v1 --input monitoring/v1beta1 --input monitoring/v1alpha1 &&
    "$gen/lister-gen" "${args[@]}" --output-pkg "$p/pkg/client/listers" --output-dir pkg/client/listers "${types[@]}" &&
    "$gen/informer-gen" "${args[@]}" --versioned-clientset-package "$p/pkg/client/versioned" --listers-package "$p/pkg/client/listers" \
      --output-pkg "$p/pkg/client/informers" --output-dir pkg/client/informers "${types[@]}" &&
    go build -trimpath -o "$out/prometheus-operator" -ldflags "-s -w -X github.com/prometheus/common/version.Version=${PROMETHEUS_OPERATOR_VERSION#v}" ./cmd/operator &&
    go build -trimpath -o "$out/alertmanager-config" -ldflags "-s -w" ./cmd/platform-alertmanager-config
  ) || { rm -rf "$tree"; return 1; }
  rm -rf "$tree"
  # Its CRDs, the files kube-prometheus-stack's crds chart copies (its hack/update_crds.sh).
  mkdir -p "$out/crds" && cp "$module/example/prometheus-operator-crd/"*.yaml "$out/crds/" && chmod u+w "$out/crds/"*.yaml
}

flagger_loadtester_build() { go_install "github.com/fluxcd/flagger/cmd/loadtester@$FLAGGER_VERSION"; }
flagger_build() { go_install "github.com/fluxcd/flagger/cmd/flagger@$FLAGGER_VERSION"; }
# Each chart of UPSTREAM_CHARTS into charts/<version>/<chart>/ (helm package wants the folder
# named as the chart), as its release packages it: cert-manager's release tool stamps version
# and appVersion into Chart.yaml; Envoy Gateway's (tools/make/helm.mk `helm-generate`) writes
# values.yaml from values.tmpl.yaml with the release's image and stamps both; Flagger's charts
# carry their versions. A chart whose Chart.yaml then names another version fails the build.
upstream_charts_build() {
  local line chart version module folder dir target
  for line in "${UPSTREAM_CHARTS[@]}"; do
    read -r chart version module folder <<< "$line"
    dir="$(mod_dir "$module")" && [[ -f "$dir/$folder/Chart.yaml" ]] || return 1
    target="$out/charts/$version/$chart"
    mkdir -p "$(dirname "$target")" && cp -R "$dir/$folder" "$target" && chmod -R u+w "$target" || return 1
    if [[ -f "$target/values.tmpl.yaml" ]]; then
      sed -e "s|\${GatewayImage}|docker.io/envoyproxy/gateway:$version|" -e 's|\${GatewayImagePullPolicy}|IfNotPresent|' "$target/values.tmpl.yaml" > "$target/values.yaml" || return 1
    fi
    case "$module" in
      github.com/cert-manager/*) sed -i -e "s|^version: .*|version: $version|" -e "s|^appVersion: .*|appVersion: $version|" "$target/Chart.yaml" || return 1 ;;
      github.com/envoyproxy/*) sed -i -e "s|^version: .*|version: $version|" -e "s|^appVersion: .*|appVersion: \"$version\"|" "$target/Chart.yaml" || return 1 ;;
    esac
    grep -qx "version: $version" "$target/Chart.yaml" || { log "upstream-charts: $module $folder is not chart version $version"; return 1; }
  done
}
network_policy_build() { (cd "$here/network-policy" && go build -trimpath -o "$out/network-policy-verdict" -ldflags "-s -w" .); }
distribution_build() { go_install "github.com/distribution/distribution/v3/cmd/registry@$DISTRIBUTION_VERSION"; }
alertmanager_build() {
  # Its web UI is embedded from ui/app/dist, which the release builds with npm and the module
  # does not carry: build a copy of the module with an empty UI (the API v2 is unchanged).
  local module tree
  module="$(mod_dir "github.com/prometheus/alertmanager@$ALERTMANAGER_VERSION")" || return 1
  tree="$(mktemp -d)" || return 1
  cp -R "$module/." "$tree/" && chmod -R u+w "$tree" || return 1
  mkdir -p "$tree/ui/app/dist/elm" "$tree/ui/app/dist/mantine" || return 1
  echo 'The web UI is not part of this build.' > "$tree/ui/app/dist/elm/index.html"
  cp "$tree/ui/app/dist/elm/index.html" "$tree/ui/app/dist/mantine/index.html"
  (cd "$tree" && go build -trimpath -o "$out/" -ldflags "-s -w \
    -X github.com/prometheus/common/version.Version=${ALERTMANAGER_VERSION#v}" \
    ./cmd/alertmanager ./cmd/amtool) || { rm -rf "$tree"; return 1; }
  rm -rf "$tree"
}

declare -A versions=(
  [kubernetes]=$KUBERNETES_VERSION [etcd]=$ETCD_VERSION [argocd]=$ARGOCD_VERSION
  [kwok]=$KWOK_VERSION [kustomize]=$KUSTOMIZE_VERSION [helm]=$HELM_VERSION
  [sops]=$SOPS_VERSION [age]=$AGE_VERSION [kubeconform]=$KUBECONFORM_VERSION
  [prometheus]=$PROMETHEUS_VERSION [envoy-gateway]=$ENVOY_GATEWAY_VERSION
  [alertmanager]=$ALERTMANAGER_VERSION [flagger-loadtester]=$FLAGGER_VERSION [flagger]=$FLAGGER_VERSION
  [prometheus-operator]=$PROMETHEUS_OPERATOR_VERSION
  [distribution]=$DISTRIBUTION_VERSION [cert-manager]=$CERT_MANAGER_VERSION
  [network-policy]=$NETWORK_POLICY_VERSION
  # Several charts at several versions: a digest of their pins and of the function that copies
  # them, so a change to either is another folder.
  [upstream-charts]="$({ printf '%s\n' "${UPSTREAM_CHARTS[@]}"; declare -f upstream_charts_build; } | sha256sum | cut -c1-12)"
)
# Largest first (their cold builds on this project's 2-core machine, 2026-11-26/27): with
# several lanes the long builds start at once and the small ones fill the gaps.
order=(argocd kubernetes prometheus-operator helm cert-manager envoy-gateway prometheus sops kwok flagger alertmanager flagger-loadtester distribution network-policy etcd kustomize kubeconform age upstream-charts)

# The Go build tags a component is built with; its folder names them, since a build with
# other tags is another build. promtool without Prometheus' service discovery plugins (its
# `remove_all_sd` tag, prometheus plugins/plugin_*.go): `promtool check rules` and
# `test rules` use none of them, and they were half its cold build here (336 s against
# 175 s, each with an empty Go build cache beside an e2e run, 2026-11-28).
declare -A build_tags=([prometheus]=remove_all_sd)

# folder_of <component>: where its build is (or would be) published.
folder_of() {
  local folder="$cache/$1-${versions[$1]}-$GO_TOOLCHAIN"
  if [[ -n "${build_tags[$1]:-}" ]]; then folder="$folder-${build_tags[$1]//[^A-Za-z0-9_]/-}"; fi
  if compgen -G "$here/$1/*/*.go" > /dev/null || compgen -G "$here/$1/*.go" > /dev/null; then folder="$folder-$(sources_digest "$1")"; fi
  echo "$folder"
}

if [[ "${1:-}" == "--estimate" ]]; then
  # The cold-build estimate: what each component's build took on this machine (recorded in its
  # folder when it was built), largest first, and their sum.
  total=0 recorded=() unknown=()
  for c in "${order[@]}"; do
    f="$(folder_of "$c")/.build-seconds"
    if [[ -f "$f" ]]; then
      recorded+=("$(cat "$f") $c ${versions[$c]}")
      total=$((total + $(cat "$f")))
    else
      unknown+=("$c")
    fi
  done
  if [[ ${#recorded[@]} -gt 0 ]]; then printf '%s\n' "${recorded[@]}" | sort -k1,1rn -k2,2 | awk '{ printf "%-20s %-10s %6d s\n", $2, $3, $1 }'; fi
  echo "total: $total s (about $(((total + 59) / 60)) min), each build with the Go caches as they were then"
  # The wall time in lanes: each recorded build, in build order, on the lane that frees first
  # (the times were measured with the other lane busy beside them, as a cold build runs).
  lanes="${TOOLCHAIN_LANES:-2}" ends=() longest=0
  [[ "$lanes" =~ ^[1-9][0-9]*$ ]] || lanes=2
  for ((i = 0; i < lanes; i++)); do ends+=(0); done
  for c in "${order[@]}"; do
    f="$(folder_of "$c")/.build-seconds"
    [[ -f "$f" ]] || continue
    first=0
    for ((i = 1; i < lanes; i++)); do [[ ${ends[i]} -lt ${ends[first]} ]] && first=$i; done
    ends[first]=$((ends[first] + $(cat "$f")))
    [[ ${ends[first]} -gt $longest ]] && longest=${ends[first]}
  done
  echo "in $lanes lane$([[ $lanes -eq 1 ]] || echo s) (TOOLCHAIN_LANES), largest first: $longest s (about $(((longest + 59) / 60)) min)"
  if [[ ${#unknown[@]} -gt 0 ]]; then echo "not recorded (not built, or built before builds recorded their time): ${unknown[*]}"; fi
  exit 0
fi

if [[ "${1:-}" == "--print" ]]; then
  # Machine-readable: one "component version folder" line each.
  for c in "${order[@]}"; do echo "$c ${versions[$c]} $(folder_of "$c")"; done
  exit 0
fi

components=("$@")
[[ ${#components[@]} -gt 0 ]] || components=("${order[@]}")
for c in "${components[@]}"; do
  if [[ -z "${versions[$c]:-}" ]]; then
    echo "toolchain/build.sh: unknown component '$c' (known: ${order[*]})" >&2
    exit 2
  fi
done
# Builds run in TOOLCHAIN_LANES lanes at once (default 2): one build's module downloads and
# its single-threaded link run while another compiles. Go's module and build caches are safe
# to share between go commands (they lock).
lanes="${TOOLCHAIN_LANES:-2}"
if ! [[ "$lanes" =~ ^[1-9][0-9]*$ ]]; then
  echo "toolchain/build.sh: TOOLCHAIN_LANES must be a whole number of at least 1, not '$lanes'" >&2
  exit 2
fi
mkdir -p "$cache"
started=$SECONDS failed=()
declare -A running=()
# reap: waits for one running build and records its failure.
reap() {
  local pid status=0 c
  wait -n -p pid "${!running[@]}" || status=$?
  c="${running[$pid]}"
  unset "running[$pid]"
  [[ $status -eq 0 ]] || failed+=("$c")
}
for c in "${components[@]}"; do
  while [[ ${#running[@]} -ge $lanes ]]; do reap; done
  build_into "$c" "${versions[$c]}" "${c//-/_}_build" &
  running[$!]="$c"
done
while [[ ${#running[@]} -gt 0 ]]; do reap; done
if [[ ${#failed[@]} -gt 0 ]]; then
  log "failed: ${failed[*]} (their errors are above; every other one is built)"
  exit 1
fi
log "${#components[@]} components ready in $((SECONDS - started)) s ($lanes lanes)"
