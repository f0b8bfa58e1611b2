"""uCVS (Hoang, Nguyen & Tran, AAAI 2025, arXiv:2412.15863): every figure, table and study of
docs/papers/ucvs.md as a declared study, run by ``jbo reproduce ucvs <figure> [--budget smoke|default|paper]``
(jbo/reproduce.py). Each figure's files are in experiments/results/ucvs/<figure>/; the default budgets are
the commands that wrote them, in order.
"""

from __future__ import annotations

import shlex

from jbo.reproduce import Budget, Figure, Paper, Step

OBJECTIVES = ("ucvs:hartmann12", "ucvs:ackley12", "ucvs:levy12", "ucvs:plant", "ucvs:airfoil")
FIG1_METHODS = ("uCVS", "UCB-PSQ", "TS-PSQ", "ETC-50")  # the paper's Fig 1
NAIVE = ("UCB-naive", "TS-naive", "EI-naive")

# the grid's settings that come from the paper (or its released code) and those that are ours (fig1.py)
GRID_PAPER = {
    "budget C": 100,
    "exploration": "while spent <= 0.6 C",
    "UCB weight": "2 (beta = 4)",
    "alpha": "0.1, halved every d exploitation steps",
    "cost sets": "cheap, moderate",
    "variances": "0.02, 0.04",
    "seeds": 5,
    "initial points": "5 free uniform full-domain queries",
    "GP": "SE-ARD, lengthscale 0.2, output scale 1, noise 1e-4, no standardisation (the released code's)",
}
GRID_OURS = {
    "observation noise": 0.01,
    "cost noise": "std 0.02 on sets with c >= 0.1, clipped to [0.001, 2]",
    "alpha shift": "f_lo (the minimum of f; plant -1.133)",
    "budget rule": "a step runs while spent < C",
    "T_max": "750 steps (a truncation flag)",
    "acquisitions": "16 Monte-Carlo rows, 16 random candidates + the previous maximiser, 1 start x 5 Adam steps",
    "uCVS hyper-parameters": "fixed (--refit never; the released code refits every exploitation step)",
    "data-prefix buckets": "powers of two in fig1_grid2 / fig1_grid3, at most 128 rows apart from fig1_grid4 on",
    "regret": "on an independent 8192-row free-variable sample",
    "airfoil F+": "our own search (experiments/results/ucvs/reference/)",
    "more seeds": "5-9 for uCVS, UCB-PSQ, TS-PSQ, ETC-50 in every cell (10 in all)",
    "naive additions": "UCB-naive, TS-naive, EI-naive; 12-D objectives, cheap costs, v = 0.02, 10 seeds",
    "other methods": "ETC-50 with cost tiers, UCB-CVS with known costs, random",
}


def step(script: str, args: str = "", seeds: str | None = None) -> Step:
    """One script run; `args` as written on a command line (shlex: quotes keep a method name with spaces)."""
    return Step(f"experiments/ucvs/{script}", tuple(shlex.split(args)), seeds=seeds)


def fig1(args: str, seeds: str | None = "--seeds") -> Step:
    """experiments/ucvs/fig1.py; seeds: its seed-count flag, None where a step runs fixed seeds (--seed-start)."""
    return step("fig1.py", args, seeds)


def summarize(args: str) -> Step:
    return step("summarize.py", args)


def naive_ei(objective: str, seeds: int, start: int, tag: str) -> Step:
    """EI-naive on one objective, cheap costs, v = 0.02: a few seeds a program, so that a stopped run
    keeps what it finished (8-11 min a run here)."""
    cell = f"--objectives {objective} --methods EI-naive --costs cheap --variances 0.02"
    return fig1(f"{cell} --seeds {seeds} --seed-start {start} --tag {tag}", seeds=None)


