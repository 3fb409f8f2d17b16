"""The table of PYPLAT_* knobs (pyplat/config.py) and `pyplat config`.

What a user relies on: a knob set to a valid value is used, an invalid one is a clear stderr line
and the default (never a crash), and the table names every knob the code reads, and who reads it.
"""
import re

import pytest

from pyplat import cli, config
from support import REPO

needs_sources = pytest.mark.skipif(not (REPO / "pyplat").is_dir(), reason="no source tree")

# A read of a knob in the code: os.environ.get("X") / os.environ["X"] / getenv("X") / config.value("X")
_READ = re.compile(r"""(?:environ(?:\.get)?\s*[\(\[]|getenv\s*\(|config\.(?:value|check|reading)\s*\()\s*
                       ["'](PYPLAT_[A-Z0-9_]+)["']""", re.X)
# Where each kind of reader lives in the repository.
_PLACES = {"python": ["pyplat/**/*.py", "pyplat/**/*.pyx", "pyplat/**/*.pxi"],
           "shim": ["icd/*.c", "icd/*.h"], "example": ["examples/*.c", "examples/*.py"],
           "conformance": ["conformance/*.py"], "tools": ["tools/*.py"]}


@pytest.fixture(autouse=True)
def fresh():
    config.reload()
    yield
    config.reload()


def _reads(patterns, skip=()):
    """{knob: [file:line, ...]} of the reads in the files the patterns match."""
    found = {}
    for pattern in patterns:
        for path in sorted(REPO.glob(pattern)):
            if path.relative_to(REPO).as_posix() in skip:
                continue
            for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                for name in _READ.findall(line):
                    found.setdefault(name, []).append(f"{path.relative_to(REPO)}:{n}")
    return found


def test_table_is_well_formed():
    for name, knob in config.KNOBS.items():
        assert name == knob.name and name.startswith("PYPLAT_"), name
        assert knob.reader in config.READERS, name
        assert knob.doc and knob.expected and knob.default_doc, name


def test_unset_empty_valid_and_invalid_values(monkeypatch, capsys):
    monkeypatch.delenv("PYPLAT_IDLE_US", raising=False)
    assert config.value("PYPLAT_IDLE_US") == 1000.0
    assert config.reading("PYPLAT_IDLE_US").source == "default"
    monkeypatch.setenv("PYPLAT_IDLE_US", "")
    assert config.value("PYPLAT_IDLE_US") == 1000.0
    monkeypatch.setenv("PYPLAT_IDLE_US", "30")
    assert config.value("PYPLAT_IDLE_US") == 30.0          # a changed text is parsed again
    assert config.reading("PYPLAT_IDLE_US").source == "environment"
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("PYPLAT_IDLE_US", "soon")
    assert config.value("PYPLAT_IDLE_US") == 1000.0
    assert config.value("PYPLAT_IDLE_US") == 1000.0
    err = capsys.readouterr().err
    # the variable, the value and what is expected; once, not on every read
    assert err == ("pyplat: PYPLAT_IDLE_US='soon' is not a number of µs; "
                   "using the default, 1000\n"), err
    with pytest.raises(config.ConfigError) as e:
        config.check("PYPLAT_IDLE_US")
    assert (e.value.name, e.value.text, e.value.expected) == \
        ("PYPLAT_IDLE_US", "soon", "a number of µs")


