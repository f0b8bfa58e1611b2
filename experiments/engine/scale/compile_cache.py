"""Persistent compilation cache: `jbo demo` twice in fresh processes, empty cache first.

For each setting (small: 4 seeds x 10 steps; default: the demo's own 16 seeds x 40 / 60 steps), an empty
cache directory is made, then `python -m jbo demo` runs twice as separate processes with
JBO_CACHE_DIR pointing at it. From each run's stderr (jbo.studies.run_study prints
"[i/N] method on problem: ... compile X s, run Y s" per program) we record, per program, the
compile seconds (tracing + lowering + XLA compile, or the cache load) and run seconds, and from the
parent's clock: the time from process launch until the first program's line starts (imports and set-up),
the time until the first program's compilation ends (that + its compile seconds: when the first
program starts running), the process's CPU seconds (user + system, /proc) when the first program's
line ends (compile + a run of ~0.1 s: the load-independent measure of the work before the first
program runs) and the total wall time. Load averages are recorded before and after every run
(the machine is shared). JAX_DISABLE_MOST_OPTIMIZATIONS is removed from the environment: the demo as a
user runs it.

    python experiments/engine/scale/compile_cache.py [--settings small default] [--out PATH] [--update]
    python experiments/engine/scale/compile_cache.py --grid   # -> compile_cache_grid.json (Params grid cells share a program)
    python experiments/engine/scale/compile_cache.py --imports   # -> compile_cache_imports.json (import CPU seconds)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]  # the repository root
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "experiments"))  # outdir
from outdir import add_update_flag, output_dir  # noqa: E402

OUT = (
    output_dir("engine", "scale") / "compile_cache.json"
)  # experiments/results/engine/scale with --update, else its scratch mirror

SETTINGS = {
    "small": ["--seeds", "4", "--steps-branin", "10", "--steps-hartmann6", "10"],
    "default": [],
}
LINE = re.compile(r"\[(\d+)/(\d+)\] (\S+) on (\S+): .*compile ([\d.]+) s, run ([\d.]+) s")


def _cpu_seconds(pid: int) -> float:
    """user + system CPU seconds of a running process so far (Linux /proc): on a shared machine this is
    the load-independent measure of how much work a process did before a point."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_run(args, cache_dir: Path, out_dir: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("JAX_DISABLE_MOST_OPTIMIZATIONS", "JBO_CACHE")}
    env.update(JBO_CACHE="1", JBO_CACHE_DIR=str(cache_dir))
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "jbo", "demo", *args, "--out", str(out_dir)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
    )
    first_prefix, first_line = [], []
    err = bytearray()

    def read_err():
        while True:
            b = proc.stderr.read(1)
            if not b:
                return
            err.extend(b)
            if not first_prefix and err.endswith(b"[1/"):
                first_prefix.append((time.perf_counter() - t0, _cpu_seconds(proc.pid)))
            elif first_prefix and not first_line and b == b"\n":
                first_line.append((time.perf_counter() - t0, _cpu_seconds(proc.pid)))

    reader = threading.Thread(target=read_err)
    reader.start()
    proc.stdout.read()  # drained so the child never blocks on a full pipe
    proc.wait()
    reader.join()
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"jbo demo failed:\n{err.decode()}")
    programs = [
        dict(method=m[3], problem=m[4], compile_s=float(m[5]), run_s=float(m[6])) for m in LINE.finditer(err.decode())
    ]
    setup, setup_cpu = first_prefix[0]
    first_end, first_end_cpu = first_line[0]
    files = [p for p in cache_dir.rglob("*") if p.is_file()]
    return {
        "setup_s": setup,
        "first_program_compile_s": programs[0]["compile_s"],
        "time_to_first_program_start_s": setup + programs[0]["compile_s"],
        "setup_cpu_s": setup_cpu,
        "time_to_first_program_end_s": first_end,
        "cpu_s_to_first_program_end": first_end_cpu,
        "compile_s_total": sum(p["compile_s"] for p in programs),
        "run_s_total": sum(p["run_s"] for p in programs),
        "wall_s": wall,
        "programs": programs,
        "cache_entries_after": len(files),
        "cache_bytes_after": sum(p.stat().st_size for p in files),
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "regrets": _regrets(out_dir / "demo_summary.csv"),
    }


