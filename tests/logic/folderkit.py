# Test folders and the journal records in them, for the portable tests.
# Light on purpose: it imports nothing of the firmware at load, so a test
# that needs only a folder does not load the controller's kit (appkit parses
# the table files when it loads), which a board's heap beside the firmware
# has no room for (sicbo test --on).
import os

_TAG = []
_folders = [0]


def process_tag():
    """A tag of this test process for its /tmp folders, so that runs at the
    same time (another checkout, the mutation driver) never share one
    (MicroPython has no os.getpid: a random tag, made once)."""
    if not _TAG:
        if hasattr(os, "getpid"):
            _TAG.append("%d" % os.getpid())
        else:
            from binascii import hexlify

            _TAG.append(hexlify(os.urandom(4)).decode())
    return _TAG[0]


def _emptied(path):
    """path, made or emptied (a folder left by an earlier run of this tag)."""
    try:
        os.mkdir(path)
    except OSError:
        for name in os.listdir(path):
            os.remove(path + "/" + name)
    return path


def tmpdir(name):
    """A fresh, empty folder under /tmp for this test (no tempfile, no os.path
    on MicroPython)."""
    return _emptied("/tmp/sicbo-test-%s-%s" % (process_tag(), name))


def rmdir(path):
    for f in os.listdir(path):
        os.remove(path + "/" + f)
    os.rmdir(path)


def fresh_folder():
    """A new, empty folder under /tmp for a table's files and journal."""
    _folders[0] += 1
    return _emptied("/tmp/sicbo-app-test-%s-%d" % (process_tag(), _folders[0]))


def journal_records(folder):
    """Every record of the journal segments in folder, oldest first."""
    from sicbo import journal

    out = []
    for name in sorted(n for n in os.listdir(folder) if n.endswith(".log")):
        with open(folder + "/" + name, "rb") as f:
            out.extend(journal.records(f.read()))
    return out
