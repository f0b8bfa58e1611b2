"""Command line: `jbo demo` (the main job), `jbo study CONFIG.toml` (a grid from a config file,
resumable; see jbo.study_config), `jbo cache` (the persistent compilation cache; see jbo.cache),
`jbo problems`, `jbo algorithms`, `jbo reproduce PAPER [FIGURE ...]` (a paper's declared figures: run,
resume, grade; see jbo.reproduce). `--import MODULE` (study, problems, algorithms) imports a user
module first, so that what it registers can be used or listed by name (see jbo.plugins)."""

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

    # GP-UCB and GP-EI are one program per problem (jbo.studies.Settings over an acquisition Choice):
    # one compile; GP-EI's runs are its own program's bit for bit, GP-UCB's to rounding
    gp = {k: v for k, v in {"gp_ucb": "ucb", "gp_ei": "ei"}.items() if k in args.methods}
    methods = {}
    if "random_search" in args.methods:
        methods["random_search"] = jbo.algorithms.get("random_search", num_initial=args.num_initial)
    if len(gp) > 1:
        methods["gp"] = jbo.studies.Settings.choice(gp, num_initial=args.num_initial)
    else:
        methods.update({k: jbo.algorithms.get(k, num_initial=args.num_initial) for k in gp})
    problems = {"branin": jbo.problems.get("branin"), "hartmann6": jbo.problems.get("hartmann6")}
    problems = {k: v for k, v in problems.items() if k in args.problems}
    steps = {"branin": args.steps_branin, "hartmann6": args.steps_hartmann6}
    print(
        f"jbo demo: {args.seeds} seeds x {[m for m in DEMO_METHODS if m in args.methods]} x {list(problems)}; steps {steps}; "
        f"backend {jax.default_backend()} on {platform.machine()} ({platform.processor() or 'cpu'})",
        flush=True,
    )
    t0 = time.perf_counter()
    table = jbo.studies.run_study(methods, problems, key=args.seed, num_steps=steps, num_seeds=args.seeds)
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
    if args.verify:
        return verify(jbo.study_config.parse(args.config), out)
    t0 = time.perf_counter()
    try:
        table = jbo.study_config.run(args.config, out, fresh=args.fresh, progress=not args.quiet)
    except jbo.study_config.StudyInterrupted as e:
        print(f"jbo study: {e}", file=sys.stderr)
        return 130
    summ = jbo.studies.summary(table)
    import pandas as pd

    with pd.option_context("display.width", 160, "display.max_columns", 20, "display.max_colwidth", 40):
        print(summ.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    plot = out / jbo.study_config.PLOT
    wrote = f"{out / 'table.csv'}, {out / 'summary.csv'}" + (f" and {plot}" if plot.exists() else "")
    print(f"wrote {wrote} ({len(table)} rows) in {time.perf_counter() - t0:.1f} s")
    if not plot.exists():
        print("no regret plot: matplotlib is not installed (pip install 'jbo[plots]')")
    return 0


def verify(study, out: Path) -> int:
    """`jbo study CONFIG --verify`: every cell's state in `out`; exit 1 when a cell file cannot be used."""
    import jbo.study_config

    if not (out / jbo.study_config.MANIFEST).exists():
        print(f"jbo study: error: {out} holds no study (no {jbo.study_config.MANIFEST})", file=sys.stderr)
        return 2
    rows = jbo.study_config.verify(out, study)
    bad = [r for r in rows if r[2] not in (None, "not run")]
    for i, cid, reason in rows:
        if reason in (None, "not run"):
            print(f"{i:4d}  {reason or 'ok':8s} {cid}")
        else:
            print(f"{i:4d}  {'BAD':8s} {cid}: {out / jbo.study_config.CELLS / f'{i:04d}.csv'}: {reason}")
    done = sum(r[2] is None for r in rows)
    print(f"{done} of {len(rows)} cells finished and verified; {len(bad)} cell file(s) cannot be used")
    if bad:
        print("running the same `jbo study` command again runs the cells that cannot be used", file=sys.stderr)
    return 1 if bad else 0


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


def _cut(text: str, width: int = 120) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 3] + "..."


