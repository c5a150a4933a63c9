"""The study registry: every module's published study, run by `hmsim reproduce NAME`."""

from __future__ import annotations

from hmsim.studies.base import Study, StudyResult, register, registry

# Importing a study module registers it.
from hmsim.studies import storage, pmem_wa, tiering, allocators, pm_index, numa_pmem, hybrid  # noqa: F401  isort: skip

__all__ = ["Study", "StudyResult", "get", "names", "register", "registry"]


def names() -> list[str]:
    """The studies in the order of the modules they reproduce (the core's registry names
    each module's study; tests/test_study_points.py checks that each is registered here)."""
    import json

    from hmsim import _core

    declared = [m["study"] for m in json.loads(_core.schema())]
    return [n for n in declared if n in registry()] + [n for n in registry() if n not in declared]


def get(name: str) -> Study:
    from hmsim.errors import ConfigError

    studies = registry()
    if name not in studies:
        raise ConfigError("reproduce", f"unknown study '{name}'; allowed: {', '.join([*studies, 'all'])}")
    return studies[name]
