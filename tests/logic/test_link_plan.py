# What the floor link is made of (device/link/plan.py), read at start-up: the
# broker's secrets from the secrets folder (TLS material or a password, the
# Wi-Fi's password), the running code's identity and the cursor's file; a
# secret that cannot be read leaves the table without a link, said in one
# line. Portable.
import os
import sys

from link import plan

DIR = "/tmp/sicbo-test-plan"


def _secrets(name, files):
    for d in (DIR, DIR + "/" + name):
        try:
            os.mkdir(d)
        except OSError:
            pass
    d = DIR + "/" + name
    for f in os.listdir(d):
        os.remove(d + "/" + f)
    for f in files:
        with open(d + "/" + f, "wb") as out:
            out.write(files[f])
    return d


class _Board:
    def __init__(self, tls=False, wifi=None):
        self.floor = {"site": "S1", "table": "T01", "broker": "10.0.0.5",
                      "port": 8883 if tls else 1883, "tls": tls, "server_name": None,
                      "keepalive_s": 30, "wifi": wifi}


def test_a_plain_link_takes_its_password_and_the_wifi_s_stripped():
    said = []
    d = _secrets("plain", {"password": b"s3cret\n", "wifi": b" wifi-pass \r\n"})
    p = plan.made(_Board(wifi="casino-floor"), "/j", d, said.append)
    assert said == []
    assert p[2]["broker"] == "10.0.0.5" and p[3] is None
    assert (p[4], p[5]) == (b"s3cret", b"wifi-pass")
    assert p[7] == "/j/acked"
    assert isinstance(p[6], str)


def test_a_tls_link_takes_its_three_files_and_no_password():
    d = _secrets("tls", {"ca.der": b"CA", "cert.der": b"CERT", "key.der": b"KEY",
                         "password": b"unused"})
    p = plan.made(_Board(tls=True), "/j", d, print)
    assert p[3] == (b"CA", b"CERT", b"KEY") and p[4] is None and p[5] is None


def test_a_missing_secret_leaves_the_table_without_a_link_said_once():
    for board, files in ((_Board(), {}),
                         (_Board(tls=True), {"ca.der": b"CA", "cert.der": b"C"}),
                         (_Board(wifi="casino-floor"), {"password": b"x"})):
        said = []
        d = _secrets("missing", files)
        assert plan.made(board, "/j", d, said.append) is None
        assert len(said) == 1 and said[0].startswith("sicbo: floor link not started: "), said


def test_the_code_s_identity_is_the_frozen_image_s_when_there_is_one():
    class _Frozen:
        CODE_SHA256 = "0123456789abcdef" + "f" * 48

    sys.modules["frozen_id"] = _Frozen
    try:
        d = _secrets("frozen", {"password": b"x"})
        assert plan.made(_Board(), "/j", d, print)[6] == "0123456789abcdef"
    finally:
        del sys.modules["frozen_id"]
