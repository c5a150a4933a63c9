"""The Rust core's import graph has no circles between files and no import running back up
the layers.

The test reads the `use` lines and the `crate::…`/`super::…` paths in the code of every .rs
file under crates/hmsim/src (test modules left out: a test may reach anywhere), resolves each
imported name to the file that defines it (following `pub use` re-exports of a folder's
mod.rs), and checks the file-level graph against the layer table below. docs/architecture.md
describes the layers.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "crates" / "hmsim" / "src"

# Layers, bottom to top: a file may import from its own layer and the ones below it.
# Keys are paths under crates/hmsim/src (a folder ends with "/"); the longest match wins.
GROUND, CONFIG, COMPONENT, SKELETON, MODULE, TOP = range(6)
LAYER_NAMES = ["ground", "config", "component", "skeleton", "module", "top"]
LAYERS = {
    "error.rs": GROUND,
    "units.rs": GROUND,
    "rng.rs": GROUND,
    "hash.rs": GROUND,
    "progress.rs": GROUND,
    "named.rs": GROUND,
    "bench_result.rs": GROUND,
    "columns.rs": GROUND,
    "hugevec.rs": GROUND,
    "hostmem.rs": GROUND,
    "host_gauge.rs": GROUND,
    "cputime.rs": GROUND,
    # The crate root: the version constant, and re-exports (a facade, not an import).
    "lib.rs": GROUND,
    "stats/": GROUND,
    "config/": CONFIG,
    "cache/": COMPONENT,
    "pmem/": COMPONENT,
    # The `pmem` module (its scenario, rows and trace lifetime) beside the component it runs.
    "pmem/scenario.rs": MODULE,
    "pmem/rows.rs": MODULE,
    "pmem/replay.rs": MODULE,
    "flash/": COMPONENT,
    "device/": COMPONENT,
    "trace/": COMPONENT,
    "mempath/": COMPONENT,
    "scenario/": SKELETON,
    "tier/": MODULE,
    "pmindex/": MODULE,
    "numa/": MODULE,
    "alloc/": MODULE,
    "hybrid/": MODULE,
    "storage/": MODULE,
    "registry.rs": TOP,
    "bench.rs": TOP,
    "param_docs.rs": TOP,
}

# Back-arrows not fixed yet, (importer, imported) → why. The test fails when one of them
# disappears (delete its line) as well as when a new one appears.
ALLOWED_BACK_ARROWS: dict[tuple[str, str], str] = {}


RAW_STRING = re.compile(r'b?r(#*)"')


def _strip(text: str) -> str:
    """Blank out comments, strings and char literals, keeping line breaks."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif (m := RAW_STRING.match(text, i)) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = '"' + m.group(1)
            j = text.find(end, m.end())
            j = n if j < 0 else j + len(end)
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2 : j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2 : j + 1]))
            i = j + 1
        elif c == "'" and (m := re.compile(r"'(\\.[^']*|[^'\\])'").match(text, i)):
            out.append("' '")
            i = m.end()
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _item_end(code: str, i: int) -> int:
    """End of the item starting at i: its `;` or the brace closing its body."""
    depth = 0
    is_use = re.match(r"\s*(pub(\([^)]*\))?\s+)?use\b", code[i:]) is not None
    j = i
    while j < len(code):
        ch = code[j]
        if ch == ";" and depth == 0:
            return j + 1
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "{" and depth == 0 and not is_use:
            k, d = j, 0
            while k < len(code):
                if code[k] == "{":
                    d += 1
                elif code[k] == "}":
                    d -= 1
                    if d == 0:
                        return k + 1
                k += 1
            return len(code)
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        j += 1
    return len(code)


CFG_TEST = re.compile(r"#\[cfg\(test\)\]\s*(#\[[^\]]*\]\s*)*")


def _drop_test_items(code: str) -> tuple[str, list[str]]:
    """Remove #[cfg(test)] items; return the code and the names of `mod x;` test files."""
    test_mods = []
    while m := CFG_TEST.search(code):
        end = _item_end(code, m.end())
        item = code[m.start() : end]
        if mm := re.match(r"\s*(pub\s+)?mod\s+(\w+)\s*;", code[m.end() : end]):
            test_mods.append(mm.group(2))
        code = code[: m.start()] + re.sub(r"[^\n]", " ", item) + code[end:]
    return code, test_mods


