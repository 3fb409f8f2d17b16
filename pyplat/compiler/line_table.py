"""The line table of a program's object code (built with -g; lowering/line_tables.py emits it):
which source line each address of its code comes from, read from the object's DWARF
`.debug_line` (version 2 to 4, what LLVM writes under the module flag "Dwarf Version" 4).

Only what a fault report needs (runtime/sched/code_lines.pxi): the rows of the sequences that
start in the code section (`.ltext` in the JIT's large code model, else `.text`: the executable
section of the program's global functions; addresses found through `.rela.debug_line`, since
the object is relocatable and the section holds zeros where they go), and one global function
there with its offset, through which the loaded code's address is found (`place`). ELF64 little-endian only
(x86_64, aarch64): for anything else `read` returns None, and faults are reported without a line.
"""
import struct

_SHT_RELA, _SHT_SYMTAB = 4, 2
_SHF_EXECINSTR = 4
_STT_FUNC, _STB_GLOBAL = 2, 1
END = 0xFFFFFFFF        # the file of a row that ends a sequence (code_lines.pxi: PP_LINES_END)


class LineTable:
    """rows: sorted [(offset in the code section, line, column, file index)], line 0 for code
    of no one line, file END where a sequence ends; files: the file names by index; anchor: a global
    function of the section (its name) and anchor_offset its offset there; text_size: the
    section's size."""
    __slots__ = ("rows", "files", "anchor", "anchor_offset", "text_size")

    def __init__(self, rows, files, anchor, anchor_offset, text_size):
        self.rows, self.files = rows, files
        self.anchor, self.anchor_offset, self.text_size = anchor, anchor_offset, text_size

    def packed(self):
        """(rows as little-endian uint32 quadruples, file names NUL-terminated): the runtime's form."""
        rows = b"".join(struct.pack("<4I", *r) for r in self.rows)
        return rows, b"".join(f.encode("utf-8", "replace") + b"\0" for f in self.files)

    def place(self, function_address):
        """(start, size) of the loaded code section, given the loaded address of `anchor`."""
        return function_address - self.anchor_offset, self.text_size


def read(obj):
    """The LineTable of ELF object code `obj`, or None (no line table, another format)."""
    try:
        return _read(memoryview(obj))
    except (struct.error, IndexError, ValueError, UnicodeDecodeError):
        return None             # a malformed table is no table: faults then name no line