def _options(factory, built) -> str:
    """An algorithm's options: its factory's named parameters, else the built object's dataclass fields."""
    import dataclasses
    import inspect

    try:
        params = inspect.signature(factory).parameters
        named = [n for n, p in params.items() if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    except (TypeError, ValueError):
        named = []
    if not named and dataclasses.is_dataclass(built):
        named = [f.name for f in dataclasses.fields(built)]
    return ", ".join(named) if named else "-"


def _is_params(p) -> bool:
    return isinstance(p, tuple) and hasattr(p, "_fields")


def _leaves(params, prefix: str = "") -> list[tuple[str, str, object, str]]:
    """(path, field, default, domain) of every field of a Params NamedTuple that is not itself Params
    (nested ones as parent.field); the domain from the owning class's DOMAIN, else "real"."""
    domains = getattr(type(params), "DOMAIN", {})
    out = []
    for f in params._fields:
        v = getattr(params, f)
        if _is_params(v):
            out += _leaves(v, f"{prefix}{f}.")
        elif not (isinstance(v, tuple) and not v):
            out.append((prefix + f, f, v, domains.get(f, "real")))
    return out


def _value(v) -> str:
    """A default as a config file would write it: true / false, a number, a list."""
    import numpy as np

    if v is None or isinstance(v, str):
        return repr(v)
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    a = np.asarray(v)
    if a.dtype.kind not in "biuf":
        return _cut(repr(v), 40)
    if a.ndim == 0:
        return repr(a.item())
    return _cut(np.array2string(a, separator=", ", threshold=6), 40)


def param_rows(params) -> list[tuple[str, str, str, str]]:
    """(name, default, domain, note) per Params field: the name a study config's params table takes
    (jbo.study_config.settable_fields), or the field's path with a note saying why a config cannot
    set it by name."""
    from jbo.study_config import settable_fields

    if not _is_params(params):
        return []
    settable = settable_fields(params)
    rows = []
    for path, field, default, domain in _leaves(params):
        if field in settable:
            rows.append((field, _value(default), domain, ""))
        elif isinstance(default, (int, float)) or getattr(default, "dtype", None) is not None:
            rows.append((path, _value(default), domain, "(name shared by another field: not settable from a config)"))
        else:
            rows.append((path, _value(default), domain, "(not a number: not settable from a config)"))
    return rows


def _algorithm_lines(name: str) -> list[str]:
    import jbo

    line = jbo.algorithms.describe(name)
    lines = [f"    {_cut(line)}"] if line else []
    factory = jbo.algorithms.REGISTRY[name]
    try:
        built = jbo.algorithms.get(name)
        rows = param_rows(built.default_params())
    except Exception as e:  # noqa: BLE001  (needs options or an optional extra: say so, list the rest)
        return lines + [
            f"    not built with its default options: {_cut(e, 90)}",
            f"    options: {_options(factory, None)}",
        ]
    if rows:
        lines.append("    params (a study config's params table; name = default, domain):")
        width = max(len(r[0]) for r in rows)
        dwidth = max(len(r[1]) for r in rows)
        lines += [
            f"        {n:<{width}} = {d:<{dwidth}}  {dom}{'  ' + note if note else ''}" for n, d, dom, note in rows
        ]
    else:
        lines.append("    params: -")
    return lines + [f"    options: {_options(factory, built)}"]


def _problem_lines(name: str) -> list[str]:
    import jbo

    line = jbo.problems.describe(name)
    lines = [f"    {_cut(line)}"] if line else []
    try:
        info = jbo.problems.about(name)
        lines.append(f"    space: {info.space}; optimum: {'unknown' if info.optimum is None else info.optimum}")
    except Exception as e:  # noqa: BLE001  (a user's factory that needs more than its defaults: say so)
        lines.append(f"    not built with its default options: {_cut(e, 90)}")
    opts = jbo.problems.options(name)
    text = ", ".join(k + (" (required)" if needed else "") for k, needed in opts.items())
    return lines + [f"    options: {text or '-'}"]


def listing(kind: str, out=None) -> int:
    """`jbo problems` / `jbo algorithms`: each registered entry with a one-line description, its space
    and optimum (problems, not built: jbo.problems.about) or its Params by the names a study config
    takes, with defaults and domains (algorithms), and its options."""
    import jbo

    out = out or sys.stdout
    registry = jbo.problems if kind == "problems" else jbo.algorithms
    lines_of = _problem_lines if kind == "problems" else _algorithm_lines
    for name in registry.names():
        print("\n".join([name] + lines_of(name)), file=out)
    return 0


def reproduce(args) -> int:
    from jbo import reproduce as rep

    papers = list(rep.PAPERS) if args.all else [args.paper] if args.paper else []
    action = args.list or args.index or args.check_index or args.regrade
    if not papers and not action:
        print("jbo reproduce: name a paper (or --all, --list, --index, --check-index, --regrade)", file=sys.stderr)
        return 2
    if args.all and args.paper:
        print("jbo reproduce: --all takes no paper or figure names", file=sys.stderr)
        return 2
    root = rep.find_root(args.root)
    if args.list:
        rep.listing(root, [args.paper] if args.paper else None)
        return 0
    if args.index:
        for path in rep.write_index(root, [args.paper] if args.paper else None):
            print(f"wrote {path}")
        return 0
    if args.check_index:
        stale = rep.stale_indexes(root)
        if stale:
            print(f"stale indexes (run `jbo reproduce --index`): {', '.join(stale)}", file=sys.stderr)
            return 1
        print("every paper's INDEX.md is as its declarations generate it")
        return 0
    if args.regrade:
        return rep.regrade(root)
    rc = 0
    for paper in papers:
        rc |= rep.reproduce(
            paper,
            args.figures,
            budget=args.budget,
            seeds=args.seeds,
            out=args.out,
            update=args.update,
            force=args.force,
            grade_claims=not args.no_grade,
            root=root,
        )
    return rc


def _import(args) -> None:
    if getattr(args, "imports", None):
        from jbo import plugins

        plugins.import_modules(args.imports, f"jbo {args.command} --import")


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
    s.add_argument(
        "--verify",
        action="store_true",
        help="check every finished cell of --out against its manifest entry and content; run nothing (exit 1 on a bad cell)",
    )
    _import_flag(s)
    c = sub.add_parser("cache", help="where the persistent compilation cache is and its size (see jbo.cache)")
    c.add_argument("--clear", action="store_true", help="delete the cached programs")
    c.add_argument(
        "--repair", action="store_true", help="delete entries that cannot be read (left by a killed process)"
    )
    r = sub.add_parser(
        "reproduce",
        help="run a paper's declared figures and tables, resume after a kill, grade their claims (see jbo.reproduce)",
    )
    r.add_argument("paper", nargs="?", help="boke, sbo_kde, ucvs, uhe_bo or r_perp")
    r.add_argument("figures", nargs="*", help="figure names (default: all of the paper's; --list shows them)")
    r.add_argument("--budget", default="default", choices=["smoke", "default", "paper"])
    r.add_argument("--seeds", type=int, default=None, help="the number of seeds, in place of the budget's")
    r.add_argument("--out", default=None, help="where the results go (default: $JBO_SCRATCH or <tmp>/jbo-reproduce)")
    r.add_argument("--update", action="store_true", help="rewrite the committed results and verdict tables")
    r.add_argument("--force", action="store_true", help="run the steps again even where they finished before")
    r.add_argument("--no-grade", action="store_true", help="run the steps, do not grade the claims")
    r.add_argument("--all", action="store_true", help="every paper")
    r.add_argument("--list", action="store_true", help="list every figure with its estimated times; run nothing")
    r.add_argument("--index", action="store_true", help="write experiments/results/<paper>/INDEX.md")
    r.add_argument("--check-index", action="store_true", help="exit 1 if an INDEX.md is stale")
    r.add_argument("--regrade", action="store_true", help="grade all papers from the committed files; compare")
    r.add_argument("--root", default=None, help="the repository (default: the working directory or above it)")
    _import_flag(sub.add_parser("problems", help="list the registered problems: description, space, optimum, options"))
    _import_flag(sub.add_parser("algorithms", help="list the registered algorithms: description, Params, options"))
    args = parser.parse_args(argv)
    if args.command == "demo":
        return demo(args)
    if args.command == "reproduce":
        return reproduce(args)
    try:
        _import(args)
        if args.command in ("study", "cache"):
            return (study if args.command == "study" else cache)(args)
    except ValueError as e:  # a bad config, a study directory that cannot be resumed or combined (StudyDataError)
        print(f"jbo {args.command}: error: {e}", file=sys.stderr)
        return 2
    return listing(args.command)


def _import_flag(parser) -> None:
    parser.add_argument(
        "--import",
        dest="imports",
        action="append",
        metavar="MODULE",
        help="a module name or .py file to import first, so that what it registers (algorithms, problems, "
        "kernels) can be used by name; repeatable (see jbo.plugins)",
    )


if __name__ == "__main__":
    sys.exit(main())
