"""Exceptions raised for failed tkc calls."""

STATUS_NAMES = ("OK", "EINVAL", "ESHAPE", "EDTYPE", "ENOMEM", "EDEVICE", "ECOMPILE", "EUNSUPPORTED", "ERUNTIME", "EINTERNAL")


class TkcError(RuntimeError):
    """A failed tkc call: .status is the tkc_status name ("ESHAPE", ...), .message is tkc_last_error()."""

    def __init__(self, status, message):
        super().__init__("%s: %s" % (status, message))
        self.status = status
        self.message = message


class TkcShapeError(TkcError, ValueError):
    """TKC_ESHAPE: shapes that do not fit together (also a ValueError, as numpy raises for shapes)."""


class TkcDTypeError(TkcError, TypeError):
    """TKC_EDTYPE: a dtype the operation does not accept (also a TypeError)."""


_CLASSES = {"ESHAPE": TkcShapeError, "EDTYPE": TkcDTypeError}


def make_error(status, message):
    """The exception for a status (a name or a tkc_status number) and message."""
    if isinstance(status, int):
        status = STATUS_NAMES[status] if 0 <= status < len(STATUS_NAMES) else "E%d" % status
    return _CLASSES.get(status, TkcError)(status, message)
