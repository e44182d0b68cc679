# mprun-heap: controller
# The floor's retained status as the controller's records drive it: the
# controller tells the link the round and its state after every append, a
# round's records (drain) and the records that only note something (a fault,
# a link outage: _note) alike, so the status goes again when the round or its
# state changes, and not because a fault was noted in the same round and
# state. The link is the real one (link.outbox.Link) with its packets kept;
# the journal records it publishes are not what is looked at here.
import linkkit
from appkit import Table
from folderkit import rmdir, tmpdir
from link.outbox import Link

from sicbo import events as E
from sicbo import records as R

STATUS = b"sicbo/S1/T01/status"


class _Floor(linkkit.made_rig(Link)):
    """The table's link, its packets kept (sent), connected at once."""

    def __init__(self, name):
        self.sent = []
        self.folder = tmpdir("cls_" + name)
        Link.__init__(self, linkkit.MemorySource(), "S1", "T01", "127.0.0.1", 1,
                      self.folder + "/cursor", ticks_ms=lambda: 0)
        self.connack(0)

    def statuses(self):
        out = [linkkit.publish_parts(pkt) for pkt in self.sent if pkt[0] >> 4 == 3]
        return len([1 for x in out if x[1] == STATUS])


def _refused_shake(t):
    # Cover off: the shake is refused, one record of the round machine's.
    seq = t.m.seq
    t.press("shake")
    assert [r.type for r in t.journal() if r.seq > seq] == [R.J_REFUSED]


def test_a_fault_noted_in_the_same_round_and_state_does_not_send_the_status_again():
    t = Table()
    t.play(1, 2, 3)
    assert t.m.round == 1 and t.state() == E.ST_IDLE
    link = _Floor("fault")
    t.ctl.link = link
    assert link.statuses() == 1  # at the connection
    _refused_shake(t)
    link.tick(1)
    assert link.statuses() == 2  # the first round and state the controller told
    t.ctl.journal_fault(E.F_TASK, 2, 9)  # a contained task fault: noted, nothing changes
    assert t.journal()[-1].type == R.J_FAULT
    link.tick(2)
    assert link.statuses() == 2, "status sent again for a fault noted in round 1, idle"
    _refused_shake(t)  # a round's record again, the same round and state
    link.tick(3)
    assert link.statuses() == 2
    t.open_round()  # the state changes: the status goes again
    link.tick(4)
    assert t.state() == E.ST_OPEN and link.statuses() == 3
    t.close()
    rmdir(link.folder)
