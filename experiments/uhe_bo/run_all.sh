#!/bin/bash
# The full UHE-BO experiments, cheapest first (each (method, problem) program appends to its CSV).
# Usage: JBO_UPDATE_RESULTS=1 nohup bash experiments/uhe_bo/run_all.sh > experiments/results/uhe/run_all.log 2>&1 &
# (JBO_UPDATE_RESULTS=1: every script writes into experiments/results/uhe/; without it, into the scratch
# mirror that experiments/outdir.py names.)
# MCMC (HMC, 200 + 10 transitions of 20 leapfrog steps every BO step) is ~40x MAP per step: its runs
# go last and write apart (tag _mcmc); compare.py joins them to their figure.
set -x
PY=${PY:-.venv/bin/python}
$PY experiments/uhe_bo/timing.py
$PY experiments/uhe_bo/timing.py --problems deceptive2 --no-components --tag _deceptive2
$PY experiments/uhe_bo/realworld.py --problems gb --methods uhe_bo,map,mcmc --seeds 1 --tag _timing_s1
$PY experiments/uhe_bo/fig4_runtime.py
$PY experiments/uhe_bo/synthetic.py --figure fig2 --methods uhe_bo,map,random,portfolio,wdf,a_gp_ucb
$PY experiments/uhe_bo/synthetic.py --figure fig2_d3 --methods uhe_bo,map,random,portfolio,wdf,a_gp_ucb
$PY experiments/uhe_bo/synthetic.py --figure fig4 --methods ra_bo,random_exp3
$PY experiments/uhe_bo/synthetic.py --figure e0
$PY experiments/uhe_bo/fig3.py
$PY experiments/uhe_bo/synthetic.py --figure fig5 --methods uhe_bo,map,random,portfolio,wdf,a_gp_ucb
$PY experiments/uhe_bo/realworld.py --problems lr,gb --methods uhe_bo,map,random,portfolio,wdf,a_gp_ucb
# lunar (T = 200 after n0 = 36): UHE-BO's pseudo fit on up to 472 points is the slow part, so its seeds
# run one at a time in two processes (the batch's keys: same D0 and decisions) with finer buckets
$PY experiments/uhe_bo/realworld.py --problems lunar --methods map,random,portfolio --workers 1 &
$PY experiments/uhe_bo/realworld.py --problems lunar --methods uhe_bo --seed-ids 0,2,4,6,8 --bucket-step 32 &
$PY experiments/uhe_bo/realworld.py --problems lunar --methods uhe_bo --seed-ids 1,3,5,7,9 --bucket-step 32
wait
# A-GP-UCB and W&dF on lunar, seed by seed (each seed written when it ends), the two in parallel
$PY experiments/uhe_bo/realworld.py --problems lunar --methods a_gp_ucb --seed-ids 0,1,2,3,4,5,6,7,8,9 --bucket-step 32 &
$PY experiments/uhe_bo/realworld.py --problems lunar --methods wdf --seed-ids 0,1,2,3,4,5,6,7,8,9 --bucket-step 32
wait
$PY experiments/uhe_bo/synthetic.py --figure fig2 --methods mcmc --tag _mcmc
$PY experiments/uhe_bo/synthetic.py --figure fig2_d3 --methods mcmc --tag _mcmc
$PY experiments/uhe_bo/synthetic.py --figure fig5 --methods mcmc --tag _mcmc
$PY experiments/uhe_bo/realworld.py --problems lr,gb --methods mcmc --tag _mcmc
# MCMC on lunar: 1178-2039 s of algorithm per seed here (6-10 s per BO evaluation); one seed at a time, written as each ends
$PY experiments/uhe_bo/realworld.py --problems lunar --methods mcmc --seed-ids 0,2,4,6,8 --bucket-step 32 --tag _mcmc &
$PY experiments/uhe_bo/realworld.py --problems lunar --methods mcmc --seed-ids 1,3,5,7,9 --bucket-step 32 --tag _mcmc
wait
$PY experiments/uhe_bo/compare.py --tags "" _mcmc --out compare
# On a GPU machine (not run by this script; the README's H100 numbers): timing.py --tag _h100 --no-components,
# synthetic.py --figure fig2 --problems hartmann3 --tag _h100 (and --methods mcmc --tag _h100_mcmc); the files
# go into experiments/results/uhe/h100/, then here: $PY experiments/uhe_bo/gpu_vs_cpu.py --update
