"""The error an entry point raises to return an OpenCL error code."""
from pyplat import cl


class CLError(Exception):
    """Raised anywhere under an entry point; the bridge turns it into the returned code."""

    def __init__(self, code, message=""):
        super().__init__(message or error_name(code))
        self.code = code


_NAMES = {}


def error_name(code):
    if not _NAMES:
        for name, value in vars(cl).items():
            if name.startswith(("CL_INVALID_", "CL_OUT_OF_", "CL_BUILD_", "CL_MEM_OBJECT_", "CL_DEVICE_NOT",
                                "CL_COMPILER_NOT", "CL_PROFILING_", "CL_MAP_FAILURE", "CL_MISALIGNED",
                                "CL_EXEC_STATUS", "CL_LINK", "CL_COMPILE_PROGRAM", "CL_IMAGE_",
                                "CL_KERNEL_ARG_INFO_NOT", "CL_DEVICE_PARTITION_FAILED", "CL_PLATFORM_NOT_FOUND",
                                "CL_MEM_COPY_OVERLAP")) \
                    and isinstance(value, int) and value < 0:
                _NAMES.setdefault(value, name)
    return _NAMES.get(code, f"error {code}")


def check(condition, code, message=""):
    """Raise CLError(code) unless condition holds: validation reads as the spec's list."""
    if not condition:
        raise CLError(code, message)


def raise_refusal(refusal):
    """Raise a rule's refusal, (code, reason), if there is one (the rules the native and the
    Python entries share return None or a refusal: api/native_buffer_rules.pxi,
    runtime/sched/launch_sizes.pxi)."""
    if refusal is not None:
        raise CLError(*refusal)
