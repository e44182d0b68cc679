# A site's first setup as `sicbo floor certs` and `sicbo floor broker-config`
# make it: the site CA and every client's certificate, the broker's own
# configuration and ACL; the floor service and tables on it, over TLS (each
# table by its certificate) and on the password listener.
import subprocess
import sys

from brokerkit import need_mosquitto
from floorkit import SITE, FloorProc, assert_every_record_once, wait_for
from host_tools import REPO, certs
from host_tools.broker import Broker, TlsFiles, _passwd
from host_tools.floor import site
from host_tools.floor.simtables import SimTables, cert_auth, password_auth

IDS = ["T1", "T2", "T3"]


def _sicbo(*args):
    r = subprocess.run([sys.executable, "-m", "host_tools", "floor", *args],
                       capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def _site(tmp_path):
    folder = str(tmp_path / "site")
    args = ["certs", "--out", folder, "--site", SITE, "--broker-host", "127.0.0.1",
            "--broker-host", "localhost", "--client", "floor"]
    for t in IDS:
        args += ["--client", t]
    _sicbo(*args)
    return folder


class SiteBroker(Broker):
    """mosquitto run on the configuration `sicbo floor broker-config` writes
    (on the free ports Broker picks)."""

    def __init__(self, folder, files, pwfile):
        Broker.__init__(self, folder, tls=TlsFiles(files.ca_pem, files.broker_pem,
                                                   files.broker_key))
        self.files = files
        self.pwfile = pwfile

    def _config(self):
        _sicbo("broker-config", "--site", SITE, "--out", self.folder, "--cafile",
               self.files.ca_pem, "--cert", self.files.broker_pem, "--key",
               self.files.broker_key, "--tls-port", str(self.tls_port), "--plain-port",
               str(self.port), "--password-file", self.pwfile, "--bind", "127.0.0.1",
               "--user", "root")
        with open(self.folder + "/mosquitto.conf") as f:
            return f.read()


def test_a_site_set_up_by_the_cli_serves_tables_over_tls_and_with_passwords(tmp_path):
    need_mosquitto()
    files = certs.SiteFiles(_site(tmp_path))
    pwfile = str(tmp_path / "passwords")
    passwords = {"T3": "pw-T3"}
    with open(pwfile, "w") as f:
        f.write("T3:x\n")
    subprocess.run([_passwd(), "-b", pwfile, "T3", "pw-T3"], check=True, timeout=60)
    b = SiteBroker(str(tmp_path / "mq"), files, pwfile).start()
    with open(str(tmp_path / "mq" / "acl")) as f:
        assert f.read() == site.acl_text(SITE)
    fc = certs.ClientFiles(files.folder, "floor")
    floor = FloorProc(tmp_path, b.tls_port, tls=(fc.ca_pem, fc.cert_pem, fc.key_pem)).start()
    tls_tables = SimTables("127.0.0.1", b.tls_port, SITE, ["T1", "T2"],
                           auth=cert_auth(files.folder)).start()
    plain_table = SimTables("127.0.0.1", b.port, SITE, ["T3"],
                            auth=password_auth(passwords)).start()
    try:
        for sim in (tls_tables, plain_table):
            sim.play(4)
        for sim in (tls_tables, plain_table):
            wait_for(sim.all_acked, "every table acknowledged", alive=floor.dead)
        assert_every_record_once(floor.db, tls_tables, plain_table)
    finally:
        tls_tables.stop()
        plain_table.stop()
        floor.stop()
        b.stop()


def test_broker_config_refuses_what_cannot_work(tmp_path):
    r = subprocess.run([sys.executable, "-m", "host_tools", "floor", "broker-config", "--site",
                        SITE, "--out", str(tmp_path)], capture_output=True, text=True, cwd=REPO,
                       timeout=120)
    assert r.returncode == 2 and "no listener" in r.stderr and r.stderr.count("\n") == 1
    r = subprocess.run([sys.executable, "-m", "host_tools", "floor", "broker-config", "--site",
                        "bad site", "--out", str(tmp_path), "--plain-port", "1883",
                        "--password-file", "x"], capture_output=True, text=True, cwd=REPO,
                       timeout=120)
    assert r.returncode == 2 and "site" in r.stderr


def test_the_service_refuses_bad_options_in_one_line(tmp_path):
    for args, says in ((["--db", "x.db", "--site", SITE], "--broker is needed"),
                       (["--broker", "nohost", "--db", "x.db", "--site", SITE],
                        "is not HOST:PORT"),
                       (["--broker", "127.0.0.1:1883", "--db", "x.db", "--site", "bad site"],
                        "site"),
                       (["--broker", "127.0.0.1:1883", "--db", "x.db", "--site", SITE,
                         "--cert", "c.pem"], "TLS needs"),
                       (["--broker", "127.0.0.1:1883", "--db", str(tmp_path), "--site", SITE],
                        "cannot open")):
        r = subprocess.run([sys.executable, "-m", "host_tools", "floor", *args],
                           capture_output=True, text=True, cwd=str(tmp_path), timeout=120)
        assert r.returncode == 2 and says in r.stderr and r.stderr.count("\n") == 1, (
            args, r.stderr)
