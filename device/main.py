# Stays a .py on the board: the ESP32 runs main.py, never main.mpy. Everything
# else is compiled; this only starts it. faults.start() returns to the REPL on
# refused files, in recovery mode, without an approval in force or out of
# service; it resets the board after a contained fault or once the files are
# checked and cached.
import faults

faults.start()
