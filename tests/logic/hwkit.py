# Helpers of the switch-bank tests (test_hw_switches, test_hw_keychain).
import machine


def poll(sw, ms, step=5):
    """ms of the simulated clock, the switches updated every step ms."""
    for _ in range(ms // step):
        sw.update()
        machine.sim_advance(step)


def drain(sw):
    """Every waiting event, as (kind, signal, level, ticks) tuples."""
    out = []
    ev = [0, 0, 0, 0]
    while sw.pop(ev):
        out.append(tuple(ev))
    return out
