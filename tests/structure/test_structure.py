"""The shape of pyplat/: no import cycles, no file over 800 lines.

The import graph is read from the sources, not from a running interpreter, so an import made
inside a function (the usual way to hide a cycle) counts like any other: every `import` and
`from ... import` of every .py file (ast, relative imports resolved), and the `import`/`cimport`
lines of the Cython files (.pyx/.pxd, and the .pxi parts a .pyx includes, which belong to it).
"""
import ast
import re
from pathlib import Path

import pytest

from support import REPO

PACKAGE = REPO / "pyplat"
if not PACKAGE.is_dir():
    pytest.skip("no pyplat/ sources next to the tests", allow_module_level=True)

MAX_LINES = 800
SOURCE_SUFFIXES = (".py", ".pyx", ".pxi", ".pxd", ".c", ".h")


def _module_name(path):
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _known_modules():
    names = {_module_name(p) for suffix in (".py", ".pyx") for p in PACKAGE.rglob("*" + suffix)}
    try:   # modules generated at build time (pyplat/cl.py, pyplat/api/_entry_points.py)
        import pyplat
        installed = Path(pyplat.__file__).resolve().parent
        names |= {".".join(("pyplat",) + p.relative_to(installed).with_suffix("").parts)
                  for p in installed.rglob("*.py") if p.name != "__init__.py"}
    except ImportError:
        pass
    return names


def _target(name, known):
    """The module an import of `name` loads: the longest known prefix (pyplat.cl is a module,
    pyplat.compiler.CompileError an attribute of pyplat.compiler)."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        candidate = ".".join(parts[:cut])
        if candidate in known:
            return candidate
    return None


def _python_imports(path, module):
    """Absolute names imported anywhere in a .py file (function bodies included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module
            # `from a import b`: b is a module (a.b) or a name of a (then _target finds a)
            names += [f"{prefix}.{alias.name}" if alias.name != "*" else prefix
                      for alias in node.names]
    return names


_CY_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+c?import\s+(.+)|c?import\s+([\w.,\s]+))", re.M)
_CY_INCLUDE = re.compile(r"""^\s*include\s+["']([^"']+)["']""", re.M)


def _cython_imports(text):
    names = []
    for m in _CY_IMPORT.finditer(text):
        if m.group(1):
            names += [f"{m.group(1)}.{n.split()[0]}" if n.split()[0] != "*" else m.group(1)
                      for n in m.group(2).strip("()").split(",") if n.strip()]
        else:
            names += [n.split()[0] for n in m.group(3).split(",") if n.strip()]
    return names


def import_graph():
    """{module: {module it imports}} over pyplat/ (imports of other packages left out)."""
    known = _known_modules()
    graph = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        graph[module] = {_target(n, known) for n in _python_imports(path, module)}
    for path in sorted(PACKAGE.rglob("*.pyx")) + sorted(PACKAGE.rglob("*.pxd")):
        module = _module_name(path)
        text = path.read_text(encoding="utf-8")
        for part in _CY_INCLUDE.findall(text):        # .pxi parts are the module's own text
            included = path.parent / part
            if included.is_file():
                text += "\n" + included.read_text(encoding="utf-8")
        graph.setdefault(module, set()).update(_target(n, known) for n in _cython_imports(text))
    for module, targets in graph.items():
        targets.discard(None)
        targets.discard(module)
    return graph


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan), each with one cycle
    through it spelled out."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [(component, _one_cycle(graph, component)) for component in found]


def _one_cycle(graph, component):
    """A path start -> ... -> start inside the component (breadth-first, shortest)."""
    members, start = set(component), component[0]
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph.get(v, ())):
                if w == start:
                    return paths[v] + [start]
                if w in members and w not in paths:
                    paths[w] = paths[v] + [w]
                    nxt.append(w)
        frontier = nxt
    return component


def test_the_import_scan_sees_what_python_sees():
    """The scan itself: relative and function-level imports and Cython cimports are edges."""
    graph = import_graph()
    assert "pyplat.config" in graph["pyplat.discovery"]            # from pyplat import config
    assert "pyplat.discovery" in graph["pyplat"]                   # inside enable()
    assert "pyplat.runtime._sched" in graph["pyplat.runtime.graph"]
    assert "pyplat.cl" in graph["pyplat.api.device"]               # generated at build time
    assert all(module.startswith("pyplat") for targets in graph.values() for module in targets)
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == \
        [(["a", "b", "c"], ["a", "b", "c", "a"])]


def test_no_import_cycles_in_pyplat():
    found = cycles(import_graph())
    assert not found, "import cycles in pyplat/:\n" + "\n".join(
        f"  {' -> '.join(cycle)}   (modules of the cycle: {', '.join(component)})"
        for component, cycle in found)


# Each layer calls only downwards (docs/architecture.md): the API layer over the core objects over
# the device classes, over the compiler and the runtime, which know nothing of each other.
LAYERS = {"api": 3, "core": 2, "devices": 1, "compiler": 0, "runtime": 0}


def test_layers_import_only_downwards():
    upward = []
    for module, targets in sorted(import_graph().items()):
        here = module.split(".")[1] if "." in module else None
        for target in sorted(targets):
            there = target.split(".")[1] if "." in target else None
            if here in LAYERS and there in LAYERS and here != there \
                    and LAYERS[there] >= LAYERS[here]:
                upward.append(f"  {module} imports {target}")
    assert not upward, "imports against the layering:\n" + "\n".join(upward)


