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

import hmsim.sweep as sweep  # callable: hmsim.sweep(base, axes={...}) -> DataFrame
from hmsim._core import __version__
from hmsim.catalog import devices
from hmsim.errors import ConfigError, HmsimError, InputDataError, SimulationError
from hmsim.reproduce import reproduce
from hmsim.scenario import RunResult, run
from hmsim.sweep import run_sweep

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
