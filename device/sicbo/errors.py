# The errors the rules engine raises. Every refusal names what was wrong, so
# that a technician or compliance officer can act on the one line they see.


class ConfigError(ValueError):
    """A table or board configuration that must not be used. `field` names
    the offending field (dotted path), the message says what is allowed."""

    def __init__(self, field, message):
        super().__init__("%s: %s" % (field, message))
        self.field = field
        self.message = message


class InputError(ValueError):
    """Bad input at settlement time (dice, wager): nothing was settled."""
