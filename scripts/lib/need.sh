# Sourced by the benchmark scripts, after they define `say`.

# need COMMAND [PACKAGE]: makes sure COMMAND runs, installing PACKAGE
# (default: COMMAND) with apt-get when it is missing and this is root;
# otherwise stops, naming what to install.
need() {
    local package="${2:-$1}"
    command -v "$1" >/dev/null 2>&1 && return
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
        say "installing $package (apt-get install -y $package)"
        apt-get install -y -qq "$package" >/dev/null 2>&1 ||
            { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq "$package" >/dev/null 2>&1; } ||
            { say "could not install $package"; exit 1; }
    else
        say "$1 is not installed and this is not root: install it (e.g. apt-get install $package) and run again"
        exit 1
    fi
}
