# memory.forget: start-up and diag drop the modules they no longer need, so
# that the board's heap gets their code back. On MicroPython a module forgotten
# is gone from sys.modules and from its package; CPython keeps its modules
# (a re-import there would make new classes).
import sys

import memory


def test_a_forgotten_module_is_gone_from_its_package_too():
    import sicbo
    import sicbo.dates  # noqa: F401 - loaded to be forgotten

    memory.forget(("sicbo.dates", "sicbo.no_such_module"))
    if sys.implementation.name == "micropython":
        # A package attribute left behind would keep the code alive.
        assert "sicbo.dates" not in sys.modules and not hasattr(sicbo, "dates")
    else:
        assert sys.modules["sicbo.dates"] is sicbo.dates
    import sicbo.dates  # loads again when needed

    assert sicbo.dates.days_from_civil(1970, 1, 1) == 0
