#!/bin/bash
# The full synthetic runs, cheapest first (each (method, problem) program appends to its CSV).
# Usage: nohup bash experiments/uhe/run_all.sh > experiments/results/uhe/run_all.log 2>&1 &
set -x
PY=${PY:-.venv/bin/python}
$PY experiments/uhe/synthetic.py --figure fig2 --methods random,map,uhe_bo,portfolio,wdf,a_gp_ucb
$PY experiments/uhe/synthetic.py --figure fig4 --methods ra_bo,random_exp3
$PY experiments/uhe/synthetic.py --figure fig5 --methods random,map,uhe_bo,portfolio,wdf,a_gp_ucb
$PY experiments/uhe/synthetic.py --figure fig2 --methods mcmc
$PY experiments/uhe/synthetic.py --figure fig5 --methods mcmc
$PY experiments/uhe/synthetic.py --figure e0
