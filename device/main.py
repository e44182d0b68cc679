# Stays a .py on the board: the ESP32 runs main.py, never main.mpy. Everything
# else is compiled; this only starts it. shell.start() returns to the REPL on a
# refused configuration, in recovery mode (confirm key held at power-on) or
# out of service; it resets the board after a contained fault or once the
# files are checked and cached.
import shell

shell.start()
