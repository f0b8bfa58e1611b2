"""Command line: `jbo demo` (the main job), `jbo study CONFIG.toml` (a grid from a config file,
resumable; see jbo.study_config), `jbo cache` (the persistent compilation cache; see jbo.cache),
`jbo problems`, `jbo algorithms`."""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

DEMO_METHODS = ["random_search", "gp_ucb", "gp_ei"]
DEMO_PROBLEMS = ["branin", "hartmann6"]


def demo(args) -> int:
    import jax

    import jbo

    methods = {
        "random_search": jbo.algorithms.get("random_search", num_initial=args.num_initial),
        "gp_ucb": jbo.algorithms.get("gp_ucb", num_initial=args.num_initial),
        "gp_ei": jbo.algorithms.get("gp_ei", num_initial=args.num_initial),
    }
    problems = {"branin": jbo.problems.get("branin"), "hartmann6": jbo.problems.get("hartmann6")}
    methods = {k: v for k, v in methods.items() if k in args.methods}
    problems = {k: v for k, v in problems.items() if k in args.problems}
    steps = {"branin": args.steps_branin, "hartmann6": args.steps_hartmann6}
    print(
        f"jbo demo: {args.seeds} seeds x {list(methods)} x {list(problems)}; steps {steps}; "
        f"backend {jax.default_backend()} on {platform.machine()} ({platform.processor() or 'cpu'})",
        flush=True,
    )
    t0 = time.perf_counter()
    table = jbo.studies.run_study(methods, problems, args.seed, steps, args.seeds)
    out = Path(args.out)
    jbo.studies.save(table, out / "demo.csv")
    jbo.studies.plot(table, out / "demo_regret.png")
    import json

    import pandas as pd

    summ = jbo.studies.summary(table, "simple_regret")
    summ.to_csv(out / "demo_summary.csv", index=False)
    total = time.perf_counter() - t0
    meta = {
        "command": "jbo demo " + " ".join(sys.argv[2:]) if sys.argv[1:2] == ["demo"] else "jbo demo",
        "machine": jbo.studies.machine_info(),
        "seeds": args.seeds,
        "seed": args.seed,
        "num_initial": args.num_initial,
        "steps": steps,
        "total_seconds": total,
        "rows": summ.to_dict(orient="records"),
    }
    (out / "demo_summary.json").write_text(json.dumps(meta, indent=1))
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(summ.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(
        f"wrote {out / 'demo.csv'}, {out / 'demo_summary.csv'} (.json) and {out / 'demo_regret.png'} "
        f"in {total:.1f} s total"
    )
    return 0


def study(args) -> int:
    import jbo.study_config

    if args.check:
        print(jbo.study_config.describe(jbo.study_config.parse(args.config)))
        return 0
    out = Path(args.out) if args.out else Path(f"jbo_study_{Path(args.config).stem}")
    t0 = time.perf_counter()
    table = jbo.study_config.run(args.config, out, fresh=args.fresh, progress=not args.quiet)
    summ = jbo.studies.summary(table)
    import pandas as pd

    with pd.option_context("display.width", 160, "display.max_columns", 20, "display.max_colwidth", 40):
        print(summ.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(
        f"wrote {out / 'table.csv'} and {out / 'summary.csv'} ({len(table)} rows) in {time.perf_counter() - t0:.1f} s"
    )
    return 0


def cache(args) -> int:
    import jbo

    if args.clear:
        print(f"removed {jbo.cache.clear()} files from {jbo.cache.directory()}")
    if args.repair:
        bad = jbo.cache.repair()
        print(f"removed {len(bad)} unreadable entries" + (f": {', '.join(bad)}" if bad else ""))
    u = jbo.cache.usage()
    if u["directory"] is None:
        print("persistent compilation cache: off (JBO_CACHE=0)")
    else:
        print(f"persistent compilation cache: {u['directory']} ({u['entries']} files, {u['bytes'] / 2**20:.1f} MiB)")
    return 0


def _first_line(obj) -> str:
    """The first paragraph of obj's docstring, on one line, cut at 120 characters."""
    doc = " ".join((getattr(obj, "__doc__", None) or "").strip().split("\n\n")[0].split())
    return doc if len(doc) <= 120 else doc[:117] + "..."


def _space(problem) -> str:
    from jbo.spaces import Box, ControlSets, FiniteArms

    s = problem.space
    text = (
        f"box, d = {s.dim}"
        if isinstance(s, Box)
        else f"{s.num_arms} arms in d = {s.dim}"
        if isinstance(s, FiniteArms)
        else f"{s.num_sets} control sets, d = {s.dim}"
        if isinstance(s, ControlSets)
        else type(s).__name__
    )
    context = getattr(problem, "context_dim", 0)
    return text + (f", context d = {context}" if context else "")


def _options(factory, built, fields: bool) -> str:
    import dataclasses
    import inspect

    try:
        params = inspect.signature(factory).parameters
        named = [n for n, p in params.items() if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    except (TypeError, ValueError):
        named = []
    if not named and fields and dataclasses.is_dataclass(built):
        named = [f.name for f in dataclasses.fields(built)]
    return ", ".join(named) if named else "-"


def listing(kind: str, out=None) -> int:
    """`jbo problems` / `jbo algorithms`: each entry with its space (problems) or Params (algorithms),
    its options and a one-line description."""
    import jbo

    out = out or sys.stdout
    registry = jbo.problems if kind == "problems" else jbo.algorithms
    for name in registry.names():
        factory = registry._REGISTRY[name]
        about = registry.describe(name) if kind == "problems" else ""
        try:
            built = registry.get(name)
        except Exception as e:  # noqa: BLE001  (needs options or an optional extra: say so, list the rest)
            print(
                f"{name}\n    options: {_options(factory, None, False)}\n    (not built with defaults here: "
                f"{type(e).__name__}: {str(e).splitlines()[0][:90]})",
                file=out,
            )
            if about:
                print(f"    {about}", file=out)
            continue
        print(name, file=out)
        if kind == "problems":
            print(f"    space: {_space(built)}; optimum: {getattr(built, 'optimal_value', None)}", file=out)
        else:
            fields = [f for f in jbo.checks.param_fields(built.default_params())]
            print(f"    params: {', '.join(fields) if fields else '-'}", file=out)
        print(f"    options: {_options(factory, built, kind == 'algorithms')}", file=out)
        line = about[:120] if about else _first_line(factory) or _first_line(type(built))
        if line:
            print(f"    {line}", file=out)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="jbo", description="JAX functional experiment engine for BO research")
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="16 seeds of random search, GP-UCB and GP-EI on branin and hartmann6")
    d.add_argument("--seeds", type=int, default=16)
    d.add_argument("--seed", type=int, default=0, help="master PRNG seed")
    d.add_argument("--num-initial", type=int, default=6)
    d.add_argument("--steps-branin", type=int, default=40)
    d.add_argument("--steps-hartmann6", type=int, default=60)
    d.add_argument("--out", default="jbo_demo_output")
    d.add_argument("--methods", nargs="+", default=DEMO_METHODS, choices=DEMO_METHODS, help="a subset of the methods")
    d.add_argument(
        "--problems", nargs="+", default=DEMO_PROBLEMS, choices=DEMO_PROBLEMS, help="a subset of the problems"
    )
    s = sub.add_parser("study", help="run (or resume) a study grid from a TOML config (see jbo.study_config)")
    s.add_argument("config", help="the study's .toml file")
    s.add_argument(
        "--out",
        default=None,
        help="output directory (default: jbo_study_<config name>); finished cells there are kept and skipped (resume)",
    )
    s.add_argument("--fresh", action="store_true", help="delete the study's previous results in --out and start over")
    s.add_argument("--check", action="store_true", help="validate the config and list its cells; run nothing")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    c = sub.add_parser("cache", help="where the persistent compilation cache is and its size (see jbo.cache)")
    c.add_argument("--clear", action="store_true", help="delete the cached programs")
    c.add_argument(
        "--repair", action="store_true", help="delete entries that cannot be read (left by a killed process)"
    )
    sub.add_parser("problems", help="list the registered problems: space, optimum, options, description")
    sub.add_parser("algorithms", help="list the registered algorithms: Params, options, description")
    args = parser.parse_args(argv)
    if args.command == "demo":
        return demo(args)
    if args.command in ("study", "cache"):
        try:
            return (study if args.command == "study" else cache)(args)
        except ValueError as e:
            print(f"jbo {args.command}: error: {e}", file=sys.stderr)
            return 2
    return listing(args.command)


if __name__ == "__main__":
    sys.exit(main())
