#!/usr/bin/env bash
# Measurement runs on one H200 inside one device call, in priority order, each step started only while
# enough of the call's time is left (STEP_BUDGET_S), so the call ends with whole reports rather than a kill.
#   STEPS="accept eager:tinyllama-1.1b:150 eager:qwen2-0.5b:45 static:tinyllama-1.1b:60 bench:24"
# accept           -> $RES/accept/energy-{nf4,int8}.json (the acceptance command, --trials 3)
# eager:NAME:S     -> $RES/NAME/energy-{nf4,int8}.json (eager, --duration S)
# static:NAME:S    -> $RES/static/energy-{nf4,int8}.json (static backend, --duration S)
# bench:Q          -> $RES/bench_sampler.json (sampler on vs off, Q quads)
# jitter:PIN:S     -> $RES/jitter-PIN.json (back-to-back FP16 generation times for S s; PIN none or auto)
# EAGER_ARGS / BENCH_ARGS add options to the eager runs / the sampler benchmark
set -u
: "${OUT:?set OUT}"
# At most 8 files come back from a device call: reports go to $RES and are re-packed into
# $OUT/reports.tar after every step, so whatever finished comes back even if the call is cut short.
RES=${RES:-/tmp/qj-results}
mkdir -p "$RES"
export PYTHONUNBUFFERED=1 QUANTJOULE_CACHE=${QUANTJOULE_CACHE:-/tmp/qjcache}
BUDGET_S=${BUDGET_S:-540}
start=$(date +%s)
left() { echo $((BUDGET_S - ($(date +%s) - start))); }
run_step() {  # need_s command...
    local need=$1; shift
    if [ "$(left)" -lt "$need" ]; then echo "skip (only $(left) s left, need $need): $*"; return; fi
    echo "== $(date +%T) $*"
    timeout "$(left)" "$@"; echo "rc=$? after $(( $(date +%s) - start )) s"
    tar -C "$RES" -cf "$OUT/reports.tar" .
}
{
    nvidia-smi --query-gpu=name,driver_version,power.limit,power.draw,temperature.gpu --format=csv
    for step in $STEPS; do
        IFS=: read -r kind name secs <<<"$step"
        R="python -m measure run --precisions nf4,int8"
        case $kind in
            accept) run_step 100 $R --synthetic tinyllama-1.1b --trials 3 --out "$RES/accept" ;;
            eager) run_step $((secs + 60)) /usr/bin/time -f "wall %e s" $R --synthetic "$name" --duration "$secs" --seed 1 ${EAGER_ARGS:-} --out "$RES/$name" ;;
            # static defaults: whole --tokens generations, two per window
            static) run_step $((secs + 60)) $R --synthetic "$name" --backend static --duration "$secs" --seed 2 \
                        --out "$RES/static" ;;
            jitter) run_step $((secs + 30)) python -m benchmarks.host_jitter --pin "$name" --seconds "$secs" \
                        --json "$RES/jitter-$name.json" ;;
            bench) run_step 120 python -m benchmarks.bench_sampler --synthetic tinyllama-1.1b --quads "$name" ${BENCH_ARGS:-} \
                        --json "$RES/bench_sampler.json" ;;
        esac
    done
} 2>&1 | grep -v "it/s\]" | tee "$OUT/log.txt"
