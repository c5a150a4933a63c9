"""Running one scenario: `hmsim.run(...)` and `hmsim run`."""

from __future__ import annotations

import contextlib
import importlib
import json
import sys
import time
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import tomli_w

from hmsim import _core, check
from hmsim.catalog import device_paths
from hmsim.errors import ConfigError, HmsimError, read_text
from hmsim.progress import CoreProgress, core_progress
from hmsim.signals import interruptible

Overrides = Mapping[str, Any] | Iterable[str] | None


@dataclass
class RunResult:
    """What one run produced, as pandas DataFrames plus the summary."""

    module: str
    seed: int
    version: str
    resolved: dict
    results: pd.DataFrame
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    headline: dict = field(default_factory=dict)
    wall_time_s: float = 0.0
    #: Host CPU seconds of the run (its thread and the helper threads it started), None when
    #: not measured: unlike the wall time, not inflated by other work sharing the cores.
    cpu_time_s: float | None = None
    #: What limits how far the results can be trusted (the CLI prints each one).
    warnings: list[str] = field(default_factory=list)

    def summary(self, scenario_file: str = "") -> dict:
        return {
            "module": self.module,
            "hmsim_version": self.version,
            "seed": self.seed,
            "scenario_file": scenario_file,
            "wall_time_s": self.wall_time_s,
            "cpu_time_s": self.cpu_time_s,
            "headline": self.headline,
            "warnings": self.warnings,
            "resolved_config": self.resolved,
        }


def parse_overrides(overrides: Overrides, arg: str = "set") -> list[tuple[str, str]]:
    """`{"job.queue_depth": 16}` or `["job.queue_depth=16"]` → [("job.queue_depth", "16")].
    `arg` names the argument in errors: `set` (Python) or `--set` (the CLI)."""
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        return [(_key(k, arg), toml_value(v, k, arg)) for k, v in overrides.items()]
    if isinstance(overrides, str | bytes) or not isinstance(overrides, Iterable):
        raise ConfigError(
            arg, f"expected a mapping {{key: value}} or a list of 'key=value', got {type(overrides).__name__}"
        )
    out = []
    for item in overrides:
        if not isinstance(item, str):
            raise ConfigError(arg, f"expected 'key=value' strings, got {type(item).__name__} {item!r:.60}")
        if "=" not in item:
            raise ConfigError(arg, f"'{item}' is not key=value (e.g. job.queue_depth=16)")
        k, v = item.split("=", 1)
        out.append((k.strip(), v.strip()))
    return out


def _key(k: Any, arg: str = "set") -> str:
    if not isinstance(k, str) or not k:
        raise ConfigError(arg, f"expected dotted key paths (str) as keys, got {type(k).__name__} {k!r:.60}")
    return k


def toml_value(v: Any, key: str = "", arg: str = "set") -> str:
    """A Python value as one line of TOML value text: strings quoted, lists as `[1, 2]`,
    tables as inline tables `{a = 7}` (never a `[v]` section, whose first value would be
    taken for the whole table)."""
    try:
        return _inline(v)
    except (TypeError, ValueError) as e:
        raise ConfigError(arg, f"{type(v).__name__} {v!r:.60} has no TOML form ({e})", key=key) from None


def _inline(v: Any) -> str:
    if isinstance(v, Mapping):
        items = ", ".join(f"{_inline_key(k)} = {_inline(x)}" for k, x in v.items())
        return "{" + items + "}"
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_inline(x) for x in v) + "]"
    return tomli_w.dumps({"v": v}).split("=", 1)[1].strip()


def _inline_key(k: Any) -> str:
    if not isinstance(k, str):
        raise TypeError(f"table keys must be str, got {type(k).__name__} {k!r:.60}")
    return tomli_w.dumps({k: 0}).rsplit("=", 1)[0].strip()


def blame(e: HmsimError, origins: Mapping[str, str], overrides: Iterable[tuple[str, str]] = ()) -> HmsimError:
    """A core error about an override (the core names it `--set k=v`, or `<override>` for a
    bad key path) worded by where the override came from: `origins` maps its key to `--set`
    (the CLI), `set` or `axes` (Python arguments) or `FILE [set]` / `FILE [axes]` (a sweep
    file). Other errors are returned unchanged."""
    if e.file.startswith("--set "):
        k, _, v = e.file[len("--set ") :].partition("=")
    elif e.file == "<override>":
        k, v = e.key, dict(overrides).get(e.key, "")
    else:
        return e
    origin = origins.get(k)
    if origin is None or origin == "--set":
        if e.file == "<override>":
            return type(e)(f"--set {k}={v}" if origin else e.file, e.detail, key=e.key, line=e.line)
        return e
    if origin == "set":
        where = f"set[{k!r}] = {v}"
    elif origin == "axes":
        where = f"axes[{k!r}] value {v}"
    else:
        where = f"{origin} {k} = {v}"
    return type(e)(where, e.detail, key=e.key)


def scenario_text(scenario: str | Path | Mapping[str, Any]) -> tuple[str, str]:
    """(TOML text, file name for messages) from a path or a dict."""
    if isinstance(scenario, Mapping):
        try:
            return tomli_w.dumps(dict(scenario)), "<dict>"
        except (TypeError, ValueError) as e:
            raise ConfigError("<dict>", f"the scenario has no TOML form: {e}") from None
    path = check.path(scenario, "scenario")
    return read_text(path, "scenario"), str(path)


