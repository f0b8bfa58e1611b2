"""Persistent compilation cache: a second process skips XLA compilation of programs it has seen.

jbo turns on JAX's own persistent compilation cache when it is imported, so a second ``jbo demo``,
``jbo study`` or notebook in a new process loads its compiled programs from disk instead of compiling
them again. The cache is JAX's (``jax_compilation_cache_dir``); jbo only chooses where it lives and
lowers JAX's thresholds so that every program of a study is written (JAX's default skips programs
that compile in under 1 s).

Settings, read from the environment at import:

* ``JBO_CACHE`` -- ``1`` / ``on`` / ``true`` / ``yes`` (default) or ``0`` / ``off`` / ``false`` / ``no``
  to leave the cache off (the test suite sets ``JBO_CACHE=0`` in tests/conftest.py so it neither
  depends on nor writes into a user's cache).
* ``JBO_CACHE_DIR`` -- the directory; default ``$XDG_CACHE_HOME/jbo/jax``, else ``~/.cache/jbo/jax``.
* If JAX's own ``jax_compilation_cache_dir`` is already set (``JAX_COMPILATION_CACHE_DIR`` or a
  ``jax.config.update`` before importing jbo), jbo leaves it alone.

In code: :func:`enable` (a directory, thresholds), :func:`disable`, :func:`directory` (where the
cache is now, or None), :func:`usage`, :func:`clear` and :func:`repair` (drop entries a killed process
left truncated). From the command line: ``jbo cache`` (location and size), ``jbo cache --clear``,
``jbo cache --repair``.

What is cached is the XLA executable, keyed by the lowered program, the compile options, the JAX
configuration that affects compilation and the backend; tracing and lowering in Python still run in
every process (for jbo's GP programs that is a small part of a compile). Entries are not evicted
(JAX's ``jax_compilation_cache_max_size`` can bound the directory); :func:`clear` empties it. As
JAX warns, the cache directory is trusted: do not point it at a directory others can write.
"""

from __future__ import annotations

import os
import shutil
import warnings
from collections.abc import Mapping
from pathlib import Path

import jax

ENV_SWITCH = "JBO_CACHE"
ENV_DIR = "JBO_CACHE_DIR"
_ON = ("1", "on", "true", "yes")
_OFF = ("0", "off", "false", "no")

# Every jbo program is worth keeping: a GP-BO study compiles a few programs of 1-10 s each, and the
# small eager helpers (designs, keys, problem constants) compile in tens of milliseconds each but
# add up at start-up. Entries of any size are kept.
MIN_COMPILE_TIME_SECS = 0.0
MIN_ENTRY_SIZE_BYTES = -1

_enabled_by_jbo: Path | None = None


def default_directory(environ: Mapping[str, str] | None = None) -> Path:
    """$JBO_CACHE_DIR, else $XDG_CACHE_HOME/jbo/jax, else ~/.cache/jbo/jax."""
    env = os.environ if environ is None else environ
    if env.get(ENV_DIR):
        return Path(env[ENV_DIR]).expanduser()
    base = Path(env["XDG_CACHE_HOME"]).expanduser() if env.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    return base / "jbo" / "jax"


def resolve(environ: Mapping[str, str] | None = None) -> Path | None:
    """The directory the environment asks for, or None when ``JBO_CACHE`` turns the cache off.
    Raises ValueError for a ``JBO_CACHE`` value that is neither on nor off."""
    env = os.environ if environ is None else environ
    switch = env.get(ENV_SWITCH, "1").strip().lower()
    if switch in _OFF:
        return None
    if switch not in _ON:
        raise ValueError(
            f"{ENV_SWITCH}={env[ENV_SWITCH]!r} is not understood; use one of {_ON} to turn the "
            f"persistent compilation cache on or one of {_OFF} to turn it off"
        )
    return default_directory(env)


def _reset_jax_cache() -> None:
    # JAX opens its cache once per process, at the first compilation; a change of directory or of the
    # on/off switch after that needs the (public, experimental) reset.
    from jax.experimental.compilation_cache import compilation_cache

    compilation_cache.reset_cache()


