"""The floor link's secrets: `sicbo deploy --secrets DIR` checks the folder
against the board file's floor section before the board is touched, writes
the files where the firmware's start-up reads them (/secrets/), never lists
them in the manifest or prints them; `sicbo diag` never prints them, nor
does the journal hold them (tests/host/floorsys.py for the site and the
table)."""

import base64
import json
import os
import shutil

import pytest
from floorsys import TABLE, WIFI_KEY, Site, Table, password_of, wait_delivered

from host_tools import deploy as dp
from host_tools.cli import main
from sicbo import board as boardmod


def _board(floor):
    with open(os.path.join(os.path.dirname(TABLE), "..", "boards", "virtual.json")) as f:
        obj = json.load(f)
    obj["floor"] = floor
    return boardmod.parse_board(obj)


TLS_FLOOR = {"site": "S1", "table": "T01", "broker": "10.0.0.1", "tls": True,
             "server_name": "broker.test", "wifi": "net"}
PLAIN_FLOOR = {"site": "S1", "table": "T01", "broker": "10.0.0.1", "tls": False}


@pytest.fixture(scope="module")
def site_certs(tmp_path_factory):
    from host_tools import certs

    folder = str(tmp_path_factory.mktemp("site"))
    certs.make_site(folder, "S1", ["broker.test"])
    ids = {cn: certs.make_client(folder, cn) for cn in ("T01", "T02")}
    other = str(tmp_path_factory.mktemp("other-site"))
    certs.make_site(other, "S2", ["broker.test"])
    ids["other"] = certs.make_client(other, "T01")
    return ids


def _folder(tmp_path, files):
    d = tmp_path / "secrets"
    if d.exists():
        shutil.rmtree(d)
    d.mkdir()
    for name, data in files.items():
        (d / name).write_bytes(data if isinstance(data, bytes) else data.encode())
    return str(d)


def _tls_files(c, **over):
    files = {"ca.der": open(c.ca_der, "rb").read(), "cert.der": open(c.cert_der, "rb").read(),
             "key.der": open(c.key_der, "rb").read(), "wifi": "the-wifi-key\n"}
    files.update(over)
    return {k: v for k, v in files.items() if v is not None}


def test_a_matching_folder_is_taken(tmp_path, site_certs):
    got = dp.check_secrets(_folder(tmp_path, _tls_files(site_certs["T01"])), _board(TLS_FLOOR))
    assert sorted(got) == ["ca.der", "cert.der", "key.der", "wifi"]
    plain = dict(PLAIN_FLOOR)
    got = dp.check_secrets(_folder(tmp_path, {"password": "pw\n"}), _board(plain))
    assert got == {"password": b"pw\n"}


@pytest.mark.parametrize("case, files, floor, said", [
    ("no key", {"key.der": None}, TLS_FLOOR, "key.der missing: the board file's floor link "
                                             "uses TLS"),
    ("no wifi", {"wifi": None}, TLS_FLOOR, "wifi missing"),
    ("a password beside TLS", {"password": "pw"}, TLS_FLOOR, "password does not belong"),
    ("wifi without a network", {}, dict(TLS_FLOOR, wifi=None), "wifi does not belong: the "
                                                               "board file's floor section "
                                                               "names no Wi-Fi network"),
    ("an unknown file", {"notes.txt": "x"}, TLS_FLOOR, "notes.txt is not a secret"),
    ("PEM", {"key.der": b"-----BEGIN PRIVATE KEY-----\nAAAA\n"}, TLS_FLOOR, "key.der is PEM"),
    ("not a certificate", {"cert.der": b"\x30\x03\x02\x01\x01"}, TLS_FLOOR,
     "cert.der is not a DER certificate"),
    ("a wifi key of two lines", {"wifi": "a\nb\n"}, TLS_FLOOR, "wifi must be one line"),
    ("certificates on a password listener", {}, PLAIN_FLOOR, "ca.der does not belong"),
])
def test_a_folder_that_does_not_match_the_board_file_is_refused(tmp_path, site_certs, case,
                                                                 files, floor, said):
    folder = _folder(tmp_path, _tls_files(site_certs["T01"], **files))
    with pytest.raises(dp.DeployError) as e:
        dp.check_secrets(folder, _board(floor))
    assert said in str(e.value), (case, str(e.value))
    assert "the-wifi-key" not in str(e.value)


def test_another_tables_certificate_another_sites_or_a_key_not_its_own_is_refused(
        tmp_path, site_certs):
    t01, t02, other = site_certs["T01"], site_certs["T02"], site_certs["other"]
    cases = [
        ({"cert.der": open(t02.cert_der, "rb").read(),
          "key.der": open(t02.key_der, "rb").read()}, "cert.der is the certificate of T02, "
                                                      "not of table T01"),
        ({"cert.der": open(other.cert_der, "rb").read(),
          "key.der": open(other.key_der, "rb").read()}, "cert.der is not signed by ca.der"),
        ({"key.der": open(t02.key_der, "rb").read()}, "key.der is not the key of cert.der"),
    ]
    for over, said in cases:
        folder = _folder(tmp_path, _tls_files(t01, **over))
        with pytest.raises(dp.DeployError) as e:
            dp.check_secrets(folder, _board(TLS_FLOOR))
        assert said in str(e.value)


