"""docs/architecture.md's worked example is the code the Rust tests compile and run, and the
docs cite docs/ pages and papers, never files outside the repository or issue numbers."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
TUTORIAL = ROOT / "crates" / "hmsim" / "tests" / "tutorial_module.rs"


def _tutorial_blocks() -> list[str]:
    text = DOC.read_text()
    section = text[text.index("## How to add a module") :]
    return re.findall(r"```rust\n(.*?)```", section, flags=re.S)


def test_every_tutorial_block_is_verbatim_in_the_compiled_example():
    blocks = _tutorial_blocks()
    assert len(blocks) >= 4, "the tutorial shows its config, model, rows, scenario and tests"
    code = TUTORIAL.read_text()
    for block in blocks:
        assert block in code, f"docs/architecture.md block not in {TUTORIAL.name}:\n{block[:300]}"
    # Together the blocks show the whole file but its header comment: nothing left out.
    shown = sum(len(b) for b in blocks)
    assert shown > 0.9 * len(code)


# A reference to a file outside the repository, an issue or a deliverable number.
BAD = re.compile(
    r"\b\d\d-[a-z-]+\.md\b|\bspec §|\bspec \d\d\b|shared/spec|/work/|\b[Ii]ssue ?#?\d+|\b[Dd]eliverable \d"
)


def test_docs_and_catalog_cite_pages_and_papers_only():
    files = [
        *sorted((ROOT / "docs").glob("*.md")),
        ROOT / "README.md",
        *sorted((ROOT / "crates" / "hmsim" / "devices").glob("*.toml")),
        *sorted((ROOT / "crates" / "hmsim" / "topologies").glob("*.toml")),
        *sorted((ROOT / "examples").glob("*.toml")),
        *sorted((ROOT / "python" / "hmsim" / "studies" / "scenarios").glob("*.toml")),
    ]
    bad = [
        f"{f.relative_to(ROOT)}:{i}: {line.strip()}"
        for f in files
        for i, line in enumerate(f.read_text().splitlines(), 1)
        if BAD.search(line)
    ]
    assert not bad, "\n".join(bad)


def _comment_text(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every comment and docstring line of a Rust or Python file."""
    out: list[tuple[int, str]] = []
    in_doc = False
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if path.suffix == ".rs":
            j = line.find("//")
            if j >= 0:
                out.append((i, line[j:]))
            continue
        quotes = line.count('"""')
        if in_doc or quotes:
            out.append((i, line))
        elif "#" in line:
            out.append((i, line[line.index("#") :]))
        if quotes % 2 == 1:
            in_doc = not in_doc
    return out


# In comments, "spec" alone meant the project's specification (outside the repository);
# "device spec" and "spec sheet" are fine.
CODE_BAD = re.compile(BAD.pattern + r"|\b[Ss]pec\b(?![- ]sheet)(?!`)|\b[Ss]pec's\b")


def test_code_comments_cite_pages_and_papers_only():
    files = [
        *sorted((ROOT / "crates").glob("**/*.rs")),
        *sorted((ROOT / "python").glob("**/*.py")),
        *sorted((ROOT / "tests").glob("*.py")),
    ]
    bad = [
        f"{f.relative_to(ROOT)}:{i}: {text.strip()}"
        for f in files
        if "target" not in f.parts and f.name != "test_architecture_doc.py"
        for i, text in _comment_text(f)
        if CODE_BAD.search(text) and not re.search(r"DeviceSpec|device spec|resolved spec|`spec`|spec\(\)", text)
    ]
    assert not bad, "\n".join(bad)
