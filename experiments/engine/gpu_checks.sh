#!/usr/bin/env bash
# The GPU measurements of the benchmarks and SBO-KDE pages, as one command on a machine with one GPU and
# JAX's CUDA build installed (jbo itself is imported from this checkout):
#
#   OUT=/tmp/jbo_gpu TAG=h100 experiments/engine/gpu_checks.sh
#
# Stages, in order, each under its own time limit and all within DEADLINE seconds (default 550), so
# that the files of the stages that finish come back when a later one runs out of time:
#   1. the SBO-KDE step at the paper's settings, 5 seeds per program (experiments/sbo_kde/budget_cost.py);
#   2. the T axis of default GP-UCB on hartmann6 at 1024 seeds, T = 50 to 400, and BoTorch at T = 50
#      on the machine's CPU (experiments/engine/bench_engine.py);
#   3. T = 1000 at 1024 seeds;
#   4. SBO-KDE paper Fig 1 on Hartmann at the paper's settings (T = 350, M = 1024, 5 seeds), GP-UCB
#      and SBO-KDE (experiments/sbo_kde/fig1.py).
# The scripts write into the scratch mirror of experiments/results that experiments/outdir.py names
# (JBO_UPDATE_RESULTS=1: into experiments/results itself); every new or changed file there goes into
# $OUT/results.tgz after each stage, named experiments/results/<path> (unpack it in the repository root),
# the whole console output into $OUT/log.txt.
set -u
cd "$(dirname "$0")/../.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 JBO_CACHE=0 XLA_PYTHON_CLIENT_MEM_FRACTION=0.92
OUT=${OUT:-/tmp/jbo_gpu}
TAG=${TAG:-gpu}
DEADLINE=${DEADLINE:-550}
PY=${PY:-python3}
mkdir -p "$OUT"
log=$OUT/log.txt
start=$SECONDS
marker=$(mktemp)
results=$($PY experiments/outdir.py)
mkdir -p "$results"

pack() {
    find "$results" -type f -newer "$marker" -printf '%P\0' |
        tar czf "$OUT/results.tgz" -C "$results" --transform 's,^,experiments/results/,' --null -T -
}

stage() {
    local limit=$1 left=$((DEADLINE - (SECONDS - start)))
    shift
    ((left < limit)) && limit=$left
    if ((limit < 20)); then
        echo "== skipped (${left} s left): $*" | tee -a "$log"
        return
    fi
    echo "== $(date -u +%T) limit ${limit} s: $*" | tee -a "$log"
    timeout "$limit" "$@" 2>&1 | tee -a "$log"
    echo "== rc ${PIPESTATUS[0]} after $((SECONDS - start)) s" | tee -a "$log"
    pack
}

{
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    $PY -c "import jax; print('jax', jax.__version__, jax.devices())"
} 2>&1 | tee -a "$log"
stage 130 $PY experiments/sbo_kde/budget_cost.py --seeds 5 --out "budget_cost_$TAG.json"
stage 170 $PY experiments/engine/bench_engine.py --steps 50 100 200 400 --seeds 1024 --botorch-steps 50 \
    --botorch-seeds 1 --tag "t_axis_$TAG"
stage 200 $PY experiments/engine/bench_engine.py --steps 1000 --seeds 1024 --botorch-steps --tag "t1000_$TAG"
stage 300 $PY experiments/sbo_kde/fig1.py --problems hartmann --methods gp_ucb sbo_kde --tag "paper_$TAG"
echo "== done after $((SECONDS - start)) s" | tee -a "$log"