def test_without_a_floor_section_secrets_are_refused(tmp_path, site_certs, capsys):
    folder = _folder(tmp_path, {"password": "pw"})
    board = os.path.join(os.path.dirname(TABLE), "..", "boards", "virtual.json")
    # refused before the board is touched: the port is never opened
    code = main(["deploy", "--port", str(tmp_path / "no-such-port"), "--board", board,
                 "--table", TABLE, "--secrets", folder])
    err = capsys.readouterr().err
    assert code == 2 and "has no floor section" in err, err
    assert err.count("\n") == 1


def _secret_forms(table):
    """Every secret of the table, as the bytes and texts it could show as."""
    forms = []
    for name in sorted(os.listdir(table.secrets)):
        with open(os.path.join(table.secrets, name), "rb") as f:
            data = f.read()
        for raw in {data, data.strip()}:
            forms += [raw, raw.hex().encode(), raw.hex().upper().encode(),
                      base64.b64encode(raw)]
        if name == "key.der":
            # any 12-byte stretch of the key (its private scalar, ...)
            forms += [data[i:i + 12] for i in range(0, len(data) - 12, 6)]
            forms += [data[i:i + 12].hex().encode() for i in range(0, len(data) - 12, 6)]
    return [f for f in forms if len(f) >= 8]


def _leaks(text_or_bytes, forms):
    data = text_or_bytes if isinstance(text_or_bytes, bytes) else text_or_bytes.encode()
    return [f[:16] for f in forms if f in data]


def test_deploy_writes_them_where_the_table_reads_them_and_nothing_prints_them(
        tmp_path, capsys):
    site = Site(tmp_path, ["T01"])
    table = Table(site, "T01", tmp_path / "T01")
    try:
        site.start_floor()
        vb = table.vb
        vb.start(timeout=0)
        assert vb.wait_ready(60)
        forms = _secret_forms(table)
        assert any(WIFI_KEY.encode() == f for f in forms)
        code = main(["deploy", "--port", vb.port, "--board", table.board_path, "--table", TABLE,
                     "--secrets", table.secrets])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert "secrets: ca.der, cert.der, key.der, wifi written to /secrets/" in out, out
        assert "the table runs" in out, out
        assert not _leaks(out + err, forms)
        for name in ("ca.der", "cert.der", "key.der", "wifi"):
            with open(os.path.join(vb.fs, "secrets", name), "rb") as f, \
                    open(os.path.join(table.secrets, name), "rb") as g:
                assert f.read() == g.read(), name
        with open(os.path.join(vb.fs, "manifest.json")) as f:
            manifest = f.read()
        assert "secrets" not in manifest and not _leaks(manifest, forms)
        # the table's link started with them: the floor stores its records
        wait_delivered(site, table, "the first records stored over TLS")

        # A changed Wi-Fi key on a board otherwise up to date: written, the
        # app started again, nothing else copied.
        with open(os.path.join(table.secrets, "wifi"), "w") as f:
            f.write("another-wifi-key\n")
        forms = _secret_forms(table)
        code = main(["deploy", "--port", vb.port, "--board", table.board_path, "--table", TABLE,
                     "--secrets", table.secrets])
        out, err = capsys.readouterr()
        assert code == 0 and "board up to date" in out and "secrets: " in out, out + err
        with open(os.path.join(vb.fs, "secrets", "wifi")) as f:
            assert f.read() == "another-wifi-key\n"

        # Every diag command, the journal pulled: no secret in what they say.
        pulled = tmp_path / "journal.bin"
        runs = [["status"], ["sensors"], ["meters"], ["recall", "3"], ["journal", "50"],
                ["help"], ["status", "--pull-journal", str(pulled)]]
        for args in runs:
            code = main(["diag", "--port", vb.port] + args)
            out, err = capsys.readouterr()
            assert code == 0, (args, err)
            assert not _leaks(out + err, forms), args
        assert pulled.stat().st_size > 0 and not _leaks(pulled.read_bytes(), forms)
        jdir = os.path.join(vb.fs, "journal")
        for name in os.listdir(jdir):
            with open(os.path.join(jdir, name), "rb") as f:
                assert not _leaks(f.read(), forms), name
        # nor do the floor's store or the broker's log hold any
        with open(site.db, "rb") as f:
            assert not _leaks(f.read(), forms)
        assert not _leaks(site.broker.log(), forms)

        # A deploy without --secrets leaves the board's own; a board that
        # lacks them is told which.
        os.remove(os.path.join(vb.fs, "secrets", "key.der"))
        code = main(["deploy", "--port", vb.port, "--board", table.board_path, "--table", TABLE])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert "secrets: the board has no /secrets/key.der: its floor link will not start" \
            in out, out
        assert sorted(os.listdir(os.path.join(vb.fs, "secrets"))) == ["ca.der", "cert.der",
                                                                       "wifi"]
    finally:
        table.stop()
        site.stop()


def test_a_password_secret_for_the_password_listener(tmp_path):
    folder = _folder(tmp_path, {"password": password_of("T01") + "\n", "wifi": "k\n"})
    got = dp.check_secrets(folder, _board(dict(PLAIN_FLOOR, wifi="net")))
    assert got["password"].strip() == password_of("T01").encode()
    with pytest.raises(dp.DeployError) as e:
        dp.check_secrets(_folder(tmp_path, {"password": "\n"}), _board(PLAIN_FLOOR))
    assert "password must be one line of 1 to 256 characters" in str(e.value)