GRID = "fig1_grid2_a fig1_grid2_b fig1_grid3_ts fig1_grid4_ucvs"
BASELINES = "UCB-PSQ TS-PSQ ETC-50"
FIG1_2 = Figure(
    name="fig1_2",
    title="Figs 1-2 and the R^f / R^c / i_* table: simple regret and evaluations against the cost spent, "
    "5 objectives x cheap, moderate costs x v = 0.02, 0.04, 7 methods, with seeds 5-9 and the naive additions",
    methods=(*FIG1_METHODS, "ETC-50 (tiers)", "UCB-CVS (known costs)", "random", *NAIVE),
    problems=OBJECTIVES,
    paper_settings=GRID_PAPER,
    our_settings=GRID_OURS,
    claims=("1", "2", "3", "4", "5"),
    budgets={
        "smoke": Budget(
            steps=(
                fig1(
                    "--quick --tmax 16 --objectives hartmann12 --methods uCVS UCB-PSQ --costs cheap --variances 0.02 "
                    "--tag fig1_smoke",
                    seeds=None,
                ),
                summarize("--quick --tags fig1_smoke --out fig1_smoke"),
            ),
            cpu_minutes=0.5,
            note="uCVS and UCB-PSQ on Hartmann-12D, one cell, one seed, 16 steps, tiny acquisitions (--quick), "
            "then the summary",
        ),
        "default": Budget(
            steps=(
                fig1("--objectives hartmann12 ackley12 levy12 plant --bucket-step none --tag fig1_grid2_a"),
                fig1("--objectives airfoil --bucket-step none --tag fig1_grid2_b"),
                summarize("--tags fig1_grid2_a fig1_grid2_b --out fig1_grid2"),
                fig1("--methods TS-PSQ --bucket-step none --tag fig1_grid3_ts"),
                summarize("--tags fig1_grid2_a fig1_grid2_b fig1_grid3_ts --out fig1_grid3"),
                fig1("--methods uCVS --tag fig1_grid4_ucvs"),
                summarize(f"--tags {GRID} --out fig1_grid4"),
                fig1(
                    f"--objectives hartmann12 ackley12 levy12 --methods uCVS {BASELINES} --seeds 5 --seed-start 5 "
                    "--tag fig1_seeds5to9",
                    seeds=None,
                ),
                fig1(
                    "--objectives hartmann12 --methods UCB-naive TS-naive EI-naive --costs cheap --variances 0.02 "
                    "--seeds 10 --tag fig1_naive",
                    seeds=None,
                ),
                fig1(
                    "--objectives ackley12 levy12 --methods UCB-naive TS-naive --costs cheap --variances 0.02 "
                    "--seeds 10 --tag fig1_naive_b",
                    seeds=None,
                ),
                naive_ei("ackley12", 1, 0, "fig1_naive_c"),
                naive_ei("levy12", 2, 0, "fig1_naive_d"),
                naive_ei("levy12", 2, 2, "fig1_naive_e"),
                naive_ei("levy12", 2, 4, "fig1_naive_f"),
                naive_ei("levy12", 2, 6, "fig1_naive_g"),
                naive_ei("levy12", 2, 8, "fig1_naive_h"),
                fig1(
                    f"--objectives plant airfoil --methods uCVS {BASELINES} --seeds 5 --seed-start 5 "
                    "--tag fig1_seeds5to9_pa",
                    seeds=None,
                ),
                summarize(f"--tags {GRID} --add-seeds fig1_seeds5to9 fig1_seeds5to9_pa fig1_naive --out fig1_seeds10"),
                naive_ei("ackley12", 2, 1, "fig1_naive_ackley_1"),
                naive_ei("ackley12", 3, 3, "fig1_naive_ackley_3"),
                naive_ei("ackley12", 2, 6, "fig1_naive_ackley_6"),
                naive_ei("ackley12", 2, 8, "fig1_naive_ackley_8"),
            ),
            cpu_minutes=480,
            note="the grid (fig1_grid2_a/b: 50 + 63 min) with TS-PSQ's and uCVS's re-runs (fig1_grid3_ts, "
            "fig1_grid4_ucvs: 15 + 43 min) and their summaries, seeds 5-9 (22 + 36 min), the naive additions "
            "(Hartmann 24 min, UCB-/TS-naive on Ackley and Levy 25 min, EI-naive 8-11 min a run); --seeds N "
            "(N <= 5) sets the grid's seeds only. The earlier grid fig1_grid_* (airfoil with 2 methods, the spec's "
            "airfoil F+) is kept beside them",
        ),
        "paper": Budget(
            steps=(
                fig1(
                    "--methods uCVS ETC-50 --refit spec --num-mc 1500 --num-raw 100 --starts 2 --opt-steps 16 "
                    "--opt-method lbfgs --tag fig1_paper_a"
                ),
                fig1(
                    "--methods UCB-PSQ TS-PSQ --num-mc 1500 --num-raw 2000 --starts 2 --opt-steps 16 "
                    "--opt-method lbfgs --tag fig1_paper_b"
                ),
                summarize("--tags fig1_paper_a fig1_paper_b --out fig1_paper"),
            ),
            cpu_minutes=1500,
            note="the paper's four methods on the whole grid, 5 seeds, at the released code's sizes (1500 "
            "Monte-Carlo rows, 100 screened points for the expected sets and 2000 for the full set, 2 starts x "
            "16 L-BFGS iterations) with uCVS's per-step refit; not run: the time is a rough estimate "
            "(1.5x the per-run time of acq_sizes' uCVS runs)",
        ),
    },
)