def _read(data):
    if bytes(data[:4]) != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_at = sections[shstrndx][4]

    def name(sec):
        start = names_at + sec[0]
        return bytes(data[start:bytes(data[start:start + 256]).index(b"\0") + start]).decode()

    by_name = {name(s): (i, s) for i, s in enumerate(sections)}
    if ".debug_line" not in by_name:
        return None
    line_index, line = by_name[".debug_line"]
    symbols = _symbols(data, sections)
    anchor = next(((n, v, shndx) for n, v, kind, bind, shndx in symbols
                   if kind == _STT_FUNC and bind == _STB_GLOBAL and 0 < shndx < len(sections)
                   and sections[shndx][2] & _SHF_EXECINSTR), None)
    if anchor is None:
        return None
    text_index = anchor[2]
    text = sections[text_index]
    addresses = {}               # offset in .debug_line -> (section index, value) it relocates to
    for s in sections:
        if s[1] == _SHT_RELA and s[7] == line_index:
            for k in range(s[5] // 24):
                r_offset, r_info, r_addend = struct.unpack_from("<QQq", data, s[4] + 24 * k)
                _, value, _, _, shndx = symbols[r_info >> 32]
                addresses[r_offset] = (shndx, value + r_addend)
    section = data[line[4]:line[4] + line[5]]
    rows, files = [], []
    at = 0
    while at < len(section):
        at = _unit(section, at, addresses, text_index, rows, files)
    rows.sort(key=lambda r: r[0])            # (stable: of rows at one address, the last holds)
    return LineTable(rows, files, anchor[0], anchor[1], text[5])


def _symbols(data, sections):
    """[(name, value, type, binding, section index)] of the symbol table, in its order."""
    tab = next((s for s in sections if s[1] == _SHT_SYMTAB), None)
    if tab is None:
        return []
    strings = sections[tab[6]][4]
    out = []
    for k in range(tab[5] // 24):
        st_name, st_info, _, st_shndx, st_value, _ = struct.unpack_from("<IBBHQQ", data, tab[4] + 24 * k)
        end = strings + st_name
        while data[end]:
            end += 1
        out.append((bytes(data[strings + st_name:end]).decode("utf-8", "replace"), st_value,
                    st_info & 15, st_info >> 4, st_shndx))
    return out


def _leb(d, at, signed=False):
    """(value, offset after it) of the LEB128 number at `at`."""
    value = shift = 0
    while True:
        b = d[at]
        at += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return (value - (1 << shift) if signed and b & 0x40 else value), at


def _uleb(d, at):
    return _leb(d, at)


def _cstring(d, at):
    end = at
    while d[end]:
        end += 1
    return bytes(d[at:end]).decode("utf-8", "replace"), end + 1


def _unit(d, at, addresses, text_index, rows, files):
    """Runs one line-number program (a unit's) from offset `at`; appends the code section's rows (file
    indices into the shared `files`). Returns the offset after it."""
    length, = struct.unpack_from("<I", d, at)
    if length == 0xFFFFFFFF:
        raise ValueError("64-bit DWARF")
    end = at + 4 + length
    version, header_length = struct.unpack_from("<HI", d, at + 4)
    if not 2 <= version <= 4:
        raise ValueError("DWARF line table version %d" % version)
    p = at + 10
    program = p + header_length
    min_length = d[p]
    p += 2 if version >= 4 else 1            # (maximum operations per instruction: VLIW only)
    line_base, line_range, opcode_base = struct.unpack_from("<b", d, p + 1)[0], d[p + 2], d[p + 3]
    lengths = [0] + list(d[p + 4:p + 4 + opcode_base - 1])
    p += 4 + opcode_base - 1
    directories = [""]
    while d[p]:
        s, p = _cstring(d, p)
        directories.append(s)
    p += 1
    first_file = len(files)
    files.append("?")                        # index 0 of a version-4 unit: none
    while d[p]:
        s, p = _cstring(d, p)
        directory, p = _uleb(d, p)
        _, p = _uleb(d, p)
        _, p = _uleb(d, p)
        base = directories[directory] if directory < len(directories) else ""
        files.append(s if not base or s.startswith("/") else base + "/" + s)
    p = program

    address, file, line, column, in_text = 0, 1, 1, 0, False

    def row(line_now):
        if in_text:
            rows.append((address, line_now, column, first_file + file))

    while p < end:
        op = d[p]
        p += 1
        if op >= opcode_base:                # special opcode: advance both, append a row
            adjusted = op - opcode_base
            address += (adjusted // line_range) * min_length
            line += line_base + adjusted % line_range
            row(line)
        elif op == 0:                        # extended
            size, p = _uleb(d, p)
            sub, operands = d[p], p + 1
            p += size
            if sub == 1:                     # end_sequence: nothing holds from here on
                if in_text:
                    rows.append((address, 0, 0, END))
                address, file, line, column, in_text = 0, 1, 1, 0, False
            elif sub == 2:                   # set_address: where the sequence's code is
                shndx, value = addresses.get(operands, (None, None))
                if shndx is None:
                    value, = struct.unpack_from("<Q", d, operands)
                    shndx = text_index if not addresses else None
                address, in_text = value, shndx == text_index
        elif op == 1:                        # copy
            row(line)
        elif op == 2:                        # advance_pc
            n, p = _uleb(d, p)
            address += n * min_length
        elif op == 3:                        # advance_line
            n, p = _leb(d, p, signed=True)
            line += n
        elif op == 4:                        # set_file
            file, p = _uleb(d, p)
        elif op == 5:                        # set_column
            column, p = _uleb(d, p)
        elif op == 8:                        # const_add_pc
            address += ((255 - opcode_base) // line_range) * min_length
        elif op == 9:                        # fixed_advance_pc
            n, = struct.unpack_from("<H", d, p)
            p += 2
            address += n
        else:                                # negate_stmt, basic_block, prologue/epilogue, isa, ...
            for _ in range(lengths[op] if op < len(lengths) else 0):
                _, p = _uleb(d, p)
    return end
