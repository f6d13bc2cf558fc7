#!/usr/bin/env bash
# One entry for a fresh machine: installs what the project needs, then runs the demo or the tests.
#   bash run.sh demo   - the bot end to end on the bundled submissions (local forge), then the gallery
#   bash run.sh test   - the whole test suite (CPU only; real torch, bitsandbytes, git, Chromium)
# PYTHON=path/to/venv/bin/python picks the interpreter (a venv need not be activated).
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
TORCH_VERSION=2.13.0
CPU_INDEX=https://download.pytorch.org/whl/cpu
PIP=("$PY" -m pip install --disable-pip-version-check --progress-bar on)

say() { echo "run.sh: $*" >&2; }

reachable() {
    # one HEAD request with a short timeout: a closed network answers in seconds, never hangs the install
    "$PY" - "$1" <<'EOF' >/dev/null 2>&1
import sys, urllib.request
urllib.request.urlopen(urllib.request.Request(sys.argv[1], method="HEAD"), timeout=8)
EOF
}

install_torch() {
    if "$PY" -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '$TORCH_VERSION')" 2>/dev/null; then
        say "[1/3] torch $("$PY" -c 'import torch; print(torch.__version__)') already installed"
        return
    fi
    # PyPI's torch for Linux x86_64 is the CUDA build (~530 MB plus several GB of nvidia-* wheels); the
    # tests and the no-GPU path need only the CPU build (~190 MB) from PyTorch's own CPU index.
    if reachable "$CPU_INDEX/torch/"; then
        say "[1/3] installing torch $TORCH_VERSION, CPU build, from $CPU_INDEX (about 190 MB, 1-3 minutes)"
        "${PIP[@]}" --index-url "$CPU_INDEX" --extra-index-url https://pypi.org/simple "torch==$TORCH_VERSION"
    else
        say "[1/3] $CPU_INDEX is not reachable: installing torch==$TORCH_VERSION from the configured index."
        say "      On Linux x86_64 PyPI serves the CUDA build there (about 530 MB plus several GB of NVIDIA"
        say "      wheels, 5-15 minutes), unless pip is configured with a local CPU wheel."
        "${PIP[@]}" "torch==$TORCH_VERSION"
    fi
    say "      installed: $("$PY" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda)')"
}

setup() {
    if "$PY" -c "import torch, bitsandbytes, transformers, github, selenium, bot" 2>/dev/null \
        && [ "${CI:-}" != true ]; then
        return
    fi
    install_torch
    say "[2/3] installing quantjoule (editable) with bitsandbytes, transformers and the dev tools"
    say "      (about 200 MB of wheels on a fresh machine, 1-3 minutes; torch above is kept)"
    "${PIP[@]}" -e ".[measure,dev]"
}

browser() {
    # The gallery tests drive a real headless Chromium; Debian packages it with its driver.
    if [ -x /usr/bin/chromedriver ] || command -v chromedriver >/dev/null 2>&1; then
        return
    fi
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        say "[3/3] installing Debian's chromium and chromium-driver (about 150 MB with its libraries, 1-2 minutes)"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver
    else
        say "chromium and chromium-driver are needed for the browser tests (apt-get install chromium chromium-driver)"
    fi
}

case "${1:-}" in
    demo)
        setup
        shift
        exec "$PY" -m bot demo "$@"
        ;;
    test)
        setup
        browser
        shift
        exec "$PY" -m pytest "$@"
        ;;
    *)
        echo "usage: bash run.sh demo | test [pytest args]" >&2
        exit 2
        ;;
esac