def _use_paths(tree: str) -> list[tuple[list[str], str | None]]:
    """Flatten a use tree into (segments, bound name); '*' ends a glob."""
    tree = re.sub(r"\s*(::|\{|\}|,)\s*", r"\1", re.sub(r"\s+", " ", tree.strip()))
    out: list[tuple[list[str], str | None]] = []

    def walk(prefix: list[str], s: str) -> None:
        if "{" in s:
            head, rest = s.split("{", 1)
            inner = rest[: rest.rfind("}")]
            base = prefix + [p for p in head.split("::") if p]
            parts, depth, cur = [], 0, ""
            for ch in inner:
                if ch == "," and depth == 0:
                    parts.append(cur)
                    cur = ""
                    continue
                depth += ch == "{"
                depth -= ch == "}"
                cur += ch
            parts.append(cur)
            for p in parts:
                if p:
                    walk(base, p)
            return
        alias = None
        if " as " in s:
            s, alias = s.split(" as ")
        segs = prefix + [p for p in s.split("::") if p]
        if segs and segs[-1] == "self":
            segs = segs[:-1]
        if not segs:
            return
        out.append((segs, alias or (segs[-1] if segs[-1] != "*" else None)))

    walk([], tree)
    return out


class Crate:
    def __init__(self, src: Path) -> None:
        self.src = src
        self.files: dict[str, str] = {}  # rel path → stripped code (tests removed)
        self.modpath: dict[str, tuple[str, ...]] = {}
        self.modules: dict[tuple[str, ...], str] = {}  # module path → file (inline modules too)
        test_files: set[str] = set()
        raw = {}
        for p in sorted(src.rglob("*.rs")):
            rel = p.relative_to(src).as_posix()
            raw[rel] = p.read_text()
        for rel, text in raw.items():
            code, test_mods = _drop_test_items(_strip(text))
            self.files[rel] = code
            parts = rel[:-3].split("/")
            if parts[-1] in ("mod", "lib"):
                parts = parts[:-1]
            self.modpath[rel] = tuple(parts)
            self.modules[tuple(parts)] = rel
            d = rel.rsplit("/", 1)[0] + "/" if "/" in rel else ""
            if not rel.endswith(("mod.rs", "lib.rs")):
                d = rel[:-3] + "/"
            for t in test_mods:
                test_files.add(d + t + ".rs")
                test_files.add(d + t + "/mod.rs")
        # A test file's own children are tests too.
        for rel in list(self.files):
            if any(rel == t or rel.startswith(t[:-3] + "/") for t in test_files):
                del self.files[rel]
                self.modules.pop(self.modpath.pop(rel), None)
        self.macros: dict[str, str] = {}
        for rel, code in self.files.items():
            for m in re.finditer(r"#\[macro_export\]\s*macro_rules!\s*(\w+)", code):
                self.macros[m.group(1)] = rel
        # Inline modules (`mod x { … }`): their spans, for `super::` inside them.
        self.inline: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
        for rel, code in self.files.items():
            for m in re.finditer(r"\bmod\s+(\w+)\s*\{", code):
                end = _item_end(code, m.start())
                self.inline[rel].append((m.start(), end, m.group(1)))
        # Names each module brings into scope with `use`: name → absolute path.
        self.scope: dict[str, dict[str, list[str]]] = {}
        self.globs: dict[str, list[list[str]]] = {}
        self.uses: dict[str, list[tuple[int, list[str], bool]]] = {}
        for rel, code in self.files.items():
            names, globs, uses = {}, [], []
            for m in re.finditer(r"(?<![\w:])(pub(\([^)]*\))?\s+)?use\s+([^;]+);", code):
                here = self._mod_at(rel, m.start())
                for segs, bound in _use_paths(m.group(3)):
                    ab = self._absolute(segs, here, names)
                    if ab is None:
                        continue
                    if ab[-1] == "*":
                        globs.append(ab[:-1])
                    elif bound:
                        names[bound] = ab
                    uses.append((m.start(), ab, bool(m.group(1))))
            self.scope[rel], self.globs[rel], self.uses[rel] = names, globs, uses

    def _mod_at(self, rel: str, pos: int) -> tuple[str, ...]:
        path = self.modpath[rel]
        for start, end, name in sorted(self.inline.get(rel, [])):
            if start <= pos < end:
                path = (*path, name)
        return path

    def _absolute(self, segs: list[str], here: tuple[str, ...], names: dict) -> list[str] | None:
        head = segs[0]
        if head in ("crate", "$crate"):
            return list(segs[1:])
        if head == "self":
            return [*here, *segs[1:]]
        if head == "super":
            base = list(here)
            while segs and segs[0] == "super":
                base = base[:-1]
                segs = segs[1:]
            return base + list(segs)
        if head in names:
            return names[head] + list(segs[1:])
        if tuple([*here, head]) in self.modules:  # a child module named without `self::`
            return [*here, *segs]
        return None  # an external crate or std

    def resolve(self, ab: list[str], seen: frozenset = frozenset()) -> str | None:
        """The file defining the item at absolute path `ab` (or the deepest module on it)."""
        for k in range(len(ab), -1, -1):
            mod = tuple(ab[:k])
            if mod in self.modules:
                rel = self.modules[mod]
                rest = ab[k:]
                if not rest:
                    return rel
                if k == 0 and rest[0] in self.macros:
                    return self.macros[rest[0]]
                key = (rel, rest[0])
                target = self.scope[rel].get(rest[0])
                if target is not None and key not in seen:
                    found = self.resolve(target + rest[1:], seen | {key})
                    if found is not None:
                        return found
                if target is None and key not in seen:
                    # A name a folder's mod.rs brings in with a glob (`pub use child::*`).
                    for g in self.globs[rel]:
                        if self._defines(g, rest[0]):
                            return self.resolve([*g, *rest], seen | {key})
                return rel
        return None

    def _defines(self, mod: list[str], name: str) -> bool:
        rel = self.modules.get(tuple(mod))
        if rel is None:
            return False
        pat = rf"\b(fn|struct|enum|trait|type|const|static|mod|union)\s+{re.escape(name)}\b"
        return re.search(pat, self.files[rel]) is not None or name in self.scope[rel]

    def graph(self) -> dict[str, set[str]]:
        edges: dict[str, set[str]] = {rel: set() for rel in self.files}
        code_path = re.compile(r"(?<![\w:$])(\$crate|crate|super|self|[a-z_][a-z0-9_]*)((?:\s*::\s*\w+)+)(!?)")
        for rel, code in self.files.items():
            names = self.scope[rel]
            folder = self.modpath[rel]
            is_facade = rel.endswith(("mod.rs", "lib.rs"))
            for _pos, ab, public in self.uses[rel]:
                if ab and ab[-1] == "*":
                    ab = ab[:-1]
                target = self.resolve(ab)
                if target is None:
                    continue
                if target in edges and self.modpath[target] == tuple(ab):
                    continue  # a module imported by name: its uses below count, not this
                # A folder's mod.rs re-exporting its own children is its facade, not a
                # dependency.
                if public and is_facade and self.modpath[target][: len(folder)] == folder:
                    continue
                edges[rel].add(target)
            # Paths in code: `crate::x::Y`, `super::Y`, `module_alias::Y`, macro calls.
            no_use = re.sub(r"(?<![\w:])(pub(\([^)]*\))?\s+)?use\s+[^;]+;", lambda m: " " * len(m.group(0)), code)
            for m in code_path.finditer(no_use):
                segs = [m.group(1), *[s.strip() for s in m.group(2).split("::") if s.strip()]]
                here = self._mod_at(rel, m.start())
                known = ("crate", "$crate", "super", "self")
                if segs[0] not in known and segs[0] not in names and (*here, segs[0]) not in self.modules:
                    continue
                ab = self._absolute(segs, here, names)
                if ab is None:
                    continue
                target = self.resolve(ab)
                if target is not None:
                    edges[rel].add(target)
            for name, home in self.macros.items():
                if re.search(rf"(?<![\w:]){name}!", no_use):
                    edges[rel].add(home)
            edges[rel].discard(rel)
        return edges