def output_from_json(raw: str | dict, wall_time_s: float = 0.0) -> RunResult:
    """The run output of the core as DataFrames typed by the module's declared columns."""
    from hmsim.results import typed_frame

    d = json.loads(raw) if isinstance(raw, str) else raw
    columns = d.get("columns", {})
    return RunResult(
        module=d["module"],
        seed=d["seed"],
        version=d["version"],
        resolved=d["resolved"],
        results=typed_frame(d["rows"], columns.get("results"), f"{d['module']} results"),
        tables={k: typed_frame(v, columns.get(k), f"{d['module']} table {k}") for k, v in d["tables"].items()},
        headline=d["headline"],
        wall_time_s=wall_time_s,
        cpu_time_s=d.get("cpu_time_s"),
        warnings=list(d.get("warnings", [])),
    )


def run_raw(
    text: str, file: str, overrides: list[tuple[str, str]], devices: list[str], progress: CoreProgress | None = None
) -> dict:
    """Run in the core; returns the raw output dict (used by the sweep runner too, whose
    points report no progress of their own: the sweep's bar counts points)."""
    start = time.perf_counter()
    text_out, cpu_s = interruptible(_core.run_scenario, text, file, overrides, devices, progress)
    out = json.loads(text_out)
    out["wall_time_s"] = time.perf_counter() - start
    out["cpu_time_s"] = cpu_s
    return out


def run(
    scenario: str | Path | Mapping[str, Any],
    out: str | Path | None = None,
    set: Overrides = None,
    devices: Iterable[str | Path] = (),
) -> RunResult:
    """Run one scenario (a TOML path or a dict). With `out`, write results there."""
    return _run(scenario, out, set, devices, origin="set")


def _run(
    scenario: str | Path | Mapping[str, Any],
    out: str | Path | None,
    overrides: Overrides,
    devices: Iterable[str | Path],
    origin: str,
) -> RunResult:
    """`run`, its overrides named in errors as `origin`: `set` (Python) or `--set` (CLI)."""
    from hmsim.outdir import exclusive

    out = check.optional_path(out, "out")
    text, file = scenario_text(scenario)
    with exclusive(out) if out is not None else contextlib.nullcontext():
        ov = parse_overrides(overrides, origin)
        try:
            hooked = python_policy(text, file, ov)
            if hooked is not None:
                raw = run_python_policy(*hooked, devices)
            else:
                with core_progress(f"running {Path(file).name}") as bar:
                    raw = run_raw(text, file, ov, device_paths(devices), bar)
        except HmsimError as e:
            raise blame(e, {k: origin for k, _ in ov}, ov) from None
        result = output_from_json(raw, raw["wall_time_s"])
        if out is not None:
            write_run(result, out, file)
    return result


PYTHON_POLICY = "python:"


def python_policy(text: str, file: str, overrides: list[tuple[str, str]]) -> tuple[str, str, str, Any] | None:
    """A tiering scenario whose `policy.names` is `["python:package.module:Policy"]` runs that
    Python policy (docs/tiering.md, "Your own policy in Python"): returns (resolved text,
    file, policy name, policy object), or None for every other scenario. A class is
    instantiated with no arguments; the module may sit beside the scenario file."""
    if PYTHON_POLICY not in text and not any(PYTHON_POLICY in v for _, v in overrides):
        return None
    resolved = _core.apply_overrides(text, file, overrides)
    try:
        doc = tomllib.loads(resolved)
    except tomllib.TOMLDecodeError:
        return None  # the core reports the syntax error with its line
    names = doc.get("policy", {}).get("names", []) if doc.get("module") == "tiering" else []
    hooks = [n for n in names if isinstance(n, str) and n.startswith(PYTHON_POLICY)]
    if not hooks:
        return None
    if len(names) != 1:
        raise ConfigError(file, f"a {PYTHON_POLICY} policy runs alone; found {names}", key="policy.names")
    target = hooks[0][len(PYTHON_POLICY) :]
    module, _, attr = target.partition(":")
    if not module or not attr:
        raise ConfigError(
            file, f"'{hooks[0]}' is not python:package.module:Name (e.g. python:mypolicy:Policy)", key="policy.names"
        )
    here = str(Path(file).resolve().parent) if Path(file).exists() else None
    try:
        if here is not None:
            sys.path.insert(0, here)
        obj = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as e:
        raise ConfigError(file, f"cannot load policy '{target}': {e}", key="policy.names") from None
    finally:
        if here is not None:
            sys.path.remove(here)
    policy = obj() if isinstance(obj, type) else obj
    if not callable(policy):
        raise ConfigError(
            file, f"'{target}' is not callable (a policy maps an observation to moves)", key="policy.names"
        )
    return resolved, file, target, policy


def run_python_policy(text: str, file: str, name: str, policy: Any, devices: Iterable[str | Path] = ()) -> dict:
    from hmsim.tier_hook import run_policy

    start, cpu = time.perf_counter(), time.thread_time()
    # The core runs on this thread, calling the policy back: its CPU time is this thread's.
    out = run_policy(text, policy, name=name, file=file, devices=devices)
    out["wall_time_s"] = time.perf_counter() - start
    out["cpu_time_s"] = time.thread_time() - cpu
    return out


def write_run(result: RunResult, out: Path, source: str) -> None:
    """results.csv, one CSV per extra table, the module's figures and summary.json, written
    into a folder beside `out` that replaces it whole when complete (docs/reliability.md)."""
    from hmsim.figures import run_figures
    from hmsim.outdir import exclusive, staged
    from hmsim.results import write_csv, write_json

    with exclusive(out), staged(out) as tmp:
        write_csv(tmp / "results.csv", result.results)
        for name, table in result.tables.items():
            write_csv(tmp / f"{name}.csv", table)
        run_figures(result, tmp)
        write_json(tmp / "summary.json", result.summary(source))