def _regrets(path: Path) -> list:
    import pandas as pd

    t = pd.read_csv(path)
    return t[["problem", "method", "mean_simple_regret", "median_simple_regret"]].to_dict(orient="records")


def study_run(cache_dir: Path, out_dir: Path) -> dict:
    """`jbo study experiments/studies/demo.toml` (the demo's grid as a config) in a third fresh process on
    the same cache: its cells are the demo's programs, so they load from the cache, and its regrets must
    equal the demo's."""
    import pandas as pd

    env = {k: v for k, v in os.environ.items() if k not in ("JAX_DISABLE_MOST_OPTIMIZATIONS", "JBO_CACHE")}
    env.update(JBO_CACHE="1", JBO_CACHE_DIR=str(cache_dir))
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "jbo", "study", "experiments/studies/demo.toml", "--out", str(out_dir), "--quiet"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"jbo study failed:\n{proc.stderr}")
    table = pd.read_csv(out_dir / "table.csv")
    cells = table.groupby("cell", sort=False)[["compile_s", "run_s"]].first().reset_index()
    return {
        "wall_s": wall,
        "compile_s_total": float(cells["compile_s"].sum()),
        "run_s_total": float(cells["run_s"].sum()),
        "cells": cells.to_dict(orient="records"),
        "regrets": _regrets(out_dir / "summary.csv"),
        "load_before": load_before,
        "load_after": os.getloadavg(),
    }


