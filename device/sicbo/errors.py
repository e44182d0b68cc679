# The errors the rules engine raises. Every refusal names what was wrong, so
# that a technician or compliance officer can act on the one line they see.


class ConfigError(ValueError):
    """A table or board configuration that must not be used. `field` names
    the offending field (dotted path), the message says what is allowed."""

    def __init__(self, field, message):
        super().__init__("%s: %s" % (field, message))
        self.field = field
        self.message = message


def key_name(key):
    """A file's key as a field name: quoted when it would not read as one
    (empty, spaces, control characters), so that no message names nothing."""
    if isinstance(key, str) and key:
        for ch in key:
            if ch <= " " or ch > "~":
                return repr(key)
        return key
    return repr(key)


class InputError(ValueError):
    """Bad input at settlement time (dice, wager): nothing was settled."""
