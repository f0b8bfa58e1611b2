#!/bin/bash
# The reduced runs made in this session (the machine was shared, load average 10-17 on 2 cores):
# 3 seeds, 30 BO evaluations after D0; nohup bash experiments/uhe/run_reduced.sh > experiments/results/uhe/run_reduced.log 2>&1 &
set -x
PY=${PY:-.venv/bin/python}
A="--seeds 3 --budget 30 --tag _s3_T30"
$PY experiments/uhe/timing.py --budget 30 --problems hartmann3 --methods uhe_bo,map,mcmc
$PY experiments/uhe/synthetic.py --figure fig2 --problems deceptive2,hartmann3 --methods random,map,uhe_bo,portfolio $A
$PY experiments/uhe/synthetic.py --figure fig4 --problems deceptive2,hartmann3 --methods ra_bo,random_exp3 $A
$PY experiments/uhe/synthetic.py --figure e0 --problems gp_d1 $A
$PY experiments/uhe/synthetic.py --figure fig2 --problems deceptive2,hartmann3 --methods wdf,a_gp_ucb,mcmc $A
