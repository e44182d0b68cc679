# The bundle of a board's adapters (hw.Hardware) as start-up uses it: the
# fault path's Hardware is made before any adapter (startup.stage_hardware),
# every part None until hw.build puts its adapter in, so that a fault at any
# point stops only what exists; and putting the adapters in, at the boot's
# fullest heap, grows nothing (on MicroPython the heap is locked around it,
# and an instance's attribute table that has to grow allocates; on CPython
# heap_lock is the shim's no-op and the test checks the parts only).
import micropython

from hw import Hardware

PARTS = ("switches", "solenoid", "motor", "bell", "lamps", "uart", "watchdog")


class _Part:
    def __init__(self):
        self.stops = 0

    def stop(self):
        self.stops += 1


def test_a_new_bundle_has_every_part_none_and_takes_its_adapters_without_growing():
    hw = Hardware()
    for name in PARTS:
        assert getattr(hw, name) is None, name
    hw.all_off()  # nothing made yet: nothing to stop, no error
    made = [_Part() for _ in PARTS]
    micropython.heap_lock()
    try:
        for k in range(len(PARTS)):
            setattr(hw, PARTS[k], made[k])
    finally:
        micropython.heap_unlock()
    for k in range(len(PARTS)):
        assert getattr(hw, PARTS[k]) is made[k]
    hw.all_off()
    assert [p.stops for p in made] == [0, 1, 1, 1, 0, 0, 0]  # the actuators only
