"""How often the garbage collector runs in hmsim's own processes: the `hmsim` command and
its drawing processes (`hmsim.figure_worker`), not a program that imports hmsim.

CPython collects its youngest generation after every 700 new container objects, and the
whole heap when the objects that outlived two collections have grown by a quarter. These
processes hold hundreds of thousands of long-lived objects (pandas, matplotlib and their
modules) and make millions of short-lived ones (the points' JSON decoded into dicts, the
artists of a figure), which are freed by reference counting, not by the collector: in the
quick study's command, collections took 1.6–1.8 s of CPU, 1.1–1.2 s of it seven full ones.
Young collections every `YOUNG_OBJECTS` objects instead take 0.7–0.8 s and no full one
(measured with `gc.callbacks`; docs/changelog.md). Objects in reference cycles (a closed
figure's artists) are still collected, only later: the quick run's peak resident memory
grew by ≈ 50 MB.
"""

from __future__ import annotations

import gc

# Container objects allocated between two young collections (CPython's default is 700).
YOUNG_OBJECTS = 10_000


def collect_less() -> None:
    """Collect the youngest generation every `YOUNG_OBJECTS` new objects; the older
    generations keep their thresholds (counted in younger collections)."""
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_OBJECTS, older, oldest)
