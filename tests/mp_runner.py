# Runs the portable logic tests on a MicroPython VM (the unix port here, or a
# board through `sicbo test --on DEV`): every test_* function of every
# tests/logic/test_*.py, plain asserts, no fixtures. Prints one line per
# failure with its traceback, then "N passed, N failed" alone on the last
# line, and exits 1 if anything failed.
#
#   micropython -X heapsize=110k tests/mp_runner.py tests/logic [test_x.py ...]
import gc
import os
import sys


def _here(path):
    i = path.rfind("/")
    return path[:i] if i >= 0 else "."


def run(folder, only):
    root = _here(_here(folder)) if folder.endswith("logic") else "."
    # SICBO_MPY_ROOT: the same trees compiled by mpy-cross, as the board runs
    # them (host_tools.mprun makes it); otherwise the sources are compiled here.
    mpy = os.getenv("SICBO_MPY_ROOT") if hasattr(os, "getenv") else None
    if mpy:
        paths = [mpy + "/device", mpy + "/sim", mpy + "/tests/logic"]
    else:
        paths = [root + "/device", root + "/sim", folder]
    import machine  # the unix port's own, or the sim frozen into the ESP32-faithful VM

    if hasattr(machine, "sim_reset"):
        paths.pop(1)  # frozen: sim/ files would only shadow it
    else:
        sys.modules.pop("machine", None)
    del machine
    try:
        import frozen_id  # noqa: F401  the firmware frozen into this VM, as in production

        paths.pop(0)  # device/ files would shadow the frozen firmware
    except ImportError:
        pass
    for p in paths:
        if p not in sys.path:
            sys.path.insert(0, p)
    names = only or sorted(n for n in os.listdir(folder)
                           if n.startswith("test_") and n.endswith(".py"))
    passed = failed = 0
    for name in names:
        modname = name[:-3]
        gc.collect()  # the previous file's tables are garbage now; 110k is tight
        try:
            mod = __import__(modname)
        except Exception as e:
            failed += 1
            print("FAIL %s (import)" % name)
            sys.print_exception(e)
            continue
        for attr in sorted(dir(mod)):
            if not attr.startswith("test_"):
                continue
            fn = getattr(mod, attr)
            if not callable(fn):
                continue
            gc.collect()
            try:
                fn()
                passed += 1
            except Exception as e:
                failed += 1
                print("FAIL %s::%s" % (name, attr))
                sys.print_exception(e)
        del sys.modules[modname]
    impl = sys.implementation
    print("micropython %s, heap %s bytes free after the run" % (
        ".".join(str(v) for v in impl.version[:3]), gc.mem_free()))
    print("%d passed, %d failed" % (passed, failed))
    return failed


def main(argv):
    folder = argv[1].rstrip("/") if len(argv) > 1 else "tests/logic"
    sys.exit(1 if run(folder, argv[2:]) else 0)


main(sys.argv)
