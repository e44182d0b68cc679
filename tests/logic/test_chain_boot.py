# mprun-heap: controller
# A provisioning taken at boot (resumption.stage_chain): the first key never
# stays on the board, the chain's first record is J_PROVISION under it, a
# power cut at any step of taking it leaves one chain that verifies;
# re-provisioning starts a new chain that names the old; diag.status says it.
import gc
import os

from appkit import Table, fresh_folder, reboot
from chainkit import (
    IDENT,
    KEY0,
    check_journal,
    hmac256,
    key_of,
    mac_ok,
    provision,
    provisioned_table,
    raw_records,
    u32,
)

from journal_store import KEY_NAME, PROVISION_NAME
from sicbo import chain as C
from sicbo import records as R


def _provisions(folder):
    return [(u32(r, R.OFF_SEQ), u32(r, R.HEADER + R.P_CHAIN), u32(r, R.HEADER + R.P_PREVIOUS))
            for r in raw_records(folder) if r[R.OFF_TYPE] == R.J_PROVISION]


def test_the_first_boot_takes_the_provisioning_and_signs_everything():
    f = fresh_folder()
    provision(f)
    t = Table(folder=f)
    names = os.listdir(f)
    assert PROVISION_NAME not in names and KEY_NAME in names
    t.play(1, 2, 3)
    t.close()
    recs = raw_records(f)
    assert recs[0][R.OFF_TYPE] == R.J_PROVISION and u32(recs[0], R.OFF_SEQ) == 1
    assert _provisions(f) == [(1, IDENT, 0)]
    assert check_journal(f)[-1] == t.m.seq
    # The key file holds the next number's key: not the first, nor any used.
    with open(f + "/" + KEY_NAME, "rb") as g:
        ch = C.Chain(g.read())
    assert ch.first == 1 and ch.seq == t.m.seq + 1 and bytes(ch.key) != KEY0
    t2 = reboot(t)
    t2.play(4, 5, 6)
    t2.close()
    assert check_journal(f)[-1] == t2.m.seq and len(_provisions(f)) == 1


def test_a_provisioning_after_records_without_a_chain_starts_at_the_next_number():
    f = fresh_folder()
    t = Table(folder=f)
    t.play(1, 2, 3)
    last = t.m.seq
    t.close()
    provision(f, base=last + 1)
    t = reboot(t)
    t.play(2, 2, 2)
    t.close()
    recs = raw_records(f)
    plain = [r for r in recs if not r[R.OFF_FLAGS] & R.FLAG_MAC]
    assert [u32(r, R.OFF_SEQ) for r in plain] == list(range(1, last + 1))
    prov = _provisions(f)
    assert prov == [(last + 1, IDENT, 0)]
    sealed = raw_records(f)[last:]
    assert all(r[R.OFF_FLAGS] & R.FLAG_MAC for r in sealed)
    assert all(mac_ok(r, KEY0, last + 1) for r in sealed)


def test_a_base_below_the_journal_moves_the_first_key_on():
    f = fresh_folder()
    t = Table(folder=f)
    t.play(1, 2, 3)
    last = t.m.seq
    t.close()
    provision(f, base=3)  # the host read the journal before more was written
    t = reboot(t)
    t.close()
    assert _provisions(f) == [(last + 1, IDENT, 0)]
    first = [r for r in raw_records(f) if r[R.OFF_TYPE] == R.J_PROVISION][0]
    body = len(first) - R.CRC_LEN - R.MAC_LEN
    assert hmac256(key_of(last + 1, KEY0, 3), first[:body])[:8] == first[body:body + 8]


def _ours(name):
    # The journal's files (the board and table files stay as they are).
    return name.endswith(".log") or name.startswith("chain.")


def _state(f):
    out = {}
    for name in os.listdir(f):
        if _ours(name):
            with open(f + "/" + name, "rb") as g:
                out[name] = g.read()
    return out


def _put(f, files):
    for name in os.listdir(f):
        if _ours(name):
            os.remove(f + "/" + name)
    for name in files:
        with open(f + "/" + name, "wb") as g:
            g.write(files[name])


