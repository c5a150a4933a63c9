"""hmsim: a simulator of heterogeneous memory systems.

import hmsim
r = hmsim.run("scenario.toml", set={"tiers.1.unloaded_latency_ns": 250})
r.results                         # pandas DataFrame
df = hmsim.sweep("scenario.toml", axes={"tiers[1].unloaded_latency_ns": [150, 250, 400]})
s = hmsim.reproduce("storage", quick=True)
s.results, s.comparison           # DataFrames
hmsim.devices()                   # the device catalog (built-in + $HMSIM_DEVICE_PATH)

Importing hmsim does not change the matplotlib backend.
"""

import sys as _sys

if _sys.argv and _sys.argv[0].endswith("hmsim"):
    # The CLI: a Ctrl-C or SIGTERM during the imports below ends it cleanly (hmsim.signals).
    from hmsim.signals import install_early as _install_early

    _install_early()

from hmsim._core import __version__
from hmsim.errors import ConfigError, HmsimError, InputDataError, SimulationError

# The rest of the API loads on first use (PEP 562): a CLI command such as `hmsim lifetime`
# or `hmsim check` then starts without pandas' and matplotlib's import time.
_LAZY = {
    "sweep": ("hmsim.sweep", None),  # callable module: hmsim.sweep(base, axes={...})
    "devices": ("hmsim.catalog", "devices"),
    "reproduce": ("hmsim.reproduce", None),  # callable module: hmsim.reproduce("storage")
    "RunResult": ("hmsim.scenario", "RunResult"),
    "run": ("hmsim.scenario", "run"),
    "run_sweep": ("hmsim.sweep", "run_sweep"),
}


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module 'hmsim' has no attribute {name!r}")
    import importlib

    module, attr = _LAZY[name]
    value = importlib.import_module(module)
    if attr is not None:
        value = getattr(value, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "ConfigError",
    "HmsimError",
    "InputDataError",
    "RunResult",
    "SimulationError",
    "__version__",
    "devices",
    "reproduce",
    "run",
    "run_sweep",
    "sweep",
]