# the spec's suggested acquisition sizes (bocvs.md 7), uCVS with the spec's refit; the files keep the name
# fig1_authors_* (they are not the released code's sizes)
SPEC_SIZES = "--refit spec --num-mc 256 --num-raw 512 --starts 4 --opt-steps 30 --opt-method lbfgs"


def spec_sized(objectives: str, costs: str, variance: str, methods: str, seeds: int, start: int, tag: str) -> Step:
    return fig1(
        f"--figure acq_sizes --objectives {objectives} --costs {costs} --variances {variance} {SPEC_SIZES} "
        f"--methods {methods} --seeds {seeds} --seed-start {start} --tag fig1_authors_{tag}",
        seeds=None,
    )


def h(costs, variance, methods, seeds, start, tag):  # Hartmann-12D
    return spec_sized("hartmann12", costs, variance, methods, seeds, start, tag)


def a(variance, methods, seeds, start, tag):  # Ackley-12D, cheap costs
    return spec_sized("ackley12", "cheap", variance, methods, seeds, start, tag)


def lv(methods, seeds, start, tag):  # Levy-12D, cheap costs, v = 0.02
    return spec_sized("levy12", "cheap", "0.02", methods, seeds, start, tag)


def al(methods, seeds, start, tag):  # Ackley-12D and Levy-12D, cheap costs, v = 0.02
    return spec_sized("ackley12 levy12", "cheap", "0.02", methods, seeds, start, tag)


