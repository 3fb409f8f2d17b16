"""Our small type system (independent of libclang and of LLVM)."""
from llvmlite import ir


class Type:
    kind = "?"
    is_scalar = is_vector = is_pointer = is_array = is_struct = is_void = False
    is_int = is_float = is_bool = False

    def __repr__(self):
        return self.name

    def __eq__(self, other):
        return isinstance(other, Type) and self.key == other.key

    def __hash__(self):
        return hash(self.key)


class Void(Type):
    is_void = True
    name = "void"
    key = ("void",)
    size = 0
    align = 1

    def llvm(self):
        return ir.VoidType()


class Scalar(Type):
    """bool, char..ulong, half, float, double."""
    is_scalar = True

    def __init__(self, name, bits, signed, is_float=False, is_bool=False):
        self.name, self.bits, self.signed = name, bits, signed
        self.is_float, self.is_bool = is_float, is_bool
        self.is_int = not is_float
        self.size = self.align = max(1, bits // 8)
        self.key = ("s", name)
        if is_float:
            self._ll = {16: ir.HalfType(), 32: ir.FloatType(), 64: ir.DoubleType()}[bits]
        else:
            self._ll = ir.IntType(bits)

    def llvm(self):
        return self._ll

    @property
    def elem(self):
        return self

    count = 1


BOOL = Scalar("bool", 8, False, is_bool=True)
CHAR = Scalar("char", 8, True)
UCHAR = Scalar("uchar", 8, False)
SHORT = Scalar("short", 16, True)
USHORT = Scalar("ushort", 16, False)
INT = Scalar("int", 32, True)
UINT = Scalar("uint", 32, False)
LONG = Scalar("long", 64, True)
ULONG = Scalar("ulong", 64, False)
HALF = Scalar("half", 16, True, is_float=True)
FLOAT = Scalar("float", 32, True, is_float=True)
DOUBLE = Scalar("double", 64, True, is_float=True)
VOID = Void()
# sampler_t is its CLK_* bits (kernels/pyplat_opencl.h): clang lets a sampler only be initialised
# from an integer constant, copied and passed, so a 32-bit integer is all of it (no image
# function reads it yet); kernel metadata tells it apart by identity (metadata.py)
SAMPLER = Scalar("sampler_t", 32, False)

INT_OF_BITS = {8: CHAR, 16: SHORT, 32: INT, 64: LONG}
UINT_OF_BITS = {8: UCHAR, 16: USHORT, 32: UINT, 64: ULONG}


class Vector(Type):
    is_vector = True

    def __init__(self, elem, count):
        self.elem, self.count = elem, count
        self.name = "%s%d" % (elem.name, count)
        n = 4 if count == 3 else count
        self.size = self.align = elem.size * n
        self.key = ("v", elem.name, count)
        self.is_int, self.is_float = elem.is_int, elem.is_float
        self._ll = ir.VectorType(elem.llvm(), count)

    def llvm(self):
        return self._ll


_vec_cache = {}


def vector(elem, count):
    if count == 1:
        return elem
    k = (elem.name, count)
    v = _vec_cache.get(k)
    if v is None:
        v = _vec_cache[k] = Vector(elem, count)
    return v


PTR_LL = ir.PointerType()


class Pointer(Type):
    is_pointer = True
    size = align = 8

    def __init__(self, pointee, addrspace="private", const=False):
        self.pointee, self.addrspace, self.const = pointee, addrspace, const
        self.name = "%s*" % pointee.name
        self.key = ("p", pointee.key, addrspace)

    def llvm(self):
        return PTR_LL


class Array(Type):
    is_array = True

    def __init__(self, elem, count):
        self.elem, self.count = elem, count
        self.name = "%s[%d]" % (elem.name, count)
        self.size = elem.size * count if elem.size else 0
        self.align = elem.align
        self.key = ("a", elem.key, count)

    def llvm(self):
        return ir.ArrayType(mem_llvm(self.elem), self.count)


class Struct(Type):
    """Struct/union with the layout clang computed (host-matching)."""
    is_struct = True

    def __init__(self, name, size, align, fields, union=False):
        self.name, self.size, self.align = name, size, align
        self.fields = fields          # dict name -> (byte offset, Type)
        self.union = union
        self.key = ("r", name, size)

    def llvm(self):
        return ir.ArrayType(ir.IntType(8), self.size)


def mem_llvm(t):
    """LLVM type used for t in memory (allocas, arrays, globals)."""
    return t.llvm()


def int_like(t):
    """Result type of a comparison of t: int for scalars, signed ints of same width for vectors."""
    if t.is_vector:
        return vector(INT_OF_BITS[t.elem.bits if t.elem.bits >= 8 else 8], t.count)
    return INT


def element(t):
    return t.elem if t.is_vector else t
