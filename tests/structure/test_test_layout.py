"""The shape of tests/ (docs/testing.md): test modules sit in folders mirroring the source, never at
tests/ root (only conftest.py is there); what tests share lives in the package tests/support/,
and no test module imports another one, at module level, inside a function or in the code of a
child process it starts. pytest imports test modules by basename (the folders have no
__init__.py), so basenames are unique across the folders. Every folder is described in
docs/testing.md."""
import ast
import re

import pytest

from support import REPO, TESTS

SKIP = {"__pycache__", ".pytest_cache", ".hypothesis"}
# `import test_x` / `from test_x import` in the text of a child process's code
CHILD_IMPORT = re.compile(r"^\s*(?:from|import)\s+(test_\w+)", re.M)


def _files(folder):
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not SKIP & set(path.relative_to(TESTS).parts):
            yield path


def _test_folders():
    return sorted(p for p in TESTS.iterdir() if p.is_dir() and p.name not in SKIP | {"support"})


def _test_modules():
    return [p for folder in _test_folders() for p in _files(folder) if p.suffix == ".py"]


def test_only_conftest_at_the_root():
    strays = [p.name for p in TESTS.iterdir() if p.is_file() and p.name != "conftest.py"]
    assert not strays, f"move these into a folder of tests/ (docs/testing.md): {strays}"


def test_test_folders_hold_only_test_modules():
    others = [str(p.relative_to(TESTS)) for folder in _test_folders() for p in _files(folder)
              if not (p.name.startswith("test_") and p.suffix == ".py")]
    assert not others, f"helpers and data belong in tests/support/: {others}"


def test_basenames_are_unique():
    seen = {}
    for path in _test_modules():
        seen.setdefault(path.name, []).append(str(path.relative_to(TESTS)))
    twice = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert not twice, twice


def _imported(tree):
    """Top-level module names imported anywhere in the tree, and those the code of its string
    constants imports (the scripts of child processes)."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [(node.lineno, a.name.split(".")[0]) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append((node.lineno, node.module.split(".")[0]))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names += [(node.lineno, m) for m in CHILD_IMPORT.findall(node.value)]
    return names


@pytest.mark.parametrize("top", ["tests", "support"])
def test_no_test_module_imports_another(top):
    paths = _test_modules() if top == "tests" else [p for p in _files(TESTS / "support") if p.suffix == ".py"]
    modules = {p.stem for p in _test_modules()}
    bad = []
    for path in paths:
        for line, name in _imported(ast.parse(path.read_text(), str(path))):
            # (a test module may import itself, in a child process it starts)
            if (name in modules or name.startswith("test_")) and name != path.stem:
                bad.append(f"{path.relative_to(TESTS)}:{line}: imports {name}")
    assert not bad, "move what is shared into tests/support/:\n" + "\n".join(bad)


def test_docs_describe_every_folder():
    doc = (REPO / "docs" / "testing.md").read_text()
    folders = [str(p.relative_to(TESTS)) for top in _test_folders() + [TESTS / "support"]
               for p in [top] + sorted(q for q in top.rglob("*") if q.is_dir())
               if not SKIP & set(p.relative_to(TESTS).parts)]
    missing = [f"tests/{f}/" for f in folders if f"`tests/{f}/`" not in doc]
    assert not missing, f"docs/testing.md does not describe: {missing}"
