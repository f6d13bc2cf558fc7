#!/usr/bin/env bash
# One entry for a fresh machine: installs what the project needs, then runs the demo or the tests.
#   bash run.sh demo   - the bot end to end on the bundled submissions (local forge), then the gallery
#   bash run.sh test   - the whole test suite (CPU only; real torch, bitsandbytes, git, Chromium)
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}

setup() {
    # CPU wheel of torch pinned: an unpinned torch pulls a multi-GB CUDA build.
    if ! "$PY" -c "import torch, bitsandbytes, transformers, github, selenium, bot" 2>/dev/null || [ "${CI:-}" = true ]; then
        "$PY" -m pip install -q --disable-pip-version-check "torch==2.13.0" -e ".[measure,dev]"
    fi
}

browser() {
    # The gallery tests drive a real headless Chromium; Debian packages it with its driver.
    if ! command -v chromedriver >/dev/null 2>&1; then
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
            (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver) >/dev/null
        else
            echo "run.sh: chromium and chromium-driver are needed for the browser tests (apt-get install chromium chromium-driver)" >&2
        fi
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