def layer_of(rel: str) -> int:
    best = None
    for key, layer in LAYERS.items():
        if (rel == key or (key.endswith("/") and rel.startswith(key))) and (best is None or len(key) > len(best[0])):
            best = (key, layer)
    assert best is not None, f"{rel} has no layer: add its folder to LAYERS in {__file__}"
    return best[1]


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of two files or more (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out)


def back_arrows(edges: dict[str, set[str]]) -> set[tuple[str, str]]:
    return {(a, b) for a, bs in edges.items() for b in bs if layer_of(a) < layer_of(b)}


def _graph() -> dict[str, set[str]]:
    return Crate(SRC).graph()


def test_every_file_has_a_layer():
    for rel in Crate(SRC).files:
        layer_of(rel)


def test_no_import_circles_between_files():
    found = circles(_graph())
    assert not found, "import circles between files:\n" + "\n".join(" ↔ ".join(c) for c in found)


def test_no_import_runs_back_up_the_layers():
    found = back_arrows(_graph())
    new = sorted(found - ALLOWED_BACK_ARROWS.keys())
    gone = sorted(ALLOWED_BACK_ARROWS.keys() - found)

    def show(a: str, b: str) -> str:
        return f"{a} ({LAYER_NAMES[layer_of(a)]}) → {b} ({LAYER_NAMES[layer_of(b)]})"

    assert not new, "imports running back up the layers:\n" + "\n".join(show(a, b) for a, b in new)
    assert not gone, "allowed back-arrows that no longer exist (delete them from ALLOWED_BACK_ARROWS):\n" + "\n".join(
        show(a, b) for a, b in gone
    )


