#!/bin/bash
# The reduced runs of the second experiment session (about 35 min of compute on the shared 2-core
# machine, with BLAS on one thread: see common.py). Three streams run at the same time:
#   A  timing, Hartmann3, T = 100 BO steps: UHE-BO, MAP, MCMC side by side (one seed), then E0 (d = 1)
#      and Fig 2 top on h1
#   C  Fig 2 top (UHE-BO, MAP, Random, Portfolio) + Fig 4 (RA-BO, Random+EXP3) on Deceptive (n = 2)
#   D  the same on Hartmann3
# 5 seeds, T = 50 BO evaluations after n0 = 3d (reduced from 10 seeds, T = 100).
# Fig 4's UHE-BO rows are copied from Fig 2's CSV (same program, same keys: not run twice).
# Usage: bash experiments/uhe/run_session2.sh   (logs in experiments/results/uhe/session2_*.log)
PY=${PY:-.venv/bin/python}
R=experiments/results/uhe
A="--seeds 5 --budget 50 --tag _s5_T50"
copy() {  # UHE-BO rows of fig2 -> the fig4 CSV of problem $1
  $PY -c "import pandas as pd; d = pd.read_csv('$R/fig2_s5_T50_$1.csv'); d[d.method == 'uhe_bo'].to_csv('$R/fig4_s5_T50_$1.csv', index=False)"
}
( $PY experiments/uhe/timing.py --budget 100 --problems hartmann3 --methods uhe_bo,map,mcmc
  $PY experiments/uhe/synthetic.py --figure e0 --problems gp_d1 $A
  $PY experiments/uhe/synthetic.py --figure fig2 --problems h1 --methods uhe_bo,map,random,portfolio $A
) > $R/session2_A_timing_e0_h1.log 2>&1 &
for p in deceptive2 hartmann3; do
( $PY experiments/uhe/synthetic.py --figure fig2 --problems $p --methods uhe_bo,map,random,portfolio $A
  copy $p; $PY experiments/uhe/synthetic.py --figure fig4 --problems $p --methods ra_bo,random_exp3 $A
) > $R/session2_$p.log 2>&1 &
done