def enable(
    path=None, min_compile_time_secs: float = MIN_COMPILE_TIME_SECS, min_entry_size_bytes: int = MIN_ENTRY_SIZE_BYTES
) -> Path:
    """Turn JAX's persistent compilation cache on in `path` (default: :func:`default_directory`) and
    keep every program whose compilation took at least `min_compile_time_secs`. Returns the directory."""
    path = default_directory() if path is None else Path(path).expanduser()
    if not (isinstance(min_compile_time_secs, (int, float)) and min_compile_time_secs >= 0):
        raise ValueError(f"min_compile_time_secs must be a non-negative number, got {min_compile_time_secs!r}")
    if not isinstance(min_entry_size_bytes, int) or min_entry_size_bytes < -1:
        raise ValueError(f"min_entry_size_bytes must be an int >= -1 (-1: no size limit), got {min_entry_size_bytes!r}")
    path.mkdir(parents=True, exist_ok=True)
    path = path.resolve()
    global _enabled_by_jbo
    _reset_jax_cache()  # JAX decides once per process whether to use its cache: make it look again
    jax.config.update("jax_enable_compilation_cache", True)
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", float(min_compile_time_secs))
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", int(min_entry_size_bytes))
    _enabled_by_jbo = path
    return path


def disable() -> None:
    """Turn the persistent compilation cache off for the rest of this process (programs already loaded
    stay in memory)."""
    global _enabled_by_jbo
    jax.config.update("jax_enable_compilation_cache", False)
    jax.config.update("jax_compilation_cache_dir", None)
    _reset_jax_cache()
    _enabled_by_jbo = None


def directory() -> Path | None:
    """Where compiled programs are cached now (set by jbo or by the user through JAX), or None."""
    d = jax.config.jax_compilation_cache_dir
    return Path(d) if d and jax.config.jax_enable_compilation_cache else None


def usage(path=None) -> dict:
    """{'directory', 'entries', 'bytes'} of a cache directory (default: the current one)."""
    path = directory() if path is None else Path(path)
    if path is None:
        return {"directory": None, "entries": 0, "bytes": 0}
    files = [p for p in Path(path).rglob("*") if p.is_file()] if Path(path).exists() else []
    return {"directory": str(path), "entries": len(files), "bytes": sum(p.stat().st_size for p in files)}


def clear(path=None) -> int:
    """Delete the cached programs in `path` (default: the current cache directory); returns how many
    files were removed. The directory itself stays."""
    path = directory() if path is None else Path(path)
    if path is None or not Path(path).exists():
        return 0
    n = 0
    for p in list(Path(path).iterdir()):
        if p.is_dir():
            n += sum(1 for q in p.rglob("*") if q.is_file())
            shutil.rmtree(p)
        else:
            p.unlink()
            n += 1
    return n


def repair(path=None) -> list[str]:
    """Delete cache entries that cannot be decompressed; returns their names.

    JAX writes an entry in place (not through a temporary file) and never rewrites an existing one, so
    a process killed while writing leaves a truncated entry: every later process then warns "Error
    reading persistent compilation cache entry" and compiles that program again (results are not
    affected). This removes such entries (``jbo cache --repair``)."""
    from jax._src import compilation_cache as _cc  # JAX's own (de)compression of entries

    path = directory() if path is None else Path(path)
    if path is None or not Path(path).exists():
        return []
    bad = []
    for p in sorted(Path(path).glob("*-cache")):
        try:
            _cc.decompress_executable(p.read_bytes())
        except Exception:  # noqa: BLE001  (zlib / zstd raise their own error types)
            p.unlink()
            bad.append(p.name)
    return bad


def configure_from_env() -> Path | None:
    """What ``import jbo`` runs: enable the cache as the environment says, unless JAX's cache
    directory was already set by the user. A directory that cannot be created gives a warning and
    leaves the cache off; a malformed ``JBO_CACHE`` value raises ValueError."""
    path = resolve()
    if path is None:
        return None
    if jax.config.jax_compilation_cache_dir is not None:
        return directory()
    try:
        return enable(path)
    except OSError as e:
        warnings.warn(f"jbo: persistent compilation cache left off, cannot use {path}: {e}", stacklevel=2)
        return None
