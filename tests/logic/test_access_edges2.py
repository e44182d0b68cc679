# mprun-heap: controller
# A record written from outside the running table (access.record: diag,
# deploy, verify) on a table that was never provisioned: it goes into the
# journal unsigned, and no MAC chain code is loaded for it (chainfile is
# loaded only on a provisioned board or for a provisioning waiting to be
# taken: the REPL's heap keeps none of it otherwise).
import sys

import access
from appkit import Table, journal_records

from sicbo import events as E
from sicbo import records as R


def test_a_record_on_a_table_without_a_chain_loads_no_chain_code():
    t = Table()
    t.play(1, 2, 3)
    t.close()
    before = journal_records(t.folder)[-1].seq
    saved = sys.modules.pop("chainfile", None)
    try:
        access.record(R.J_DIAG, bytes((E.D_SENSORS, 0, 0, 0, 0, 0, 0, 0)), t.folder)
        access.close()
        assert "chainfile" not in sys.modules
    finally:
        if saved is not None:
            sys.modules["chainfile"] = saved
    recs = [r for r in journal_records(t.folder) if r.seq > before]
    assert [(r.type, r.p(0)) for r in recs] == [(R.J_DIAG, E.D_SENSORS)], recs
    assert recs[0].mac is None  # not provisioned: not signed
