# Sourced by the install-*.sh scripts: install one Debian package unless its command is
# already on the PATH (idempotent), as root or through sudo.
#   apt_install_once COMMAND PACKAGE -- VERSION_COMMAND...
apt_install_once() {
    local command="$1" package="$2"
    shift 3
    if command -v "$command" >/dev/null 2>&1; then
        echo "$command present: $("$@" 2>/dev/null | tail -n 1)"
        return 0
    fi
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        sudo="sudo"
    fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -q
    $sudo apt-get install -y -q --no-install-recommends "$package"
    echo "$command installed: $("$@" 2>/dev/null | tail -n 1)"
}
