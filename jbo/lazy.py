"""A module imported on first use, so that `import jbo` does not pay for pandas (about 0.3 s of CPU)
when a process never builds a table — a warm start with the compilation cache is mostly import time."""

from __future__ import annotations

import importlib


class LazyModule:
    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr):
        module = importlib.import_module(self._name)
        return getattr(module, attr)


pandas = LazyModule("pandas")