def grid_run(cache_dir: Path | None, out_dir: Path) -> dict:
    """`jbo study experiments/studies/ucb_beta.toml` in one fresh process: the cells of GP-UCB's beta grid
    are one program with different Params arguments, so with the cache on, the first beta cell of each
    budget compiles and the others load it."""
    import pandas as pd

    env = {k: v for k, v in os.environ.items() if k not in ("JAX_DISABLE_MOST_OPTIMIZATIONS", "JBO_CACHE")}
    env.update(JBO_CACHE="0") if cache_dir is None else env.update(JBO_CACHE="1", JBO_CACHE_DIR=str(cache_dir))
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "jbo", "study", "experiments/studies/ucb_beta.toml", "--out", str(out_dir), "--quiet"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"jbo study failed:\n{proc.stderr}")
    table = pd.read_csv(out_dir / "table.csv")
    cells = table.groupby("cell", sort=False)[["compile_s", "run_s"]].first().reset_index()
    return {
        "cache": cache_dir is not None,
        "wall_s": wall,
        "compile_s_total": float(cells["compile_s"].sum()),
        "run_s_total": float(cells["run_s"].sum()),
        "cells": cells.to_dict(orient="records"),
        "regrets": _regrets(out_dir / "summary.csv"),
        "load_before": load_before,
        "load_after": os.getloadavg(),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--settings", nargs="+", default=["small", "default"], choices=list(SETTINGS))
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument(
        "--grid",
        action="store_true",
        help="instead: the ucb_beta.toml study with the cache off, then on (empty), into compile_cache_grid.json",
    )
    ap.add_argument(
        "--imports",
        action="store_true",
        help="instead: CPU seconds of importing jax, pandas, "
        "scipy.special and jbo in fresh processes -> compile_cache_imports.json",
    )
    add_update_flag(ap)
    a = ap.parse_args()
    import jbo.studies

    if a.imports:
        import statistics

        code = "import time; t = time.process_time(); import {m}; print(time.process_time() - t)"
        env = {**os.environ, "JBO_CACHE": "0"}
        res = {
            "what": "CPU seconds (time.process_time) of one import in a fresh process, median of 5: what a warm "
            "cache cannot remove from a jbo process's start",
            "machine": jbo.studies.machine_info(),
            "code_version": jbo.studies.code_version(),
            "load_before": os.getloadavg(),
            "cpu_s": {},
        }
        for m in ("jax", "pandas", "scipy.special", "jbo"):
            vals = [
                float(
                    subprocess.run(
                        [sys.executable, "-c", code.format(m=m)],
                        cwd=ROOT,
                        env=env,
                        capture_output=True,
                        text=True,
                        check=True,
                    ).stdout
                )
                for _ in range(5)
            ]
            res["cpu_s"][m] = {"median": statistics.median(vals), "all": vals}
            print(f"import {m}: {statistics.median(vals):.2f} CPU s (median of 5)", flush=True)
        res["load_after"] = os.getloadavg()
        out = Path(a.out).with_name("compile_cache_imports.json")
        out.write_text(json.dumps(res, indent=1))
        print(f"wrote {out}")
        return

    if a.grid:
        with tempfile.TemporaryDirectory() as tmp:
            off = grid_run(None, Path(tmp) / "off")
            on = grid_run(Path(tmp) / "cache", Path(tmp) / "on")
        res = {
            "what": "jbo study experiments/studies/ucb_beta.toml (12 cells, 8 seeds) in a fresh process, cache off "
            "vs on with an empty cache directory: Params-grid cells share one compiled program",
            "machine": jbo.studies.machine_info(),
            "code_version": jbo.studies.code_version(),
            "off": off,
            "on": on,
            "same_regrets": off["regrets"] == on["regrets"],
        }
        out = Path(a.out).with_name("compile_cache_grid.json")
        out.write_text(json.dumps(res, indent=1))
        for r in (off, on):
            print(
                f"cache {'on ' if r['cache'] else 'off'}: compile per cell "
                + " ".join(f"{c['compile_s']:.1f}" for c in r["cells"])
                + f"; total compile {r['compile_s_total']:.1f} s, run {r['run_s_total']:.1f} s, wall {r['wall_s']:.1f} s"
            )
        print(f"same regrets: {res['same_regrets']}; wrote {out}")
        return

    result = {
        "what": "jbo demo twice in fresh processes sharing an initially empty persistent compilation cache "
        "(JBO_CACHE_DIR); first = cold cache, second = warm cache",
        "machine": jbo.studies.machine_info(),
        "code_version": jbo.studies.code_version(),
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "settings": {},
    }
    for name in a.settings:
        with tempfile.TemporaryDirectory() as tmp:
            cache, runs = Path(tmp) / "cache", []
            for i in range(2):
                r = one_run(SETTINGS[name], cache, Path(tmp) / f"out{i}")
                runs.append(r)
                print(
                    f"{name} run {i + 1}: set-up {r['setup_s']:.1f} s, first program compile {r['first_program_compile_s']:.1f} s "
                    f"-> starts at {r['time_to_first_program_start_s']:.1f} s (CPU {r['cpu_s_to_first_program_end']:.1f} s to its end); compile total {r['compile_s_total']:.1f} s, "
                    f"run total {r['run_s_total']:.1f} s, wall {r['wall_s']:.1f} s; cache {r['cache_entries_after']} files; "
                    f"load {r['load_before'][0]:.1f} -> {r['load_after'][0]:.1f}",
                    flush=True,
                )
            first, second = runs
            result["settings"][name] = {
                "demo_args": " ".join(SETTINGS[name]) or "(defaults: 16 seeds, 40 / 60 steps)",
                "first": first,
                "second": second,
                "speedup_time_to_first_program_start": first["time_to_first_program_start_s"]
                / second["time_to_first_program_start_s"],
                "speedup_first_program_compile": first["first_program_compile_s"] / second["first_program_compile_s"],
                "speedup_cpu_to_first_program_end": first["cpu_s_to_first_program_end"]
                / second["cpu_s_to_first_program_end"],
                "speedup_compile_total": first["compile_s_total"] / second["compile_s_total"],
                "speedup_wall": first["wall_s"] / second["wall_s"],
                "same_regrets": first["regrets"] == second["regrets"],
            }
            if name == "default":
                st = study_run(cache, Path(tmp) / "study")
                result["settings"][name]["study_after"] = st
                result["settings"][name]["study_regrets_equal_demo"] = st["regrets"] == second["regrets"]
                print(
                    f"jbo study experiments/studies/demo.toml on the warm cache: compile total {st['compile_s_total']:.1f} s, "
                    f"run total {st['run_s_total']:.1f} s, wall {st['wall_s']:.1f} s; regrets equal the demo's: "
                    f"{st['regrets'] == second['regrets']}",
                    flush=True,
                )
            s = result["settings"][name]
            print(
                f"{name}: time to first program x{s['speedup_time_to_first_program_start']:.1f} (CPU seconds "
                f"x{s['speedup_cpu_to_first_program_end']:.1f}), compile total "
                f"x{s['speedup_compile_total']:.1f}, wall x{s['speedup_wall']:.1f}; same regrets: {s['same_regrets']}",
                flush=True,
            )
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(json.dumps(result, indent=1))
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
