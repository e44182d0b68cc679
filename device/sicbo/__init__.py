# Sic Bo rules engine and round logic: pure, no I/O, no `machine`; the same
# files run on the ESP32, the MicroPython unix port and CPython.
FIRMWARE_VERSION = "0.1.0"
