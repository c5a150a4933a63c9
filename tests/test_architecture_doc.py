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


def _tutorial_regions() -> list[tuple[str, str]]:
    """(name, code) of each `// tutorial: NAME` region of the compiled example, in order."""
    parts = re.split(r"^// tutorial: (\S+)\n", TUTORIAL.read_text(), flags=re.M)
    return [(parts[i], parts[i + 1].rstrip("\n") + "\n") for i in range(1, len(parts), 2)]


def test_the_tutorial_blocks_are_the_regions_of_the_compiled_example():
    blocks = _tutorial_blocks()
    regions = _tutorial_regions()
    names = [name for name, _ in regions]
    assert names == ["imports", "config", "model", "row", "scenario", "experiment", "tests"], names
    assert len(blocks) == len(regions), f"{len(blocks)} rust blocks for regions {names}"
    for block, (name, code) in zip(blocks, regions, strict=True):
        assert block == code, f"docs/architecture.md block differs from region {name!r} of {TUTORIAL.name}"
    # Nothing but the header comment lies outside the regions: the doc shows the whole example.
    header = TUTORIAL.read_text().split("// tutorial: ")[0]
    assert all(line.startswith("//") or not line for line in header.splitlines()), header


def test_the_tutorial_teaches_the_params_macro_and_the_skeleton():
    code = dict(_tutorial_regions())
    assert "params! {" in code["config"] and "#[derive(Deserialize" not in code["config"]
    assert "impl Validate" not in TUTORIAL.read_text()
    assert "result_row! {" in code["row"]
    assert "impl Scenario for" in code["scenario"] and "fn build" in code["scenario"]
    assert "impl Experiment for" in code["experiment"] and "warnings" in code["experiment"]
    assert "fn points" in code["experiment"] and "fn run_point" in code["experiment"]
    section = DOC.read_text()[DOC.read_text().index("## How to add a module") :]
    needs = ("registry.rs", "param_docs.rs", "UPDATE_PARAM_DOCS=1", "docs/parameters/", "StudyScenario", "sc.point(")
    for needed in needs:
        assert needed in section, needed


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
