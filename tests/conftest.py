import pytest

import jbo  # noqa: F401  (enables float64)


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="run slow reproductions")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow reproduction: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
