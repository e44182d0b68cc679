# Helpers of the switch-bank tests (test_hw_switches, test_hw_keychain), and
# the key chain they wire: two 74HC165s on the lamps' SPI bus, the shipped
# boards' key bits (board_config/boards/esp32-devkitc.json).
import machine

SCK = 18
MOSI = 23
MISO = 22
LOAD = 21
NBITS = 16
HIGH = (15,)
LOW = (10, 11, 12, 13, 14)
BITS = {"key_bell": 0, "key_void": 1, "key_payout": 2, "key_confirm": 3,
        "key_face_1": 4, "key_face_2": 5, "key_face_3": 6, "key_face_4": 7,
        "key_face_5": 8, "key_face_6": 9}
SENSORS = {"cover": 34, "clasp_left": 35, "clasp_right": 36, "shake": 39}


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
