"""Prototype a tiering policy in Python: the Rust engine calls your policy once per quantum
(never per access) with numpy views of that quantum's PEBS-like samples, the page table and
the tier counters, and makes the migrations it returns. See docs/tiering.md."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hmsim import _core
from hmsim.catalog import device_paths
from hmsim.errors import HmsimError


@dataclass(frozen=True)
class TierObservation:
    """One quantum as a policy sees it (tier 0 is the default tier)."""

    time_s: float
    samples: np.ndarray  # uint64 page numbers of this quantum's load samples
    page_tier: np.ndarray  # uint8 tier of every page (read-only view)
    latency_ns: np.ndarray  # EWMA-smoothed O/R per tier (NaN before a tier sees reads)
    app_arrivals_per_ns: np.ndarray  # smoothed application read arrivals per tier
    free_pages: np.ndarray  # free frames per tier
    migrate_budget_bytes: int  # bytes the engine copies at most this quantum
    page_bytes: int


Policy = Callable[[TierObservation], Iterable[tuple[int, int]]]


def run_policy(
    text: str,
    policy: Policy,
    name: str = "python",
    file: str = "<hook>",
    devices: Iterable[str | Path] = (),
) -> dict:
    """Run the tiering scenario `text` with `policy` (returns (page, tier) pairs per quantum,
    made in order; a swap is two pairs, the demotion first), tiers' `device` names looked up
    in the built-in catalog plus the device files or folders `devices` (as `hmsim.run`).
    Returns the run output (rows, tables) as a dict; errors in the scenario raise
    ConfigError, errors in the policy raise."""

    def hook(time_s, samples, tiers, latency, arrivals, free, budget, page_bytes):
        obs = TierObservation(
            time_s=time_s,
            samples=np.frombuffer(samples, dtype="<u8"),
            page_tier=np.frombuffer(tiers, dtype=np.uint8),
            latency_ns=np.asarray(latency, dtype=float),
            app_arrivals_per_ns=np.asarray(arrivals, dtype=float),
            free_pages=np.asarray(free, dtype=np.uint64),
            migrate_budget_bytes=budget,
            page_bytes=page_bytes,
        )
        return checked_moves(policy(obs), obs, name)

    # The scenario names the policy it runs (summary.json shows it); the core takes the
    # policy itself as a part of the run.
    text = _core.apply_overrides(text, file, [("policy.names", json.dumps([python_name(name)]))])
    return json.loads(_core.tier_run_with_hook(text, file, name, hook, device_paths(devices)))


def python_name(name: str) -> str:
    """`name` as `policy.names` spells a Python policy (`python:…`)."""
    return name if name.startswith("python:") else f"python:{name}"


def checked_moves(moves: Iterable, obs: TierObservation, name: str) -> list[tuple[int, int]]:
    """The policy's (page, tier) pairs, or an error naming the first pair that is not a page
    of the working set and a tier of the machine (instead of silently failed migrations)."""
    pages, tiers = len(obs.page_tier), len(obs.free_pages)
    where = f"policy '{name}'"
    out: list[tuple[int, int]] = []
    for i, move in enumerate(moves):
        try:
            page, tier = (int(x) for x in move)
        except (TypeError, ValueError):
            raise HmsimError(
                where, f"move {i} at t={obs.time_s:g} s is {move!r}; expected a (page, tier) pair of ints"
            ) from None
        if not 0 <= page < pages:
            raise HmsimError(
                f"policy '{name}'",
                f"move {i} at t={obs.time_s:g} s: page {page} is out of range; allowed 0 to {pages - 1}",
            )
        if not 0 <= tier < tiers:
            raise HmsimError(
                f"policy '{name}'",
                f"move {i} at t={obs.time_s:g} s: tier {tier} is out of range; allowed 0 to {tiers - 1}",
            )
        out.append((page, tier))
    return out


class SampledHotPromotion:
    """Worked example: count samples per page with halving every `decay_s`; each quantum
    promote alternate-tier pages with at least `hot` counts, hottest first, into free
    default-tier frames, or swap them with the coldest default-tier page when it is full."""

    def __init__(self, hot: float = 8.0, decay_s: float = 1.0) -> None:
        self.hot, self.decay_s = hot, decay_s
        self.counts: np.ndarray | None = None
        self.next_decay = decay_s

    def __call__(self, obs: TierObservation) -> list[tuple[int, int]]:
        if self.counts is None:
            self.counts = np.zeros(len(obs.page_tier))
        self.counts += np.bincount(obs.samples.astype(np.int64), minlength=len(self.counts))
        if obs.time_s >= self.next_decay:
            self.counts /= 2
            self.next_decay += self.decay_s
        alt = np.flatnonzero((obs.page_tier != 0) & (self.counts >= self.hot))
        alt = alt[np.argsort(-self.counts[alt], kind="stable")]
        default = np.flatnonzero(obs.page_tier == 0)
        cold = default[np.argsort(self.counts[default], kind="stable")]
        out: list[tuple[int, int]] = []
        budget = obs.migrate_budget_bytes // obs.page_bytes
        free = int(obs.free_pages[0])
        k = 0
        for page in alt:
            if free > 0 and budget >= 1:
                out.append((int(page), 0))
                free -= 1
                budget -= 1
            elif budget >= 2 and k < len(cold) and self.counts[cold[k]] < self.counts[page]:
                out += [(int(cold[k]), int(obs.page_tier[page])), (int(page), 0)]
                k += 1
                budget -= 2
            else:
                break
        return out