def test_modules_do_not_import_one_another():
    """What two modules share lives in a component below both (the memory-path engine, the
    PMem write path, the cache model), so each module can be read, changed or dropped alone."""
    edges = _graph()
    found = sorted(
        (a, b)
        for a, bs in edges.items()
        for b in bs
        if layer_of(a) == layer_of(b) == MODULE and a.split("/")[0] != b.split("/")[0]
    )
    assert not found, "modules importing other modules:\n" + "\n".join(f"{a} → {b}" for a, b in found)


def test_the_reader_finds_known_edges():
    """The reader itself: a circle and a back-arrow it must see, on a made-up crate."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        (root / "low").mkdir()
        (root / "high").mkdir()
        (root / "lib.rs").write_text("pub mod low;\npub mod high;\n")
        (root / "low" / "mod.rs").write_text("mod a;\nmod b;\npub use a::A;\npub use b::B;\n")
        (root / "low" / "a.rs").write_text("use super::B;\n// use crate::high::H;\npub struct A;\n")
        (root / "low" / "b.rs").write_text(
            'pub struct B;\nfn f() -> crate::high::H { let _ = "crate::low::a::A"; super::a::A; todo!() }\n'
            "#[cfg(test)]\nmod tests {\n    use crate::high::h::Hidden;\n}\n"
        )
        (root / "high" / "mod.rs").write_text("mod h;\npub use h::H;\npub fn size() -> usize { h::SIZE }\n")
        (root / "high" / "h.rs").write_text(
            "use crate::low;\npub struct H(low::A);\npub struct Hidden;\npub const SIZE: usize = 1;\n"
        )
        edges = Crate(root).graph()
    assert edges["low/a.rs"] == {"low/b.rs"}  # through the re-export; the comment ignored
    assert edges["low/b.rs"] == {"high/h.rs", "low/a.rs"}  # the string and the test ignored
    assert edges["high/h.rs"] == {"low/a.rs"}  # through the module alias
    assert edges["low/mod.rs"] == set()  # a facade
    assert edges["high/mod.rs"] == {"high/h.rs"}  # its own code names a child module
    assert circles(edges) == [["high/h.rs", "low/a.rs", "low/b.rs"]]
