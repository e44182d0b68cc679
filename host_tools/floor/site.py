"""A site's names, topics and broker configuration (docs/floor.md).

The broker of a site's first setup (`sicbo floor broker-config`) and the
tests' brokers are given the same ACL (acl_text)."""

import os
import re

ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
FLOOR_USER = "floor"  # the floor service's username (its certificate's CN)
READER_ID = "compliance"  # the site's read-only account (its certificate's CN)


def check_id(what, value):
    """value if it is a site or table id (1 to 32 of A-Z a-z 0-9 _ -), else
    ValueError naming what."""
    if not isinstance(value, str) or not ID_RE.match(value):
        raise ValueError("%s %r is not 1 to 32 characters of A-Z a-z 0-9 _ -" % (what, value))
    return value


def check_filter(said, value):
    """A table id given to narrow a listing (a page's `table=`, a command's
    `--table `): ValueError, naming it as `said`, for anything else."""
    if not ID_RE.match(value):
        raise ValueError("%s%s is not a table id (1 to 32 of A-Z a-z 0-9 _ -)"
                         % (said, value[:40]))
    return value


# Names the site's ACL gives powers no table has (host_tools/certs.acl; its
# table patterns apply to every name, these too): never a table's id. The
# floor service (its certificate's CN, `user floor`) reads every table's
# journal and writes their acknowledgements; the read-only account
# (compliance and surveillance feeds, an auditor's own subscriber) reads
# every topic of the site and writes nothing a table or the floor takes.
RESERVED = {FLOOR_USER: "the floor service's", READER_ID: "the site's read-only account's"}


def check_table_id(what, value):
    """check_id, and never a name the ACL reserves (RESERVED)."""
    check_id(what, value)
    if value in RESERVED:
        raise ValueError("%s %r is %s name on the broker, never a table's"
                         % (what, value, RESERVED[value]))
    return value


def acl_text(site):
    """The broker's ACL for a site: the text of docs/floor.md with SITE filled
    in (one copy, host_tools/certs.py's; test_floor_ingest checks the
    document shows it)."""
    from host_tools import certs

    return certs.acl(check_id("site", site))


def journal_topic(site, table):
    return "sicbo/%s/%s/journal" % (site, table)


def status_topic(site, table):
    return "sicbo/%s/%s/status" % (site, table)


def ack_topic(site, table):
    return "sicbo/%s/%s/ack" % (site, table)


def head_topic(site, table):
    return "sicbo/%s/%s/head" % (site, table)


def parse_topic(site, topic):
    """(table id, kind) of a table's topic of this site (kind: journal,
    status, head, ack), or None when the topic is not one."""
    parts = topic.split("/")
    if len(parts) != 4 or parts[0] != "sicbo" or parts[1] != site:
        return None
    if parts[3] not in ("journal", "status", "head", "ack") or not ID_RE.match(parts[2]):
        return None
    return parts[2], parts[3]


def broker_config(folder, site, cafile=None, certfile=None, keyfile=None, tls_port=8883,
                  plain_port=None, password_file=None, bind="0.0.0.0", user=None):
    """The text of a site broker's mosquitto.conf, its ACL written beside it
    (folder/acl): a TLS listener (client certificate required, its CN the
    username, TLS 1.2) and, when plain_port is given, a plain listener with
    passwords (boards without ssl) under the same ACL. Persistence is saved
    every second (a kill -9 loses at most that) and the floor's queue holds a
    long outage of every table. user: the account mosquitto runs as (it must
    be able to read these files; as root it would otherwise drop to
    `mosquitto`)."""
    check_id("site", site)
    folder = os.path.abspath(folder)
    os.makedirs(folder, exist_ok=True)
    acl = os.path.join(folder, "acl")
    with open(acl, "w") as f:
        f.write(acl_text(site))
    lines = ["user %s" % user] if user else []
    lines += [
        "per_listener_settings true",
        "persistence true",
        "persistence_location %s/" % folder,
        "autosave_interval 1",
        "max_queued_messages 100000",
        "log_dest stderr",
        "connection_messages true",
        # Nagle's algorithm would hold a table's acknowledgement behind the
        # PUBACKs just sent until the table's delayed ACK (40 ms on Linux).
        "set_tcp_nodelay true",
    ]
    if cafile:
        lines += [
            "listener %d %s" % (tls_port, bind),
            "cafile %s" % os.path.abspath(cafile),
            "certfile %s" % os.path.abspath(certfile),
            "keyfile %s" % os.path.abspath(keyfile),
            "tls_version tlsv1.2",
            "require_certificate true",
            "use_identity_as_username true",
            "allow_anonymous false",
            "acl_file %s" % acl,
        ]
    if plain_port:
        if not password_file:
            raise ValueError("a plain listener needs a password file")
        lines += [
            "listener %d %s" % (plain_port, bind),
            "allow_anonymous false",
            "password_file %s" % os.path.abspath(password_file),
            "acl_file %s" % acl,
        ]
    return "\n".join(lines) + "\n"