ACQ_SIZES = Figure(
    name="acq_sizes",
    title="Fig 1 at the spec's suggested acquisition sizes with uCVS's refit: uCVS and the Fig 1 baselines, "
    "10 seeds (the sensitivity notes of claims 1 and 5)",
    methods=FIG1_METHODS,
    problems=OBJECTIVES[:3],
    paper_settings={
        k: GRID_PAPER[k] for k in ("budget C", "exploration", "UCB weight", "alpha", "initial points", "GP")
    },
    our_settings={
        "acquisitions": "256 Monte-Carlo rows, 512 candidates, top-4 x 30 L-BFGS steps (the spec's suggestion; "
        "the released code: 1500 rows, 100 / 2000 screened points, 2 L-BFGS-B starts)",
        "uCVS hyper-parameters": "refitted by 10 Adam steps at every exploitation step (the spec's refit); "
        "the baselines keep them fixed, as in the released code",
        "cells": "the 12-D objectives with cheap costs, v = 0.02; Hartmann also moderate costs at v = 0.02 and 0.04 "
        "and cheap costs at v = 0.04; Ackley cheap costs at v = 0.04",
        "seeds": "10 (uCVS one or two a program)",
        **{k: GRID_OURS[k] for k in ("observation noise", "cost noise", "alpha shift", "T_max", "regret")},
    },
    claims=("1", "5"),
    budgets={
        "smoke": Budget(
            steps=(
                fig1(
                    "--figure acq_sizes --objectives hartmann12 --costs cheap --variances 0.02 --refit spec "
                    "--num-mc 8 --num-raw 16 --starts 2 --opt-steps 3 --opt-method lbfgs --methods uCVS --seeds 1 "
                    "--tmax 16 --eval-rows 256 --tag fig1_authors_quick"
                ),
            ),
            cpu_minutes=0.5,
            note="uCVS with the refit and L-BFGS on Hartmann-12D, one cell, one seed, 16 steps, small sizes",
        ),
        "default": Budget(
            steps=(
                h("cheap", "0.02", "uCVS", 1, 0, "a"),
                h("cheap", "0.02", "uCVS", 2, 1, "b"),
                h("cheap", "0.02", "uCVS", 2, 3, "c"),
                h("cheap", "0.02", "uCVS", 1, 5, "d"),
                a("0.02", "uCVS", 1, 0, "e"),
                lv("uCVS", 1, 0, "f"),
                a("0.02", "uCVS", 1, 1, "g"),
                lv("uCVS", 1, 1, "h"),
                h("cheap", "0.02", "UCB-PSQ", 6, 0, "ucb"),
                h("cheap", "0.02", "ETC-50", 6, 0, "etc"),
                lv("uCVS", 2, 2, "i"),
                lv("uCVS", 2, 4, "j"),
                h("cheap", "0.02", "uCVS", 2, 6, "k"),
                h("cheap", "0.02", "uCVS", 2, 8, "l"),
                a("0.02", "uCVS", 2, 2, "m"),
                a("0.02", "uCVS", 2, 4, "n"),
                h("cheap", "0.02", "UCB-PSQ ETC-50", 4, 6, "base3"),
                h("cheap", "0.02", "TS-PSQ", 10, 0, "ts"),
                al("UCB-PSQ", 6, 0, "ucb2"),
                al("ETC-50", 6, 0, "etc2"),
                al("TS-PSQ", 6, 0, "ts2"),
                a("0.02", "uCVS", 2, 6, "o"),
                a("0.02", "uCVS", 2, 8, "p"),
                lv("uCVS", 2, 6, "q"),
                lv("uCVS", 2, 8, "r"),
                al("UCB-PSQ", 4, 6, "ucb3"),
                al("ETC-50", 4, 6, "etc3"),
                al("TS-PSQ", 4, 6, "ts3"),
                *(h("moderate", "0.02", "uCVS", 2, s, f"mod_{s}") for s in (0, 2, 4, 6, 8)),
                h("moderate", "0.02", BASELINES, 10, 0, "mod_base"),
                *(h("moderate", "0.04", "uCVS", 2, s, f"mod04_{s}") for s in (0, 2, 4, 6, 8)),
                h("moderate", "0.04", BASELINES, 10, 0, "mod04_base"),
                *(a("0.04", "uCVS", 2, s, f"ack04_{s}") for s in (0, 2, 4, 6, 8)),
                a("0.04", BASELINES, 10, 0, "ack04_base"),
                h("cheap", "0.04", "uCVS", 2, 0, "h04_0"),
                h("cheap", "0.04", BASELINES, 10, 0, "h04_base"),
                h("cheap", "0.04", "uCVS", 2, 6, "h04_6"),
                h("cheap", "0.04", "uCVS", 2, 2, "h04_2"),
                h("cheap", "0.04", "uCVS", 2, 8, "h04_8"),
                h("cheap", "0.04", "uCVS", 1, 4, "h04_4"),
                h("cheap", "0.04", "uCVS", 1, 5, "h04_5"),
            ),
            cpu_minutes=770,
            note="the compile + run seconds of the committed timing CSVs (load 1-2.4): uCVS 3-23 min a program on "
            "Ackley, Levy and Hartmann at v = 0.02, 64-139 min on Hartmann cheap v = 0.04; the baselines 1-6 min",
        ),
    },
)

