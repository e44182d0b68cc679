# Stays a .py on the board: the ESP32 runs main.py, never main.mpy. Everything
# else is compiled; this only starts it. shell.start() returns to the REPL on a
# refused configuration or in recovery mode (confirm key held at power-on).
import shell

shell.start()
