"""The example notebook runs top to bottom (nbclient), as a user would run it."""

from __future__ import annotations

from pathlib import Path

import pytest

nbclient = pytest.importorskip("nbclient", reason="nbclient is not installed")
nbformat = pytest.importorskip("nbformat", reason="nbformat is not installed")
pytest.importorskip("ipykernel", reason="ipykernel is not installed")

NOTEBOOK = Path(__file__).resolve().parents[1] / "examples" / "hmsim-from-python.ipynb"


def test_committed_notebook_has_its_outputs_and_figures():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs for c in code), "commit the notebook executed"
    images = [o for c in code for o in c.outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 2, "its figures show inline: importing hmsim keeps the notebook backend"


def test_example_notebook_executes(monkeypatch):
    # The kernel inherits this process's environment: the in-process CLI tests set
    # MPLBACKEND=Agg (the CLI's choice), which a user's Jupyter does not have.
    monkeypatch.delenv("MPLBACKEND", raising=False)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    ).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "\n".join(str(o.get("data", {}).get("text/plain", "")) for o in outputs)
    assert "lab-900p" in text and "colloid-hemem" in text and "tiers[1].unloaded_latency_ns" in text
    assert sum("image/png" in o.get("data", {}) for o in outputs) >= 2