ABLATION_CELLS = "--objectives hartmann12 --costs cheap moderate --variances 0.02"
ABLATION = Figure(
    name="ablation",
    title="Ablation: the paper preset against the released code's (official), and the alpha schedules, with "
    "fixed hyper-parameters and with the per-step refit",
    methods=(
        "uCVS paper (alpha halved every d)",
        "uCVS paper (alpha halved once)",
        "uCVS paper (alpha constant)",
        "uCVS official",
    ),
    problems=("ucvs:hartmann12",),
    paper_settings={
        "paper preset": "Algorithm 1: exploration from set 1, alpha = 0.1 halved every d exploitation steps",
        "official preset": "the released code's rules: exploration from set 2, UCB weight 1.96, LCB weight 0.3 + "
        "best observation, no alpha, unclipped cost LCB",
        **{k: GRID_PAPER[k] for k in ("budget C", "exploration", "initial points", "GP")},
    },
    our_settings={
        "alpha schedules": "halved once, constant (D3)",
        "cells": "Hartmann-12D, cheap and moderate costs, v = 0.02",
        "seeds": "5 (ablation_grid: 3, cheap costs only)",
        "hyper-parameters": "fixed (ablation_grid, ablation2) or refitted by 10 Adam steps at every exploitation "
        "step (ablation_refit)",
        "acquisitions": GRID_OURS["acquisitions"],
    },
    budgets={
        "smoke": Budget(
            steps=(
                step(
                    "ablation.py",
                    "--quick --tmax 16 --objectives hartmann12 --costs cheap --refit never "
                    "--variants 'uCVS official' --tag ablation_smoke",
                ),
            ),
            cpu_minutes=0.3,
            note="the official preset on Hartmann-12D, one cell, one seed, 16 steps (--quick)",
        ),
        "default": Budget(
            steps=(
                step(
                    "ablation.py",
                    "--objectives hartmann12 --costs cheap --variances 0.02 --refit never --seeds 3 "
                    "--bucket-step none --tag ablation_grid",
                    seeds="--seeds",
                ),
                step(
                    "ablation.py",
                    f"{ABLATION_CELLS} --refit never --seeds 5 --bucket-step none --tag ablation2",
                    seeds="--seeds",
                ),
                step(
                    "ablation.py",
                    f"{ABLATION_CELLS} --refit spec --seeds 5 "
                    "--variants 'uCVS paper (alpha halved every d)' 'uCVS official' --tag ablation_refit",
                    seeds="--seeds",
                ),
            ),
            cpu_minutes=115,
            note="ablation_grid 17 min, ablation2 14 min alone, ablation_refit 84 min on a shared machine "
            "(the *_wall.txt files)",
        ),
    },
)

