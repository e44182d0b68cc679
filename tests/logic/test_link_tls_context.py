# The board's TLS context for the floor link (device/link/client.py,
# tls_context; made by link/outbox.py's made() from the three DER files of
# the secrets folder): the table shows the broker its own certificate,
# signed with its own key, and checks the broker's against the site's CA.
# The ssl module here is a stand-in that keeps what it is given, with the
# signature of MicroPython's (load_cert_chain(certfile, keyfile), DER bytes),
# so that the check runs on every port, CPython included (only the 64-bit
# unix port has an ssl module, and it cannot load made-up DER). Portable.
import sys

import linkkit
from folderkit import rmdir, tmpdir
from link import client as C
from link.outbox import made

# Made-up DER: what matters is which is which.
CA = b"\x30\x82\x01\x0aCA of the site"
CERT = b"\x30\x82\x01\x0bcertificate of table T07"
KEY = b"\x30\x82\x01\x0cprivate key of table T07"


class _Context:
    def __init__(self, protocol):
        self.protocol = protocol
        self.verify_mode = None
        self.cadata = None
        self.chain = None  # (certificate, key)

    def load_verify_locations(self, cafile=None, cadata=None):
        self.cadata = cadata

    def load_cert_chain(self, certfile, keyfile):
        # MicroPython's mbedtls parses the first as an X.509 certificate and
        # the second as a private key, and refuses either in the other's place.
        if certfile == KEY or keyfile == CERT:
            raise ValueError("invalid cert" if certfile == KEY else "invalid key")
        self.chain = (certfile, keyfile)


class _Ssl:
    """The ssl module as tls_context uses it."""

    PROTOCOL_TLS_CLIENT = 16
    CERT_REQUIRED = 2

    def __init__(self):
        self.made = []

    def SSLContext(self, protocol):  # the module's name for it
        ctx = _Context(protocol)
        self.made.append(ctx)
        return ctx


def _with_ssl(fn):
    """fn() run with the stand-in as the ssl module: (its result, the stand-in)."""
    fake = _Ssl()
    saved = sys.modules.get("ssl")
    sys.modules["ssl"] = fake
    try:
        return fn(), fake
    finally:
        if saved is None:
            del sys.modules["ssl"]
        else:
            sys.modules["ssl"] = saved


def test_the_tls_context_shows_the_table_s_certificate_with_its_key():
    ctx, fake = _with_ssl(lambda: C.tls_context(CA, CERT, KEY))
    assert fake.made == [ctx]
    assert ctx.protocol == _Ssl.PROTOCOL_TLS_CLIENT
    assert ctx.chain == (CERT, KEY), ctx.chain
    # and the broker must show a certificate of the site's CA
    assert ctx.verify_mode == _Ssl.CERT_REQUIRED and ctx.cadata == CA


def test_a_tls_link_made_from_the_secrets_uses_that_context():
    floor = {"site": "S1", "table": "T07", "broker": "10.0.0.5", "port": 8883,
             "server_name": "floor.example", "keepalive_s": 30, "wifi": None}
    d = tmpdir("tls_made")
    src = linkkit.MemorySource()
    plan = [0, None, floor, (CA, CERT, KEY), None, None, "id", d + "/cursor"]
    link, fake = _with_ssl(lambda: made(src, plan))
    assert link.ssl is fake.made[0]
    assert link.ssl.chain == (CERT, KEY) and link.ssl.cadata == CA
    assert link.server_hostname == "floor.example"
    rmdir(d)
