"""No import circle in ``tableapi`` or ``server_ext`` (issue 31).

The test reads every module's source (``ast``, nothing is imported) and draws an edge from a
module to each module of the two packages it imports:

- ``import a.b`` and ``from a.b import c`` lead to ``a.b``, or to ``a.b.c`` when that is a
  module itself (the most specific module named; the package ``__init__`` Python runs on the
  way is not counted, or every package that re-exports its modules would be a circle);
- imports under ``if TYPE_CHECKING:`` do not count (they never run);
- imports inside functions DO count: they still run, and a circle through one works only as
  long as nobody moves the import to the top of the file. The product's deliberately lazy
  imports are inside functions as well, and are counted the same; a circle they close is
  listed in :data:`KNOWN_CIRCLES` (to be removed) rather than excused.

A circle (a strongly connected set of modules) is reported by its shortest path, in import
order, and its modules.

Example::

    >>> graph = {"a": {"b"}, "b": {"c", "a"}, "c": {"a"}, "d": {"a"}}
    >>> for circle in circles(graph):
    ...     print(describe(graph, circle))
    a -> b -> a (a circle of 3 modules: a, b, c)
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("tableapi", "server_ext")

#: Circles known and not broken yet: a circle found must lie inside one of these, and the
#: list may only shrink. Empty since issue 31 (the last one, execution's executor factory
#: and its executors, went with ``execution/base.py``).
KNOWN_CIRCLES: frozenset[frozenset[str]] = frozenset()


def module_files() -> dict[str, Path]:
    """Every module of :data:`PACKAGES` by its dotted name."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of ``tree`` except the bodies of ``if TYPE_CHECKING:`` blocks."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                yield child
                yield from _runtime_nodes(child)
            continue
        yield node
        yield from _runtime_nodes(node)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(name: str, path: Path, modules: Mapping[str, Path]) -> set[str]:
    """The modules of ``modules`` that module ``name`` (at ``path``) imports at run time."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in modules else base)
    return {m for m in found if m in modules and m != name}


def import_graph() -> dict[str, set[str]]:
    """Each module of :data:`PACKAGES` -> the modules of them it imports."""
    modules = module_files()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def circles(graph: Mapping[str, set[str]]) -> list[frozenset[str]]:
    """The import circles of ``graph``: its strongly connected sets of two or more modules
    (Tarjan's), sorted by their smallest module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:  # recursion is fine: a few hundred modules
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            members = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                members.add(w)
                if w == v:
                    break
            if len(members) > 1:
                found.append(frozenset(members))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found, key=min)


def shortest_cycle(graph: Mapping[str, set[str]], circle: frozenset[str]) -> tuple[str, ...]:
    """The shortest path around ``circle`` from its smallest module back to it."""
    start = min(circle)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for v in frontier:
            for w in sorted(graph[v] & circle):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return tuple(reversed(path))
                if w not in previous:
                    previous[w] = v
                    following.append(w)
        frontier = following
    raise AssertionError(f"{sorted(circle)} is not a circle")


def describe(graph: Mapping[str, set[str]], circle: frozenset[str]) -> str:
    """``a -> b -> a``, then every module of the circle when there are more."""
    cycle = shortest_cycle(graph, circle)
    text = " -> ".join((*cycle, cycle[0]))
    if len(circle) > len(cycle):
        text += f" (a circle of {len(circle)} modules: {', '.join(sorted(circle))})"
    return text


def test_no_import_circle_in_tableapi_or_server_ext() -> None:
    graph = import_graph()
    new = [
        describe(graph, c) for c in circles(graph) if not any(c <= known for known in KNOWN_CIRCLES)
    ]
    assert not new, "import circles (break them; see tests/unit/test_imports.py):\n" + "\n".join(
        new
    )


def test_the_known_circles_are_still_there() -> None:
    """A known circle that shrank or went is written smaller in, or taken out of,
    :data:`KNOWN_CIRCLES`: the list only shrinks."""
    found = set(circles(import_graph()))
    changed = sorted(sorted(known) for known in KNOWN_CIRCLES - found)
    assert not changed, f"KNOWN_CIRCLES lists circles that shrank or went: {changed}"


def test_the_walk_sees_a_circle_and_skips_type_checking_imports(tmp_path: Path) -> None:
    """The walker itself: a function-local import closes a circle; a TYPE_CHECKING one does
    not; relative imports resolve."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.b import f\n")
    (pkg / "b.py").write_text("def f():\n    from . import c\n")
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import b\nimport pkg.a\n"
    )
    (pkg / "d.py").write_text(
        "import typing\nif typing.TYPE_CHECKING:\n    from pkg.a import x\nelse:\n    x = 1\n"
    )
    modules = {f"pkg.{n}": pkg / f"{n}.py" for n in "abcd"} | {"pkg": pkg / "__init__.py"}
    graph = {name: imports_of(name, path, modules) for name, path in modules.items()}
    assert graph["pkg.c"] == {"pkg.a"} and graph["pkg.d"] == set()
    (circle,) = circles(graph)
    assert describe(graph, circle) == "pkg.a -> pkg.b -> pkg.c -> pkg.a"