REFERENCE = Figure(
    name="reference",
    title="Reference constants: F*_i of every control set and variance, F+ and the minimum of f (the alpha shift); "
    "i_* and C_* follow",
    problems=OBJECTIVES,
    paper_settings={
        "F*_i": "max_x E f([x^i, X^-i]) over the free variables' truncated normal around 0.5",
        "variances": "0.01, 0.02, 0.04, 0.08",
    },
    our_settings={
        "Monte-Carlo rows": "8192 (numpy seed 0; airfoil 2048)",
        "search": "2048 screened control values + the known maximiser, the 6 best start SciPy L-BFGS-B (airfoil 3)",
        "minimum of f": "200 000 uniform points, the 20 best start L-BFGS-B",
        "validation": "airfoil's maximisers re-evaluated on an independent 8192-row sample (numpy seed 123)",
    },
    budgets={
        "smoke": Budget(
            steps=(
                step("reference.py", "--quick --objectives hartmann12 --variances 0.02"),
                step("reference.py", "--validate --quick --objectives airfoil --variances 0.02"),
            ),
            cpu_minutes=0.3,
            note="Hartmann-12D at v = 0.02, 1024 rows, fewer starts; airfoil's committed maximisers at v = 0.02 "
            "re-evaluated on 1024 rows (the committed table records the maximisers of airfoil only)",
        ),
        "default": Budget(
            steps=(
                step("reference.py", "--objectives hartmann12 ackley12 levy12"),
                step("reference.py", "--objectives plant"),
                step("reference.py", "--objectives airfoil --variances 0.02 0.04"),
                step("reference.py", "--validate --objectives airfoil --variances 0.02 0.04"),
            ),
            cpu_minutes=45,
            note="the 12-D objectives 4.5 min and plant 39 min under load 7-15 (reference_constants_part1/2.log), "
            "airfoil 3 min (reference_airfoil.log); with --update it also rewrites jbo/problems/data/ucvs_reference.npz",
        ),
    },
)

PLANT_NEEDLE_RUN = Budget(steps=(step("plant_needle.py"),), cpu_minutes=0.2, note="f at 200 000 uniform points")
PLANT_NEEDLE = Figure(
    name="plant_needle",
    title="How hard the plant simulator is for 100 evaluations: quantiles of f and the mean best of 100 uniform "
    "points (Fig 1's plant cells)",
    problems=("ucvs:plant",),
    our_settings={"points": "200 000 uniform points of the unit cube (key 0), 2000 groups of 100"},
    budgets={"smoke": PLANT_NEEDLE_RUN, "default": PLANT_NEEDLE_RUN},
)

EQUAL_WORK = Figure(
    name="equal_work",
    title="Speed against the authors' released code (Fsoft-AIC/BO-uCVS), per equal work: UCB-PSQ, ETC-50 and uCVS "
    "on Hartmann-12D",
    methods=("UCB-PSQ", "ETC-50", "uCVS"),
    problems=("ucvs:hartmann12",),
    paper_settings={
        "problem": "Hartmann6 with 6 dummy variables, cheap costs (costs_id 3), v = 0.02 (var_id 2), 5 initial points",
        "GP": GRID_PAPER["GP"],
        "released code's sizes": "1500 Monte-Carlo rows, screening 2000 (full set) / 1500 (uCVS's full-set LCB) / "
        "100 (expected sets), SciPy L-BFGS-B from 2 starts",
        "presets": "uCVS official, ETC-50 with the released code's groups",
    },
    our_settings={
        "budgets": "UCB-PSQ C = 4.5, ETC-50 C = 0.25, uCVS C = 1.5 stopped after 8 steps (the paper: C = 100)",
        "cost noise": "std 0.01 on every set",
        "jbo's optimiser": "29 Adam steps or 16 L-BFGS iterations per start (the released code's L-BFGS-B budget)",
        "repeats": "3 alternations for UCB-PSQ and ETC-50, 1 for uCVS; one seed; one core (--pin 1)",
        "the authors' code": "a local copy, $BO_UCVS_PATH (without it only jbo's runs are made)",
    },
    budgets={
        "smoke": Budget(
            steps=(
                step(
                    "equal_work.py",
                    "--authors none --methods UCB-PSQ --repeats 1 --lbfgs-steps 0 --max-load 99 "
                    "--budget UCB-PSQ=1.5 --opt-steps 2 --tmax 8 --out equal_work_quick.json",
                ),
            ),
            cpu_minutes=0.4,
            note="jbo's UCB-PSQ only (no authors' code), 2 steps, one repeat",
        ),
        "default": Budget(
            steps=(step("equal_work.py", "--pin 1 --max-load 99"),),
            cpu_minutes=69,
            note="needs $BO_UCVS_PATH (a local copy of GitHub Fsoft-AIC/BO-uCVS with torch, gpytorch, BoTorch) and "
            "a second CPU; 69 min on one core beside other work (load 9-12). equal_work_authors_{ucb,etc}.{json,log} "
            "(one C = 100 run of each baseline of the authors' code) are kept beside it",
        ),
        "paper": Budget(
            steps=(
                step(
                    "equal_work.py",
                    "--pin 1 --max-load 99 --methods uCVS --budget uCVS=100 --steps uCVS=0 --tmax 750 "
                    "--ucvs-repeats 3 --out equal_work_c100.json",
                ),
            ),
            cpu_minutes=4000,
            note="uCVS at C = 100 against the authors' code, 3 alternations; not run: the authors' side makes about "
            "700 steps, most of them exploitation steps of 1-5 min (rough estimate)",
        ),
    },
)

