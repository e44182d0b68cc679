# Identity and TLS on the floor link: a real mosquitto with the site's
# certificates (host_tools/certs.py), require_certificate and
# use_identity_as_username, and the ACL of docs/floor.md. The link runs
# over TLS on CPython and the 64-bit MicroPython port (DER files there); the
# 32-bit VM has no ssl and runs the same ACL on the password listener.
import subprocess

import pytest
from linkrig import SITE, Driver, Floor, site_tls, table_tls, wait_for

from brokerkit import start_broker
from host_tools import certs

L_SOCKET, L_TLS, L_CLOSED = 3, 4, 8
PASSWORDS = {"T01": "pw-T01", "T02": "pw-T02", "floor": "pw-floor"}


def _tls_broker(tmp_path, **kw):
    files, ids = site_tls(str(tmp_path / "site"))
    b = start_broker(tmp_path / "mq", tls=files, acl=certs.acl(SITE), **kw)
    return b, ids


def _floor_tls(ids):
    f = ids["floor"]
    return {"ca": f.ca_pem, "cert": f.cert_pem, "key": f.key_pem}


@pytest.mark.parametrize("which", ["cpython", "mp64"])
def test_records_over_tls_with_the_tables_certificate(tmp_path, which):
    b, ids = _tls_broker(tmp_path)
    floor = Floor(b.tls_port, tls=_floor_tls(ids))
    try:
        st = Driver(which, str(tmp_path), port=b.tls_port, count=100,
                    tls=table_tls(ids, which)).wait()
        assert floor.seqs("T01") == list(range(1, 101))
        assert st["cursor"] == 100 and st["failures"] == 0
        assert "as T01 (p2, c0" in b.log()  # its CN is its name; a persistent session
    finally:
        floor.stop()
        b.stop()


def _impostor(tmp_path, which, port, **kw):
    # Table T01's identity (certificate or password) publishing as T02.
    d = Driver(which, str(tmp_path), port=port, table="T02", count=40, ack_wait_ms=500,
               timeout_ms=4000, **kw)
    return d.wait(60)


@pytest.mark.parametrize("which", ["cpython", "mp64"])
def test_a_table_cannot_publish_under_another_id_and_puback_is_no_proof(tmp_path, which):
    b, ids = _tls_broker(tmp_path)
    floor = Floor(b.tls_port, tls=_floor_tls(ids))
    try:
        st = _impostor(tmp_path, which, b.tls_port, tls=table_tls(ids, which, cn="T01"))
        # mosquitto PUBACKed every publish (nothing stays in flight) and
        # dropped them: the floor never saw one, nothing was acknowledged,
        # the cursor did not move, and the link kept sending again.
        assert st["published"] >= 3 and st["in_flight"] == 0
        assert st["cursor"] == 0 and st["gobacks"] >= 2
        assert not floor.journal_messages("T02") and not floor.status("T02")
        assert not [m for m in floor.messages if "/T02/" in m[0]]
        # the same identity under its own id goes through
        st = Driver(which, str(tmp_path / "own"), port=b.tls_port, table="T01", count=40,
                    tls=table_tls(ids, which, cn="T01")).wait()
        assert st["cursor"] == 40 and floor.seqs("T01") == list(range(1, 41))
    finally:
        floor.stop()
        b.stop()


def test_on_the_32_bit_vm_the_same_acl_holds_on_the_password_listener(tmp_path):
    files, ids = site_tls(str(tmp_path / "site"))
    b = start_broker(tmp_path / "mq", acl=certs.acl(SITE), passwords=PASSWORDS,
                     plain_acl=True)
    floor = Floor(b.port, user="floor", password=PASSWORDS["floor"])
    try:
        # T01's password, publishing as T02 (the username is the table id the
        # link is given: a wrong password is refused, CONNACK 5).
        st = Driver("vm32", str(tmp_path), port=b.port, table="T02", count=20, ack_wait_ms=500,
                    timeout_ms=3000, password=PASSWORDS["T01"]).wait(60)
        assert st["cursor"] == 0 and st["published"] == 0 and st["failures"] >= 1
        st = Driver("vm32", str(tmp_path / "own"), port=b.port, table="T01", count=40,
                    password=PASSWORDS["T01"]).wait(60)
        assert st["cursor"] == 40 and floor.seqs("T01") == list(range(1, 41))
        assert not [m for m in floor.messages if "/T02/" in m[0]]
    finally:
        floor.stop()
        b.stop()


def _refused(tmp_path, which, port, tls):
    d = Driver(which, str(tmp_path), port=port, count=5, timeout_ms=3000, tls=tls)
    st = d.wait(60)
    assert not d.kinds("up") and st["cursor"] == 0 and st["published"] == 0
    return d.kinds("down")


@pytest.mark.parametrize("which", ["cpython", "mp64"])
def test_a_broker_signed_by_another_ca_is_refused(tmp_path, which):
    b, ids = _tls_broker(tmp_path)
    try:
        other = certs.make_site(str(tmp_path / "other"), "S9", ["broker.test"])
        tls = table_tls(ids, which)
        tls["ca"] = other.ca_pem if which == "cpython" else other.ca_der
        down = _refused(tmp_path, which, b.tls_port, tls)
        assert len(down) == 1 and down[0]["code"] == L_TLS
    finally:
        b.stop()


@pytest.mark.parametrize("which", ["cpython", "mp64"])
def test_a_broker_under_another_name_is_refused(tmp_path, which):
    b, ids = _tls_broker(tmp_path)
    try:
        down = _refused(tmp_path, which, b.tls_port,
                        table_tls(ids, which, hostname="other.test"))
        assert len(down) == 1 and down[0]["code"] == L_TLS
    finally:
        b.stop()


@pytest.mark.parametrize("which", ["cpython", "mp64", "vm32"])
def test_a_plain_tcp_client_is_refused_by_the_tls_listener(tmp_path, which):
    b, _ids = _tls_broker(tmp_path)
    try:
        down = _refused(tmp_path, which, b.tls_port, None)
        assert len(down) == 1 and down[0]["code"] in (L_SOCKET, L_CLOSED)
        r = subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(b.tls_port), "-t",
                            "sicbo/S1/T01/journal", "-m", "x", "-q", "1"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode != 0
    finally:
        b.stop()


def test_a_client_without_a_certificate_is_refused(tmp_path):
    b, ids = _tls_broker(tmp_path)
    try:
        c = ids["T01"]
        r = subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(b.tls_port),
                            "--cafile", c.ca_pem, "-t", "sicbo/S1/T01/journal", "-m", "x",
                            "-q", "1"], capture_output=True, text=True, timeout=60)
        assert r.returncode != 0
        wait_for(lambda: "certificate" in b.log().lower() or "ssl" in b.log().lower(), 30,
                 "the broker to log the refusal")
    finally:
        b.stop()
