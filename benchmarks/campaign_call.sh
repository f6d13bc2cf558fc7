#!/usr/bin/env bash
# One call of the Hopper measurement campaigns on a GPU host that has torch, transformers and nvidia-ml-py
# but no network: installs the wheels brought along in $WHEELS (bitsandbytes, the jsonschema family) into a
# private folder, runs the undone cells of both manifests within $BUDGET_S, and keeps the campaign's log
# as $OUT/log-call$CALL.txt beside the cells' tars. Back on a machine with the checkout:
#   python -m benchmarks.campaign_unpack FILES_DIR measurements/hopper-campaign/campaign.json \
#       measurements/hopper-batch/campaign.json
# The wheels, fetched once on any machine with PyPI (CPython 3.12, manylinux x86_64):
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#       --platform manylinux_2_24_x86_64 --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
#       --platform manylinux2014_x86_64 -d .whl bitsandbytes==0.50.2 jsonschema jsonschema-specifications \
#       referencing rpds-py
# usage: OUT=DIR CALL=N [BUDGET_S=560] [WHEELS=.whl] bash benchmarks/campaign_call.sh [campaign options]
# (CALL=N refuses to run while call N-1's log-call file is not in measurements/hopper-campaign/: unpack first;
# unpacking takes a second and needs no commit, so even a call chained onto a warm machine can wait for it)
set -uo pipefail
cd "$(dirname "$0")/.."
: "${OUT:?set OUT to the folder whose files come back}" "${CALL:?set CALL to the number of this call}"
WHEELS=${WHEELS:-.whl}
SITE=${SITE:-/tmp/qj-site}
BUDGET_S=${BUDGET_S:-560}
mkdir -p "$OUT"
log="$OUT/log-call$CALL.txt"
# The campaign decides what is undone from this checkout, so a call that starts before the last call's
# tars were unpacked measures those cells again. There is no override: call 22 (before this check) and
# call 42 (through an override since removed) each spent device time re-measuring a finished cell.
if ! [[ $CALL =~ ^[0-9]+$ ]]; then
    echo "campaign_call: CALL must be a number (got '$CALL')" | tee "$log"; exit 2
fi
prev_log="measurements/hopper-campaign/log-call$((CALL - 1)).txt"
if [ "$CALL" -gt 1 ] && [ ! -e "$prev_log" ]; then
    echo "campaign_call: $prev_log is missing: unpack call $((CALL - 1))'s files with" \
        "benchmarks.campaign_unpack first (no commit needed), or this call measures its cells again" | tee "$log"
    exit 2
fi
if compgen -G "$WHEELS/*.whl" >/dev/null; then
    # --target: never touches the host's own packages; --no-index: nothing is fetched
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" \
        "$WHEELS"/*.whl || { echo "campaign_call: installing $WHEELS/*.whl failed" | tee "$log"; exit 1; }
    export PYTHONPATH="$SITE:$PWD"
else
    echo "campaign_call: no wheels in $WHEELS; using the packages already installed" | tee "$log"
    export PYTHONPATH="$PWD"
fi
export PYTHONUNBUFFERED=1
python3 -m benchmarks.campaign measurements/hopper-campaign/campaign.json \
    measurements/hopper-batch/campaign.json --budget-s "$BUDGET_S" --out "$OUT" "$@" 2>&1 | tee -a "$log"