def test_config_and_discovery_stand_alone():
    """pyplat.config imports nothing of pyplat (every layer uses it); pyplat.discovery, which
    runs in processes that never load the platform, only it."""
    graph = import_graph()
    assert graph["pyplat.config"] == set()
    assert graph["pyplat.discovery"] <= {"pyplat.config"}


def test_no_file_in_pyplat_over_800_lines():
    long = []
    for path in sorted(PACKAGE.rglob("*")):
        if path.suffix in SOURCE_SUFFIXES and path.is_file():
            n = len(path.read_text(encoding="utf-8", errors="replace").splitlines())
            if n > MAX_LINES:
                long.append(f"  {path.relative_to(REPO)}: {n} lines")
    assert not long, f"files in pyplat/ over {MAX_LINES} lines:\n" + "\n".join(long)


# Targets are objects (compiler/targets/): NVPTX's code generation is one package, the lowering
# is target-neutral, and the host is a target like any other, never a None.
NVPTX = "pyplat.compiler.targets.nvptx"
CUDA = "pyplat.devices.cuda"


def _inside(module, package):
    return module == package or module.startswith(package + ".")


def test_nvptx_code_is_in_one_package():
    """Outside the package, only its target object is imported (pyplat.compiler.targets.nvptx);
    devices/cuda also imports the launch and printf ABI (abi.py), and nothing of the lowering."""
    graph = import_graph()
    wrong = []
    for module, targets in sorted(graph.items()):
        if _inside(module, NVPTX):
            continue
        allowed = {NVPTX, NVPTX + ".abi"} if _inside(module, CUDA) else {NVPTX}
        wrong += [f"  {module} imports {t}" for t in sorted(targets)
                  if _inside(t, NVPTX) and t not in allowed
                  or _inside(module, CUDA) and _inside(t, "pyplat.compiler.lowering")]
    assert not wrong, "NVPTX internals used outside compiler/targets/nvptx/:\n" + "\n".join(wrong)
    strays = [str(p.relative_to(REPO)) for p in PACKAGE.rglob("*nvptx*")
              if p.suffix in SOURCE_SUFFIXES and not _inside(_module_name(p), NVPTX)]
    assert not strays, f"NVPTX modules outside its package: {strays}"


def test_the_lowering_knows_no_target():
    """compiler/lowering/ is target-neutral: a target's own lowering subclasses its module
    generator (ModuleGen's hooks), never the other way round."""
    graph = import_graph()
    wrong = [f"  {m} imports {t}" for m, targets in sorted(graph.items())
             if _inside(m, "pyplat.compiler.lowering")
             for t in sorted(targets) if _inside(t, "pyplat.compiler.targets")]
    assert not wrong, "the lowering imports targets:\n" + "\n".join(wrong)


_NONE_TARGET = re.compile(r"\b\w*target\s+is\s+(?:not\s+)?None\b|\b\w*target\s*=\s*None\b")


def test_no_target_is_none_in_pyplat():
    """The host is HOST (compiler/targets/host.py): what depends on the target asks it."""
    assert _NONE_TARGET.search("if device.compiler_target is not None:")
    assert _NONE_TARGET.search("def link(objects, target=None):")
    assert not _NONE_TARGET.search("if target.runs_own_code:")
    found = []
    for path in sorted(PACKAGE.rglob("*")):
        if path.suffix in (".py", ".pyx", ".pxi", ".pxd") and path.is_file():
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if _NONE_TARGET.search(line):
                    found.append(f"  {path.relative_to(REPO)}:{n}: {line.strip()}")
    assert not found, "targets tested against None:\n" + "\n".join(found)


# PYPLAT_CHECK's checker is an instrumentation of the lowering (docs/compiler.md, "Checks compiled
# into kernels"): lowering calls the hooks of lowering/instrumentation.py and imports nothing of
# compiler/checker (the driver installs it); the checker builds IR with lowering's public helpers
# only; the checks' run-time half in the core reads only the checker's layout.
CHECKER = "pyplat.compiler.checker"
LOWERING_FOR_THE_CHECKER = {"pyplat.compiler.lowering." + m for m in (
    "instrumentation", "irbuild", "workgroup", "barrier_tree", "statements", "tree_walk")}
CHECKS_AT_RUN_TIME = ("pyplat.core.checks", "pyplat.core.check_shadows")


def _in(module, package):
    return module == package or module.startswith(package + ".")


def test_lowering_imports_nothing_of_the_checker():
    graph = import_graph()
    found = [f"  {module} imports {target}" for module, targets in sorted(graph.items())
             if _in(module, "pyplat.compiler.lowering") for target in sorted(targets) if _in(target, CHECKER)]
    assert not found, "lowering must reach the checker through instrumentation.py only:\n" + "\n".join(found)


def test_the_checker_uses_only_lowerings_public_helpers():
    graph = import_graph()
    assert any(_in(module, CHECKER) for module in graph)
    found = [f"  {module} imports {target}" for module, targets in sorted(graph.items()) if _in(module, CHECKER)
             for target in sorted(targets)
             if _in(target, "pyplat.compiler.lowering") and target not in LOWERING_FOR_THE_CHECKER]
    assert not found, "the checker imports lowering internals:\n" + "\n".join(found)


def test_the_checks_run_time_half_reads_only_the_checker_layout():
    graph = import_graph()
    assert graph[CHECKER + ".layout"] == set() and graph[CHECKER] == set()
    for module in CHECKS_AT_RUN_TIME:
        compiler = {target for target in graph[module] if _in(target, "pyplat.compiler")}
        assert compiler == {CHECKER + ".layout"}, (module, compiler)
