"""Flash a MicroPython firmware image with esptool, after checking it fits the chip.

Decisions, all testable without a board:

* the file must be an ESP firmware image: first byte 0xE9 (the ESP image
  magic), a plausible segment count, and an extended header (bytes 8-23) whose
  chip id (bytes 12-13, little-endian) names a known chip; ESP8266 images have
  no chip id and are refused;
* it must be a complete firmware (bootloader + partition table + app, as the
  micropython.org downloads are): the partition table's magic 0xAA 0x50 sits
  at flash 0x8000, i.e. at 0x8000 - offset in the file; an application-only
  image is refused;
* the image's chip must be the chip esptool detects on the port (or the one
  given with --chip);
* it is written at the chip's bootloader offset: 0x1000 for the ESP32 and
  ESP32-S2, 0x0 for S3/C2/C3/C6/C61/H2, 0x2000 for C5/P4/H4;
* ``--erase`` erases the whole flash first (``write-flash --erase-all``);
* afterwards MicroPython must answer at the REPL (mpremote, a few retries);
  an image with the firmware frozen in (board_config's manifest) reports the
  code hash of its module ``frozen_id``, the same ``code_hash`` that ``sicbo
  deploy`` reports.

A frozen production image (ESP-IDF build with board_config's manifest: its
``firmware.bin`` = bootloader + partition table + application, as
micropython.org's downloads) is an ordinary complete ESP32 image: the same
checks accept it, whatever its size; its ``micropython.bin`` (the application
alone) is refused like any application-only image.
"""

import os
import re
import shlex
import subprocess
import sys
import time

from host_tools.cli import UsageError

IMAGE_MAGIC = 0xE9
PARTITION_TABLE_FLASH_ADDR = 0x8000
PARTITION_MAGIC = b"\xaa\x50"
# esptool --chip name: (image chip id, bootloader offset, display name)
CHIPS = {
    "esp32": (0, 0x1000, "ESP32"),
    "esp32s2": (2, 0x1000, "ESP32-S2"),
    "esp32c3": (5, 0x0, "ESP32-C3"),
    "esp32s3": (9, 0x0, "ESP32-S3"),
    "esp32c2": (12, 0x0, "ESP32-C2"),
    "esp32c6": (13, 0x0, "ESP32-C6"),
    "esp32h2": (16, 0x0, "ESP32-H2"),
    "esp32p4": (18, 0x2000, "ESP32-P4"),
    "esp32c61": (20, 0x0, "ESP32-C61"),
    "esp32c5": (23, 0x2000, "ESP32-C5"),
    "esp32h21": (25, 0x0, "ESP32-H21"),
    "esp32h4": (28, 0x2000, "ESP32-H4"),
}
_BY_ID = {v[0]: k for k, v in CHIPS.items()}
_BY_DISPLAY = sorted(((v[2], k) for k, v in CHIPS.items()), key=lambda t: -len(t[0]))


class FlashError(UsageError):
    """A refused flash: one line for the technician."""


def esptool_exe():
    exe = os.path.join(os.path.dirname(sys.executable), "esptool")
    return exe if os.path.exists(exe) else "esptool"


def read_image_header(data):
    """The chip (esptool name) of a complete firmware image, or FlashError."""
    if len(data) < 24 or data[0] != IMAGE_MAGIC:
        raise FlashError("not a firmware image (no ESP image header: the first byte must be "
                         "0xE9)")
    segments = data[1]
    if not 1 <= segments <= 16:
        raise FlashError("not a firmware image (ESP image header with %d segments)" % segments)
    chip_id = data[12] | data[13] << 8
    chip = _BY_ID.get(chip_id)
    if chip is None:
        raise FlashError("not a firmware image for a supported chip (chip id %d in the "
                         "extended header; ESP8266 images have none)" % chip_id)
    offset = CHIPS[chip][1]
    table = PARTITION_TABLE_FLASH_ADDR - offset
    if data[table:table + 2] != PARTITION_MAGIC:
        raise FlashError("an application-only image for %s, not a complete firmware (no "
                         "partition table at 0x%x): use the full .bin from micropython.org, "
                         "or a build's firmware.bin, not its micropython.bin"
                         % (CHIPS[chip][2], PARTITION_TABLE_FLASH_ADDR))
    return chip


