#!/usr/bin/env bash
# Set up spraycv on a fresh Debian machine: system packages, a venv, the package and its tools.
# Idempotent: a second run only checks. Usage: scripts/setup.sh [pip extras, default "dev"]
set -euo pipefail
cd "$(dirname "$0")/.."

extras="${1:-dev}"
venv="${SPRAYCV_VENV:-.venv}"

# Debian packages the project uses (one per line in scripts/apt-packages.txt).
missing=()
while read -r pkg; do
    [[ -z "$pkg" || "$pkg" == \#* ]] && continue
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done < scripts/apt-packages.txt
if ((${#missing[@]})); then
    echo "setup: installing Debian packages: ${missing[*]}"
    sudo_cmd=""
    [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The venv takes about 7 GB (torch's CUDA build); say so up front instead of failing mid-install.
need_gb="${SPRAYCV_SETUP_FREE_GB:-8}"
require_free_space() {
    local dir free_gb
    dir="$(realpath -m "$venv")"
    while [[ ! -d "$dir" ]]; do dir="$(dirname "$dir")"; done
    free_gb=$(($(df -Pk "$dir" | awk 'NR == 2 {print $4}') / 1048576))
    if ((free_gb < need_gb)); then
        echo "setup: error: $dir has ${free_gb} GB free, the venv $venv needs about ${need_gb} GB" >&2
        exit 1
    fi
}

if [[ ! -x "$venv/bin/python" ]]; then
    require_free_space
    echo "setup: creating $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --upgrade pip
fi

# Re-install only when the project metadata changed since the last successful install.
stamp="$venv/.spraycv-installed-$extras"
if [[ ! -f "$stamp" || pyproject.toml -nt "$stamp" ]]; then
    echo "setup: installing spraycv[$extras] into $venv"
    "$venv/bin/pip" install -q -e ".[$extras]"
    touch "$stamp"
fi
