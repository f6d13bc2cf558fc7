#!/usr/bin/env bash
# The H200 acceptance of `measure run`, writing to $OUT (at most 8 files come back from a device call):
#   accept/energy-{nf4,int8}.json  the acceptance command (--trials 3), eager          STEPS: accept
#   eager/energy-{nf4,int8}.json   the CI-target run, eager, --duration $EAGER_S         STEPS: eager
#   static/energy-{nf4,int8}.json  the CI-target run, static backend, --duration $STATIC_S  STEPS: static
#   bench_sampler.json             sampler on vs off, $QUADS interleaved quads          STEPS: bench
#   log.txt                        everything printed
# Steps run in the order given; how long each took on the H200 is in measurements/README.md.
set -u
: "${OUT:?set OUT}"
S=${SYNTHETIC:-tinyllama-1.1b}
STEPS=${STEPS:-accept eager static bench}
EAGER_S=${EAGER_S:-270}
STATIC_S=${STATIC_S:-120}
QUADS=${QUADS:-40}
export PYTHONUNBUFFERED=1 QUANTJOULE_CACHE=${QUANTJOULE_CACHE:-/tmp/qjcache}
R="python -m measure run --synthetic $S --precisions nf4,int8"
{
    date
    for step in $STEPS; do
        case $step in
            accept) $R --trials 3 --out "$OUT/accept" ;;
            eager) $R --duration "$EAGER_S" --seed 1 --out "$OUT/eager" ;;
            static) $R --backend static --duration "$STATIC_S" --seed 2 --out "$OUT/static" ;;
            bench) python -m benchmarks.bench_sampler --synthetic "$S" --quads "$QUADS" --json "$OUT/bench_sampler.json" ;;
            *) echo "unknown step $step"; continue ;;
        esac
        echo "$step rc=$?"
        date
    done
} 2>&1 | grep -v "it/s\]" | tee "$OUT/log.txt"