def chip_from_esptool_output(text):
    """esptool name of the chip esptool reports, or None."""
    for pat in (r"Detecting chip type\.*\s*(ESP[\w-]+)", r"Chip type:\s*(ESP[\w-]+)",
                r"Chip is\s*(ESP[\w-]+)"):
        m = re.search(pat, text)
        if m:
            name = m.group(1).upper()
            for display, key in _BY_DISPLAY:  # longest first: ESP32-C61 before ESP32-C6
                if name == display or name.startswith(display + "-"):
                    return key
            return name.lower()
    return None


def flash_command(port, chip, image, erase=False, baud=460800):
    cmd = [esptool_exe(), "--chip", chip, "--port", port, "--baud", str(baud), "write-flash"]
    if erase:
        cmd.append("--erase-all")
    cmd += ["0x%x" % CHIPS[chip][1], image]
    return cmd


def detect_chip(port, run=subprocess.run):
    r = run([esptool_exe(), "--port", port, "--chip", "auto", "flash-id"],
            capture_output=True, text=True, timeout=60)
    out = (r.stdout or "") + (r.stderr or "")
    chip = chip_from_esptool_output(out)
    if r.returncode or chip is None:
        last = [line for line in out.strip().splitlines() if line.strip()]
        raise FlashError("no ESP chip answers on %s (%s)" % (port, last[-1] if last else
                                                              "esptool failed"))
    return chip


def check_repl(port, tries=8, wait=1.5, mpremote=None):
    """What answers on port ("micropython 1.29.0 6", with ", frozen firmware
    <code hash>" for an image with the firmware frozen in), or FlashError."""
    from host_tools.deploy import MpRemote, agent_code

    mp = mpremote or MpRemote(port, timeout=30)
    last = None
    for _ in range(tries):
        time.sleep(wait)
        try:
            out = mp.run("exec", agent_code("sd_frozen", "sd_id") + "sd_id()\n")
        except UsageError as e:
            last = e
            continue
        for line in out.splitlines():
            if line.startswith("SICBO-REPL micropython "):
                name, version, mpy, frozen = (line.split() + ["-"])[1:5]
                return "%s %s %s%s" % (name, version, mpy, "" if frozen == "-" else
                                       ", frozen firmware " + frozen)
        last = out.strip()[-80:]
    raise FlashError("flashed, but MicroPython does not answer at the REPL on %s (%s)"
                     % (port, last))


def flash(port, image, erase=False, dry_run=False, chip=None, baud=460800, out=print,
          run=subprocess.run, repl_check=check_repl):
    """Flashes image; returns the esptool command (as a list)."""
    try:
        with open(image, "rb") as f:
            data = f.read(PARTITION_TABLE_FLASH_ADDR + 16)
    except OSError as e:
        raise FlashError("cannot read %s: %s" % (image, e.strerror or e)) from None
    image_chip = read_image_header(data)
    if chip and chip != "auto":
        if chip not in CHIPS:
            raise FlashError("unknown chip %s (known: %s)" % (chip, ", ".join(sorted(CHIPS))))
        if chip != image_chip:
            raise FlashError("%s is an image for %s, not %s" % (
                image, CHIPS[image_chip][2], CHIPS[chip][2]))
    if dry_run:
        cmd = flash_command(port, image_chip, image, erase, baud)
        out(shlex.join(cmd))
        return cmd
    if "://" not in port and not os.path.exists(port):
        raise FlashError("nothing at the port %s" % port)
    found = detect_chip(port, run=run)
    if found != image_chip:
        raise FlashError("%s is an image for %s, the board on %s is %s: nothing written" % (
            image, CHIPS[image_chip][2], port, CHIPS[found][2] if found in CHIPS else found))
    cmd = flash_command(port, found, image, erase, baud)
    out(shlex.join(cmd))
    r = run(cmd, timeout=600)
    if r.returncode:
        raise FlashError("esptool failed (exit status %d) writing %s" % (r.returncode, image))
    answer = repl_check(port)
    out("MicroPython answers at the REPL: %s" % answer)
    return cmd