@pytest.mark.parametrize("name,text,want", [
    ("PYPLAT_WORKERS", "4", 4), ("PYPLAT_WORKERS", "0", None), ("PYPLAT_WORKERS", "-2", None),
    ("PYPLAT_WORKERS", "2.5", None), ("PYPLAT_IDLE_US", "30", 30.0),
    ("PYPLAT_IDLE_US", "0.5", 0.5), ("PYPLAT_IDLE_US", "soon", None),
    ("PYPLAT_IDLE_US", "-1", None), ("PYPLAT_IDLE_US", "inf", None),
    ("PYPLAT_DEVICES", "3", ("cpu",) * 3), ("PYPLAT_DEVICES", "cpu,cpu-separate", ("cpu", "cpu-separate")),
    ("PYPLAT_DEVICES", " CPU , cuda", ("cpu", "cuda")), ("PYPLAT_DEVICES", "0", None),
    ("PYPLAT_DEVICES", "cpu,,cpu", None), ("PYPLAT_DEVICES", "cpu;gpu", None),
    ("PYPLAT_DRIVER", "basic", "basic"), ("PYPLAT_DRIVER", "threads", "pool"),
    ("PYPLAT_DRIVER", "gpu", None), ("PYPLAT_FAST_PATH", "0", False),
    ("PYPLAT_FAST_PATH", "off", False), ("PYPLAT_FAST_PATH", "maybe", None),
    ("PYPLAT_POOL_STATS", "1", True), ("PYPLAT_INORDER_PARALLEL", "0", False),
    ("PYPLAT_CACHE_DIR", "off", "off"), ("PYPLAT_CACHE_DIR", "", "off"),
    ("PYPLAT_CACHE_DIR", "/tmp/k", "/tmp/k"),
    ("PYPLAT_ICD_DEBUG", "1", True), ("PYPLAT_ICD_DEBUG", "0", False),
    ("PYPLAT_ICD_DEBUG", "yes please", True),        # the shim's rule: anything but 0 is on
])
def test_each_kind_of_value(monkeypatch, capsys, name, text, want):
    """`want` None: invalid, so the default and one stderr line naming the variable."""
    monkeypatch.setenv(name, text)
    got = config.value(name)
    err = capsys.readouterr().err
    knob = config.KNOBS[name]
    if want is None:
        assert got == knob.default_value() and f"{name}={text!r} is not {knob.expected}" in err
    else:
        assert got == (None if want == "off" else want) and err == ""


def test_devices_and_compute_units_follow_the_knobs(monkeypatch, capsys):
    import os

    from pyplat.core.platform import Platform
    monkeypatch.setenv("PYPLAT_DEVICES", "2")
    monkeypatch.setenv("PYPLAT_WORKERS", "junk")       # a warning and one per core, not a crash
    p = Platform()
    assert len(p.devices) == 2
    assert [d.compute_units for d in p.devices] == [os.cpu_count() or 1] * 2
    assert "PYPLAT_WORKERS='junk' is not a positive integer" in capsys.readouterr().err


def test_pyplat_config_prints_every_knob(monkeypatch, capsys):
    monkeypatch.setenv("PYPLAT_DEVICES", "2")
    monkeypatch.setenv("PYPLAT_WORKERS", "many")
    monkeypatch.delenv("PYPLAT_DRIVER", raising=False)
    assert cli.main(["config"]) == 0
    out = capsys.readouterr()
    assert out.err == ""                                # showing a bad value is not using it
    rows = {line.split()[0]: line.split() for line in out.out.splitlines()[1:]}
    assert set(rows) == set(config.KNOBS)
    assert rows["PYPLAT_DEVICES"][1:3] == ["cpu,cpu", "environment"]
    assert rows["PYPLAT_DRIVER"][1:3] == ["pool", "default"]
    assert rows["PYPLAT_WORKERS"][2] == "invalid" and "'many'" in out.out
    assert cli.main(["config", "PYPLAT_DEVICES"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2
    assert cli.main(["config", "PYPLAT_NO_SUCH"]) == 2
    assert "PYPLAT_NO_SUCH" in capsys.readouterr().err


@needs_sources
def test_every_knob_read_anywhere_is_in_the_table():
    """Code -> table: a PYPLAT_* variable read in pyplat/, icd/, examples/, conformance/ or
    tools/ is in the table; table -> code: each knob is read where its `reader` says."""
    everywhere = _reads([p for patterns in _PLACES.values() for p in patterns])
    missing = {name: where for name, where in everywhere.items() if name not in config.KNOBS}
    assert not missing, f"knobs read but not in pyplat/config.py's table: {missing}"
    for name, knob in config.KNOBS.items():
        assert name in _reads(_PLACES[knob.reader]), \
            f"{name}: the table says {knob.reader} reads it, but no read found there"


@needs_sources
def test_pyplat_reads_knobs_only_through_the_table():
    """One parse per knob: nothing in pyplat/ reads a PYPLAT_* variable from the environment
    itself (config.value is the way)."""
    direct = re.compile(r"""(?:environ(?:\.get)?\s*[\(\[]|getenv\s*\()\s*["'](PYPLAT_[A-Z0-9_]+)""")
    found = []
    for pattern in _PLACES["python"]:
        for path in sorted(REPO.glob(pattern)):
            if path.relative_to(REPO).as_posix() == "pyplat/config.py":
                continue
            for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                found += [f"{path.relative_to(REPO)}:{n} {name}" for name in direct.findall(line)]
    assert not found, "PYPLAT_* read outside pyplat/config.py:\n" + "\n".join(found)
