#!/usr/bin/env bash
# The H200 acceptance of `measure run`, in one device call, writing to $OUT (at most 8 files back):
#   accept/energy-{nf4,int8}.json  the acceptance command (--trials 3), eager
#   eager/energy-{nf4,int8}.json   the CI-target run, eager, --duration $EAGER_S
#   static/energy-{nf4,int8}.json  the CI-target run, static backend, --duration $STATIC_S
#   bench_sampler.json             sampler on vs off, $QUADS interleaved quads
#   log.txt                        everything printed
# Steps run in priority order so a time limit cuts the least important one.
set -u
: "${OUT:?set OUT}"
S=${SYNTHETIC:-tinyllama-1.1b}
EAGER_S=${EAGER_S:-150}
STATIC_S=${STATIC_S:-90}
QUADS=${QUADS:-40}
export PYTHONUNBUFFERED=1 QUANTJOULE_CACHE=${QUANTJOULE_CACHE:-/tmp/qjcache}
R="python -m measure run --synthetic $S --precisions nf4,int8"
{
    date
    $R --trials 3 --out "$OUT/accept"; echo "accept rc=$?"; date
    $R --duration "$EAGER_S" --seed 1 --out "$OUT/eager"; echo "eager rc=$?"; date
    $R --backend static --duration "$STATIC_S" --seed 2 --out "$OUT/static"; echo "static rc=$?"; date
    python benchmarks/bench_sampler.py --synthetic "$S" --quads "$QUADS" --json "$OUT/bench_sampler.json"
    date
} 2>&1 | grep -v "it/s\]" | tee "$OUT/log.txt"
