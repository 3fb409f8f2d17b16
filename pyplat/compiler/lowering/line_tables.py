"""Line tables (-g): DWARF line information in the host's code, so that a fault in a kernel is
reported at its source line (the runtime's fault report, runtime/sched/code_lines.pxi; the
table read back from the object: compiler/line_table.py).

While lowering, statements and expressions set their builder's `position` (irbuild.Builder),
and every instruction built then carries it as `source_position`. `finish` runs once the module
is complete: each defined function gets a DISubprogram and each of its instructions a DILocation
scoped to that function, from its own position or, without one, from the instruction before it
(the first ones: the function's own line, or line 0, "no line"). Scoping at the end, per
function, keeps every location inside the function that holds it, whichever builder (work-item
loops, barrier regions, check helpers) made the instruction. Only line tables are emitted
(emissionKind LineTablesOnly): no variables or types, so the code is the same as without -g.
"""
from llvmlite import ir

from ..tree import source_position

_I32 = ir.IntType(32)


class LineTables:
    def __init__(self, module, main_file):
        self.module = module
        self.main_file = main_file
        self._files = {}

    def mark(self, builder, n):
        """Instructions `builder` makes from now on come from node n (where n has a position).
        Returns the position before, for the caller to put back."""
        before = builder.position
        pos = source_position(n.cur) if n is not None and n.cur is not None else None
        if pos is not None and pos[1]:
            builder.position = pos
        return before

    def _file(self, name):
        f = self._files.get(name)
        if f is None:
            f = self._files[name] = self.module.add_debug_info("DIFile", {"filename": name, "directory": ""})
        return f

    def finish(self):
        m = self.module
        main = self._file(self.main_file)
        unit = m.add_debug_info("DICompileUnit", {
            "language": ir.DIToken("DW_LANG_OpenCL"), "file": main, "producer": "PyPlat",
            "isOptimized": True, "runtimeVersion": 0, "emissionKind": ir.DIToken("LineTablesOnly")},
            is_distinct=True)
        m.add_named_metadata("llvm.dbg.cu", unit)
        m.add_named_metadata("llvm.module.flags", [_I32(7), "Dwarf Version", _I32(4)])
        m.add_named_metadata("llvm.module.flags", [_I32(2), "Debug Info Version", _I32(3)])
        no_types = m.add_debug_info("DISubroutineType", {"types": m.add_metadata([])})
        for fn in m.functions:
            if fn.blocks:
                self._function(fn, unit, no_types)

    def _function(self, fn, unit, no_types):
        instructions = [i for block in fn.blocks for i in block.instructions]
        first = next((i.source_position for i in instructions if hasattr(i, "source_position")), None)
        name, line = (first[0], first[1]) if first is not None else (self.main_file, 0)
        home = self._file(name)
        sp = self.module.add_debug_info("DISubprogram", {
            "name": fn.name, "scope": home, "file": home, "line": line, "type": no_types, "scopeLine": line,
            "spFlags": ir.DIToken("DISPFlagDefinition | DISPFlagOptimized"), "unit": unit}, is_distinct=True)
        fn.set_metadata("dbg", sp)
        scopes = {name: sp}
        locations = {}
        pos = first or (name, 0, 0)
        for i in instructions:
            pos = getattr(i, "source_position", pos)
            loc = locations.get(pos)
            if loc is None:
                scope = scopes.get(pos[0])
                if scope is None:            # code from an included file
                    scope = scopes[pos[0]] = self.module.add_debug_info(
                        "DILexicalBlockFile", {"scope": sp, "file": self._file(pos[0]), "discriminator": 0})
                loc = locations[pos] = self.module.add_debug_info(
                    "DILocation", {"line": pos[1], "column": pos[2], "scope": scope})
            i.set_metadata("dbg", loc)
