# What the floor link is made of, read at start-up (startup.stage_link) when
# the board file has a floor section, then forgotten with start-up: a table
# without a floor link never loads this code, nor the link's.


def made(board, journal_dir, secrets, say):
    """A list for link.outbox.made (its layout there), the secrets read now;
    None, said in one line, when they cannot be read (the table plays on
    without a link, and keeps the journal for the floor)."""
    fl = board.floor
    try:
        tls = password = wifi = None
        if fl["tls"]:
            tls = (_secret(secrets, "ca.der"), _secret(secrets, "cert.der"),
                   _secret(secrets, "key.der"))
        else:
            password = _secret(secrets, "password").strip()
        if fl["wifi"] is not None:
            wifi = _secret(secrets, "wifi").strip()
    except (OSError, ValueError) as e:
        say("sicbo: floor link not started: %s %s" % (type(e).__name__, e))
        return None
    return [0, 0, fl, tls, password, wifi, _code_hash(), journal_dir + "/acked"]


def _secret(folder, name):
    with open(folder + "/" + name, "rb") as f:
        return f.read()


def _code_hash():
    """The running code's identity (the first 16 hex digits of its sha256):
    the frozen image's, or the deployed files' as sicbo deploy wrote it."""
    try:
        import frozen_id  # type: ignore[import-not-found]  # in frozen firmware only

        return frozen_id.CODE_SHA256[:16]
    except ImportError:
        pass
    try:
        import json

        with open("/manifest.json") as f:
            return json.load(f).get("code_sha256", "")[:16]
    except (OSError, ValueError, AttributeError):
        return ""