def test_a_power_cut_at_each_step_of_taking_a_provisioning():
    # The steps: key file written from the provisioning, provisioning file
    # deleted, J_PROVISION appended, key file written again. A cut after
    # each: the next boot ends with one chain, its J_PROVISION first.
    f = fresh_folder()
    t = Table(folder=f)
    t.play(1, 2, 3)
    last = t.m.seq
    t.close()
    files = _state(f)
    seg = "j%08d.log" % (len([n for n in files if n.endswith(".log")]) + 1)  # the next boot's
    prov = C.key_file(IDENT, 0, last + 1, 0, KEY0, bytes(R.CHAIN_LEN))
    taken = prov  # the key file as first written: the chain not started
    # The J_PROVISION and the key file after it, as a boot that is not cut makes them.
    whole = dict(files)
    whole[PROVISION_NAME] = prov
    _put(f, whole)
    t = reboot(t)
    t.close()
    done = _state(f)
    steps = []
    s = dict(files)
    s[KEY_NAME] = taken
    s[PROVISION_NAME] = prov
    steps.append(s)  # the key file written, the provisioning file not yet deleted
    s = dict(files)
    s[KEY_NAME] = taken
    steps.append(s)  # deleted, J_PROVISION not yet written
    for k in (1, R.REC_LEN // 2, R.REC_LEN + R.MAC_LEN - 1):
        s = dict(files)
        s[KEY_NAME] = taken
        s[seg] = done[seg][:k]
        steps.append(s)  # J_PROVISION torn
    s = dict(files)
    s[KEY_NAME] = taken
    s[seg] = done[seg][:R.REC_LEN + R.MAC_LEN]
    steps.append(s)  # J_PROVISION flushed, the key file not yet written again
    del done, whole
    for s in steps:
        _put(f, s)
        gc.collect()
        t = reboot(t)
        t.play(3, 3, 4)
        t.close()
        seqs = check_journal_from(f, last + 1)
        p = _provisions(f)
        assert len(p) == 1 and p[0][1] == IDENT and p[0][0] == seqs[0], (p, seqs[:3])
        assert PROVISION_NAME not in os.listdir(f)


def check_journal_from(f, first):
    """check_journal over the records from number `first` on (before it: the
    records from before the chain)."""
    recs = [r for r in raw_records(f) if u32(r, R.OFF_SEQ) >= first]
    seqs = [u32(r, R.OFF_SEQ) for r in recs]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs
    for r in recs:
        assert r[R.OFF_FLAGS] & R.FLAG_MAC and mac_ok(r, KEY0, first), u32(r, R.OFF_SEQ)
    return seqs


def test_re_provisioning_starts_a_chain_that_names_the_one_it_replaces():
    t = provisioned_table(1, 2, 3)
    f = t.folder
    key2 = bytes(range(100, 132))
    provision(f, ident=0x55, base=t.m.seq + 1, key=key2)
    t = reboot(t)
    t.play(5, 5, 6)
    t.close()
    p = _provisions(f)
    assert [x[1:] for x in p] == [(IDENT, 0), (0x55, IDENT)]
    for r in raw_records(f):
        s = u32(r, R.OFF_SEQ)
        if s < p[1][0]:
            assert mac_ok(r)
        else:
            assert mac_ok(r, key2, p[1][0]) and not mac_ok(r)
    # A provisioning file of the chain already taken (a cut before its
    # deletion) is only deleted.
    provision(f, ident=0x55, base=t.m.seq + 1, key=key2)
    t = reboot(t)
    t.close()
    assert len(_provisions(f)) == 2 and PROVISION_NAME not in os.listdir(f)


def test_a_damaged_provisioning_file_is_said_and_not_taken():
    f = fresh_folder()
    with open(f + "/" + PROVISION_NAME, "wb") as g:
        g.write(b"SKC1" + bytes(40))
    t = Table(folder=f)
    t.close()
    assert any("provisioning file damaged" in line for line in t.log), t.log
    assert KEY_NAME not in os.listdir(f) and PROVISION_NAME not in os.listdir(f)
    assert not any(r[R.OFF_FLAGS] & R.FLAG_MAC for r in raw_records(f))