SPEED = Figure(
    name="speed",
    title="Speed checks of the grid: data-prefix buckets, the inner optimiser, the simulators' expected values, "
    "run-to-run noise",
    methods=("uCVS", "UCB-PSQ", "TS-PSQ", "ETC-50", "UCB-CVS (known costs)"),
    problems=("ucvs:levy12", "ucvs:airfoil", "ucvs:plant", "ucvs:hartmann12"),
    our_settings={
        "bucket checks": "one seed, cheap costs, v = 0.02, the grid's acquisition sizes, T_max = 750 "
        "(bucket_check.json: Levy-12D, buckets against the whole buffer; bucket_step_check.json: Levy-12D and "
        "airfoil, the 128-row cap against powers of two)",
        "inner optimiser": "the expected UCB at n = 750, 16 rows; TS-PSQ's expected path at n = 512 (inner_speed.json)",
        "simulators": "one expected value at 1500 rows, 50 repeats (simulator_speed.json)",
        "noise": "plant's uCVS, UCB-PSQ, ETC-50, UCB-CVS programs re-run (fig1_grid3_check_*); "
        "timing_noise_2026-11-23.txt: console lines recorded by hand",
    },
    budgets={
        "smoke": Budget(
            steps=(
                step(
                    "bucket_check.py",
                    "--compare step --objectives levy12 --methods random --tmax 16 --out bucket_step_check_quick.json",
                ),
                step("inner_speed.py", "--quick"),
                step("simulator_speed.py", "--quick"),
            ),
            cpu_minutes=0.5,
            note="the bucket-step check with random search at 16 steps; the inner optimiser at 64 observations; "
            "the simulators at 64 rows",
        ),
        "default": Budget(
            steps=(
                step("bucket_check.py"),
                step("simulator_speed.py"),
                fig1(
                    "--figure speed --objectives plant --methods uCVS UCB-PSQ ETC-50 'UCB-CVS (known costs)' "
                    "--bucket-step none --tag fig1_grid3_check"
                ),
                step("inner_speed.py"),
                step("bucket_check.py", "--compare step"),
            ),
            cpu_minutes=25,
            note="bucket_check 2.5 min, simulator_speed 1 min, the plant re-run 12 min, inner_speed 1.5 min, the "
            "bucket-step check 7 min; experiments/ucvs/ab_speed.py (an A/B of one method against another commit) "
            "is run by hand",
        ),
    },
)

THEORY = Figure(
    name="theory",
    title="Theorems 1 and 3, Lemma 2: sublinear quality and cost regret with unknown random costs",
    claims=("4",),
    not_run="theorems; the grid runs one budget (C = 100), so the growth of R^f and R^c with T is not measured, "
    "and the theorems' ingredients are checked by unit tests (tests/test_ucvs.py)",
)

PAPER = Paper(
    name="ucvs",
    title="uCVS (Hoang, Nguyen & Tran, AAAI 2025, arXiv:2412.15863)",
    page="docs/papers/ucvs.md",
    figures=(FIG1_2, ACQ_SIZES, ABLATION, REFERENCE, PLANT_NEEDLE, EQUAL_WORK, SPEED, THEORY),
)
