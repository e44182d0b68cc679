"""A site's TLS identities for the floor link: the site CA, the broker's
server certificate, and one client certificate per table (and for the floor
service), signed by the CA.

    site = make_site(folder, "casino1", ["broker.casino1.example", "127.0.0.1"])
    table = make_client(folder, "T01")       # the CN is the MQTT username
    floor = make_client(folder, "floor")

Every certificate is written twice: PEM for mosquitto and CPython clients, DER
for the board (the MicroPython unix port's mbedtls has no PEM parser; the
ESP32's reads DER as well). Keys are ECDSA P-256 (TLS 1.2,
ECDHE-ECDSA-AES256-GCM-SHA384 on the board). Private keys are written 0600.

Files in `folder` (all paths are also returned):

    ca.crt.pem  ca.crt.der  ca.key.pem            the site CA (keep ca.key.pem off the tables)
    broker.crt.pem  broker.key.pem                the broker's (SAN: the names given)
    CN.crt.pem  CN.key.pem  CN.crt.der  CN.key.der  a client's (CN: a table id, or floor)

make_site refuses to replace an existing CA (FileExistsError) unless told:
a new CA invalidates every certificate the site has issued.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import re

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

# Site and table ids (docs/floor.md): 1 to 32 of A-Z a-z 0-9 _ -
NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
DAYS = 3650


class SiteFiles:
    """Paths of a site's CA and broker files."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.ca_pem = os.path.join(folder, "ca.crt.pem")
        self.ca_der = os.path.join(folder, "ca.crt.der")
        self.ca_key = os.path.join(folder, "ca.key.pem")
        self.broker_pem = os.path.join(folder, "broker.crt.pem")
        self.broker_key = os.path.join(folder, "broker.key.pem")


class ClientFiles:
    """Paths of one client's certificate and key (PEM and DER), and the CA's."""

    def __init__(self, folder: str, cn: str) -> None:
        self.cn = cn
        self.cert_pem = os.path.join(folder, "%s.crt.pem" % cn)
        self.key_pem = os.path.join(folder, "%s.key.pem" % cn)
        self.cert_der = os.path.join(folder, "%s.crt.der" % cn)
        self.key_der = os.path.join(folder, "%s.key.der" % cn)
        self.ca_pem = os.path.join(folder, "ca.crt.pem")
        self.ca_der = os.path.join(folder, "ca.crt.der")


def check_name(kind: str, name: str) -> str:
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise ValueError("%s must be 1 to 32 characters of A-Z a-z 0-9 _ -, got %r"
                         % (kind, name))
    return name


def _write(path: str, data: bytes, secret: bool = False) -> None:
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if secret else 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _key_der(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _name(cn: str, site: str | None = None) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, cn)]
    if site:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, site))
    return x509.Name(attrs)


def _builder(subject: x509.Name, issuer: x509.Name, public_key, days: int):
    now = datetime.datetime.now(datetime.timezone.utc)
    return (x509.CertificateBuilder()
            .subject_name(subject).issuer_name(issuer).public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=days)))


def _load_ca(folder: str) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    files = SiteFiles(folder)
    try:
        with open(files.ca_pem, "rb") as f:
            cert = x509.load_pem_x509_certificate(f.read())
        with open(files.ca_key, "rb") as f:
            key = serialization.load_pem_private_key(f.read(), password=None)
    except FileNotFoundError:
        raise FileNotFoundError("no site CA in %s (make_site first)" % folder) from None
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise ValueError("%s is not an EC key" % files.ca_key)
    return cert, key


def make_site(folder: str, site: str, broker_hostnames: list[str], days: int = DAYS,
              overwrite: bool = False) -> SiteFiles:
    """The site CA and the broker's certificate, whose subject alternative
    names are broker_hostnames (DNS names; an IP address is an IP SAN)."""
    check_name("site", site)
    if not broker_hostnames:
        raise ValueError("the broker needs at least one hostname (its certificate's SAN)")
    files = SiteFiles(folder)
    os.makedirs(folder, exist_ok=True)
    if os.path.exists(files.ca_key) and not overwrite:
        raise FileExistsError("%s holds a site CA already: a new one would invalidate every "
                              "certificate it signed" % folder)
    ca_key = _key()
    ca_name = _name("%s site CA" % site, site)
    ca = (_builder(ca_name, ca_name, ca_key.public_key(), days)
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False,
                                       key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, key_cert_sign=True, crl_sign=True,
                                       encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()),
                         critical=False)
          .sign(ca_key, hashes.SHA256()))
    _write(files.ca_key, _key_pem(ca_key), secret=True)
    _write(files.ca_pem, ca.public_bytes(serialization.Encoding.PEM))
    _write(files.ca_der, ca.public_bytes(serialization.Encoding.DER))

    sans: list[x509.GeneralName] = []
    for host in broker_hostnames:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            sans.append(x509.DNSName(host))
    key = _key()
    cert = (_builder(_name(broker_hostnames[0], site), ca.subject, key.public_key(), days)
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    _write(files.broker_key, _key_pem(key), secret=True)
    _write(files.broker_pem, cert.public_bytes(serialization.Encoding.PEM))
    return files


def make_client(folder: str, cn: str, days: int = DAYS) -> ClientFiles:
    """A client certificate signed by the site CA in folder; its CN (a table
    id, or `floor` for the floor service) is the broker's username for it."""
    check_name("client name", cn)
    ca, ca_key = _load_ca(folder)
    site_attrs = ca.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
    site = str(site_attrs[0].value) if site_attrs else None
    key = _key()
    cert = (_builder(_name(cn, site), ca.subject, key.public_key(), days)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]),
                           critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    files = ClientFiles(folder, cn)
    _write(files.key_pem, _key_pem(key), secret=True)
    _write(files.key_der, _key_der(key), secret=True)
    _write(files.cert_pem, cert.public_bytes(serialization.Encoding.PEM))
    _write(files.cert_der, cert.public_bytes(serialization.Encoding.DER))
    return files


def acl(site: str) -> str:
    """The broker's ACL for a site (docs/floor.md): a table writes only its
    own journal, status and chain head and reads only its own
    acknowledgements; the floor service (user `floor`) reads every table's
    and writes the acks; the read-only account (user `compliance`) reads
    every topic of the site."""
    from host_tools.floor.site import FLOOR_USER, READER_ID  # the names, defined once

    check_name("site", site)
    return ("# every table: its own topics only\n"
            "pattern write sicbo/{s}/%u/journal\n"
            "pattern write sicbo/{s}/%u/status\n"
            "pattern write sicbo/{s}/%u/head\n"
            "pattern read sicbo/{s}/%u/ack\n"
            "# the floor service\n"
            "user {floor}\n"
            "topic read sicbo/{s}/+/journal\n"
            "topic read sicbo/{s}/+/status\n"
            "topic read sicbo/{s}/+/head\n"
            "topic write sicbo/{s}/+/ack\n"
            "# read-only: compliance and surveillance\n"
            "user {reader}\n"
            "topic read sicbo/{s}/#\n").format(s=site, floor=FLOOR_USER, reader=READER_ID)
