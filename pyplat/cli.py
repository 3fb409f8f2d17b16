"""The ``pyplat`` command.

  pyplat icd                 print a directory to use as OCL_ICD_VENDORS (holds pyplat.icd only)
  pyplat icd --merged        ... holding pyplat.icd and the installed platforms' .icd files
  pyplat icd --install       write /etc/OpenCL/vendors/pyplat.icd (root); --uninstall removes it
  pyplat icd --info          where the library is, what the loaders will read
  pyplat run -- CMD ARGS...  run CMD with PyPlat visible next to the installed platforms
  pyplat conformance ...     the conformance subset (see conformance/)
  pyplat config [NAME...]    every PYPLAT_* knob: current value, where it came from, what it does
  pyplat trace FILE          a PYPLAT_TRACE file's per-kernel summary; writes FILE.svg, a timeline

Subcommands are a table (COMMANDS): each entry adds its arguments to an argparse subparser and
names the function run with the parsed arguments; a later layer adds its own by extending it.
"""
import argparse
import os
import sys

from pyplat import config, discovery


def _icd_args(p):
    g = p.add_mutually_exclusive_group()
    g.add_argument("--merged", action="store_true",
                   help="a directory holding pyplat.icd and the installed platforms' .icd files")
    g.add_argument("--install", action="store_true",
                   help="write pyplat.icd into the system vendors directory (needs root)")
    g.add_argument("--uninstall", action="store_true",
                   help="remove pyplat.icd from the system vendors directory")
    g.add_argument("--info", action="store_true", help="print where things are")
    p.add_argument("--vendors-dir", default=str(discovery.SYSTEM_VENDORS),
                   help="for --install/--uninstall (default: %(default)s)")


def _icd(args):
    if args.install:
        try:
            path = discovery.install(args.vendors_dir)
        except PermissionError:
            print(f"pyplat: cannot write {args.vendors_dir}: run as root (e.g. sudo {sys.argv[0]} "
                  "icd --install) or use `pyplat run` / `pyplat icd` instead", file=sys.stderr)
            return 1
        print(path)
        return 0
    if args.uninstall:
        try:
            path = discovery.uninstall(args.vendors_dir)
        except PermissionError:
            print(f"pyplat: cannot write {args.vendors_dir}: run as root", file=sys.stderr)
            return 1
        print(path if path else f"pyplat: no {discovery.ICD_NAME} in {args.vendors_dir}")
        return 0
    if args.info:
        print("\n".join(discovery.describe()))
        return 0
    print(discovery.merged_vendors_dir() if args.merged else discovery.vendors_dir())
    return 0


def _run_args(p):
    p.add_argument("command", nargs=argparse.REMAINDER,
                   help="the command and its arguments (after --)")


def _run(args):
    cmd = list(args.command)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        print("pyplat run: no command given (pyplat run -- CMD ARGS...)", file=sys.stderr)
        return 2
    env = discovery.environment()
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execvpe(cmd[0], cmd, env)  # the exit status (and signals) are the command's own
    except OSError as e:
        print(f"pyplat run: {cmd[0]}: {e.strerror}", file=sys.stderr)
        return 127 if isinstance(e, FileNotFoundError) else 126


def _conformance_args(p):
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments of the conformance runner")


def _conformance(args):
    # pyplat.conformance (installed from conformance/) parses its own options; its runner calls
    # discovery.enable() before the loader starts when the platform filter can match PyPlat.
    try:
        from pyplat.conformance import runner
    except ImportError:
        print("pyplat conformance: not available in this installation", file=sys.stderr)
        return 2
    return runner.main(list(args.args))


def _config_args(p):
    p.add_argument("names", nargs="*", metavar="NAME", help="only these knobs (default: all)")


def _shown(reading):
    value = reading.value
    if value is None:  # no value: the default says what happens, a set one turned it off
        return f"({reading.knob.default_doc})" if reading.source == "default" else "off"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _config(args):
    unknown = [n for n in args.names if n not in config.KNOBS]
    if unknown:
        print(f"pyplat config: unknown knob {', '.join(unknown)} (`pyplat config` lists them)",
              file=sys.stderr)
        return 2
    rows = [("knob", "value", "from", "read by", "what")]
    for r in config.describe():
        if args.names and r.knob.name not in args.names:
            continue
        source = r.source
        if r.source == "invalid":  # what the reader does with it: warns and uses the default
            source = f"invalid {r.text!r} (expected {r.knob.expected}): default"
        rows.append((r.knob.name, _shown(r), source, r.knob.reader, r.knob.doc))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[4])
    return 0


def _trace_args(p):
    p.add_argument("file", help="a file PYPLAT_TRACE wrote")
    p.add_argument("--svg", help="where to write the timeline (default: FILE.svg)")


def _trace(args):
    from pyplat.runtime import trace_view       # (reads JSON only: no platform is loaded)
    trace_view.main(args.file, args.svg)
    return 0


# name -> (help, add_arguments(parser), run(args) -> exit status)
COMMANDS = {
    "icd": ("print or install the .icd file that makes loaders find PyPlat", _icd_args, _icd),
    "run": ("run a command with PyPlat visible to its OpenCL loader", _run_args, _run),
    "conformance": ("run the conformance-style test subset", _conformance_args, _conformance),
    "config": ("show every PYPLAT_* environment variable, its value and its source", _config_args,
               _config),
    "trace": ("summarise a PYPLAT_TRACE file and draw its timeline as SVG", _trace_args, _trace),
}


def parser():
    p = argparse.ArgumentParser(prog="pyplat", description="PyPlat, an OpenCL platform in Python")
    sub = p.add_subparsers(dest="subcommand", metavar="COMMAND")
    for name, (help_text, add_arguments, run) in COMMANDS.items():
        sp = sub.add_parser(name, help=help_text, description=help_text)
        add_arguments(sp)
        sp.set_defaults(run=run)
    return p


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["conformance"]:  # every later argument is the runner's, options included
        return _conformance(argparse.Namespace(args=argv[1:]))
    p = parser()
    args = p.parse_args(argv)
    if not getattr(args, "run", None):
        p.print_help()
        return 2
    try:
        return args.run(args) or 0
    except FileNotFoundError as e:
        print(f"pyplat: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
