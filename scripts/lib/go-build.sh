# Sourced, not run: builds Go commands from the Go module proxy into a cache, for
# scripts/envtest.sh (the control plane) and scripts/node.sh (the node, Prometheus).
#
# Each build writes a throwaway consuming module that requires the published module and
# builds its commands with `go build`, so nothing from outside is vendored or committed and
# the Go build cache is shared between the scripts (kubelet reuses most of kube-apiserver's).
# Callers set `work` (a temporary directory they remove) and define `log`.

GO="$(command -v go || echo /usr/local/go/bin/go)"
[[ -x "$GO" ]] || { echo "go not found; install Go >= 1.25" >&2; exit 1; }
export GOFLAGS=-mod=mod CGO_ENABLED=0 GOTOOLCHAIN=local

# go_module_build NAME DIRECTIVES DEST LDFLAGS PACKAGE...: a module `ferry.dev/NAME` whose
# go.mod carries DIRECTIVES (require/replace lines), then each PACKAGE built into DEST
# (named after the package's last element, or OUT when given as OUT=PACKAGE), with the
# build tags in GO_TAGS when set.
go_module_build() {
    local name="$1" directives="$2" dest="$3" ldflags="$4"
    shift 4
    local mod="$work/$name" package
    mkdir -p "$mod" "$dest"
    printf 'module ferry.dev/%s\ngo 1.25\n%s\n' "$name" "$directives" >"$mod/go.mod"
    local out tags=()
    [[ -z "${GO_TAGS:-}" ]] || tags=("-tags=$GO_TAGS")
    for package in "$@"; do
        out="${package##*/}"
        [[ "$package" == *=* ]] && { out="${package%%=*}"; package="${package#*=}"; }
        (cd "$mod" && "$GO" build -p 2 -trimpath "${tags[@]}" "-ldflags=$ldflags" -o "$dest/$out" "$package")
    done
}

# kubernetes_build VERSION DEST CMD...: commands of k8s.io/kubernetes (kube-apiserver,
# kubelet, ...) stamped with VERSION.
kubernetes_build() {
    local version="$1" dest="$2"
    shift 2
    # k8s.io/kubernetes points its staging modules at ./staging with replace lines that a
    # consuming module cannot follow, so map each one to its published v0.Y.Z twin.
    # `go mod download` fetches through whatever module proxy go is configured for.
    local gomod staging
    gomod="$("$GO" mod download -json "k8s.io/kubernetes@v$version" \
        | sed -n 's#^[[:space:]]*"GoMod": "\(.*\)",*$#\1#p')"
    staging="$(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$gomod")"
    [[ -n "$staging" ]] || { log "could not read the staging module list of k8s.io/kubernetes v$version"; exit 1; }
    # Without the version stamp the server reports v0.0.0, which fails every kubeVersion
    # constraint (helm's included) and trips client version-skew checks.
    local v="k8s.io/component-base/version" minor="${version#1.}" cmd packages=()
    local stamp="-s -w -X $v.gitVersion=v$version -X $v.gitMajor=1 -X $v.gitMinor=${minor%%.*}"
    stamp+=" -X $v.gitTreeState=clean -X $v.buildDate=1970-01-01T00:00:00Z"
    for cmd in "$@"; do packages+=("k8s.io/kubernetes/cmd/$cmd"); done
    local m directives="require k8s.io/kubernetes v$version"
    for m in $staging; do directives+=$'\n'"replace $m => $m v0.${version#1.}"; done
    go_module_build kubernetes "$directives" "$dest" "$stamp" "${packages[@]}"
}

# timed CMD...: run it and log how long it took (the cold-build figures in the docs).
timed() {
    local start=$SECONDS
    "$@"
    log "$1 ${2:-} took $((SECONDS - start)) s"
}
