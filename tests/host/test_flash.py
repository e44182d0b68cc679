"""sicbo flash: the decisions, on synthetic image headers, without a board."""

import os
import subprocess
import sys

import pytest

from host_tools import REPO
from host_tools import flash as fl


def image(chip_id=0, offset=0x1000, table=True, magic=0xE9, segments=3, size=0x9000):
    data = bytearray(size)
    data[0] = magic
    data[1] = segments
    data[2] = 2  # SPI mode DIO
    data[3] = 0x20  # 4 MB, 40 MHz
    data[4:8] = (0x40080000).to_bytes(4, "little")
    data[12:14] = chip_id.to_bytes(2, "little")
    if table:
        t = fl.PARTITION_TABLE_FLASH_ADDR - offset
        data[t:t + 2] = b"\xaa\x50"
    return bytes(data)


def write(tmp_path, data, name="fw.bin"):
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)


def test_esp32_image_header():
    assert fl.read_image_header(image()) == "esp32"
    assert fl.read_image_header(image(9, 0x0)) == "esp32s3"
    assert fl.read_image_header(image(5, 0x0)) == "esp32c3"
    assert fl.read_image_header(image(18, 0x2000)) == "esp32p4"


@pytest.mark.parametrize("data, message", [
    (b"PK\x03\x04" + bytes(100), "not a firmware image"),          # a zip
    (b"\x7fELF" + bytes(100), "not a firmware image"),             # an ELF, not a .bin
    (b"hello", "not a firmware image"),
    (image(segments=0), "segments"),
    (image(chip_id=77), "chip id 77"),
    (image(table=False), "application-only"),
    (image(chip_id=0, offset=0x0), "application-only"),            # S3 layout, ESP32 id
])
def test_not_a_firmware_image_is_refused(data, message):
    with pytest.raises(fl.FlashError, match=message):
        fl.read_image_header(data)


def test_chip_names_from_esptool_output():
    out = "esptool v5.6.0\nConnected to ESP32 on /dev/ttyUSB0:\nChip type:          " \
          "ESP32-D0WD-V3 (revision v3.1)\n"
    assert fl.chip_from_esptool_output(out) == "esp32"
    assert fl.chip_from_esptool_output("Detecting chip type... ESP32-S3\n") == "esp32s3"
    assert fl.chip_from_esptool_output("Chip is ESP32-C61 (revision v1.0)") == "esp32c61"
    assert fl.chip_from_esptool_output("Chip is ESP32-C6 (QFN40)") == "esp32c6"
    assert fl.chip_from_esptool_output("A fatal error occurred: no serial data") is None


def test_dry_run_prints_the_exact_command(tmp_path):
    fw = write(tmp_path, image())
    lines = []
    cmd = fl.flash("/dev/ttyUSB0", fw, dry_run=True, out=lines.append)
    assert cmd[1:] == ["--chip", "esp32", "--port", "/dev/ttyUSB0", "--baud", "460800",
                       "write-flash", "0x1000", fw]
    assert os.path.basename(cmd[0]) == "esptool"
    assert lines == [" ".join(cmd)]
    cmd = fl.flash("/dev/ttyUSB0", fw, dry_run=True, erase=True, out=lines.append)
    assert cmd[-3:] == ["--erase-all", "0x1000", fw]
    s3 = write(tmp_path, image(9, 0x0), "s3.bin")
    assert fl.flash("/dev/ttyUSB0", s3, dry_run=True, out=lines.append)[-2:] == ["0x0", s3]
    with pytest.raises(fl.FlashError, match="image for ESP32-S3, not ESP32"):
        fl.flash("/dev/ttyUSB0", s3, dry_run=True, chip="esp32", out=lines.append)


class FakeRun:
    """Stands in for subprocess.run: esptool's chip detection, then the write."""

    def __init__(self, chip_line, write_status=0):
        self.chip_line = chip_line
        self.write_status = write_status
        self.calls = []

    def __call__(self, cmd, **kw):
        self.calls.append(cmd)
        if "flash-id" in cmd:
            return subprocess.CompletedProcess(cmd, 0, "Detecting chip type... %s\n"
                                               % self.chip_line, "")
        return subprocess.CompletedProcess(cmd, self.write_status, "", "")


def test_flash_writes_after_detection_then_checks_the_repl(tmp_path):
    fw = write(tmp_path, image())
    port = write(tmp_path, b"", "ttyFAKE")
    run = FakeRun("ESP32")
    checked = []
    cmd = fl.flash(port, fw, erase=True, run=run, out=lambda s: None,
                   repl_check=lambda p: checked.append(p) or "micropython 1.29.0 6")
    assert run.calls[0][-1] == "flash-id"
    assert run.calls[1] == cmd and "write-flash" in cmd and "--erase-all" in cmd
    assert checked == [port]


def test_image_for_another_chip_writes_nothing(tmp_path):
    fw = write(tmp_path, image(9, 0x0))
    port = write(tmp_path, b"", "ttyFAKE")
    run = FakeRun("ESP32")
    with pytest.raises(fl.FlashError, match="image for ESP32-S3, the board .* is ESP32"):
        fl.flash(port, fw, run=run, out=lambda s: None, repl_check=lambda p: "")
    assert len(run.calls) == 1  # detection only


def test_esptool_failure_and_silent_repl_are_reported(tmp_path):
    fw = write(tmp_path, image())
    port = write(tmp_path, b"", "ttyFAKE")
    with pytest.raises(fl.FlashError, match="esptool failed"):
        fl.flash(port, fw, run=FakeRun("ESP32", 2), out=lambda s: None,
                 repl_check=lambda p: "")

    def silent(p):
        raise fl.FlashError("flashed, but MicroPython does not answer at the REPL on %s" % p)
    with pytest.raises(fl.FlashError, match="does not answer"):
        fl.flash(port, fw, run=FakeRun("ESP32"), out=lambda s: None, repl_check=silent)


def test_cli(tmp_path):
    fw = write(tmp_path, image())
    r = subprocess.run([sys.executable, "-m", "host_tools", "flash", "--port", "/dev/ttyUSB9",
                        "--firmware", fw, "--dry-run"], cwd=REPO, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().endswith("write-flash 0x1000 " + fw)
    r = subprocess.run([sys.executable, "-m", "host_tools", "flash", "--port",
                        str(tmp_path / "ttyNONE"), "--firmware", fw], cwd=REPO,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "nothing at the port" in r.stderr
    assert r.stderr.strip().count("\n") == 0
    notfw = write(tmp_path, b"#!/bin/sh\necho hi\n", "x.bin")
    r = subprocess.run([sys.executable, "-m", "host_tools", "flash", "--port", "/dev/ttyUSB9",
                        "--firmware", notfw, "--dry-run"], cwd=REPO, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and "not a firmware image" in r.stderr


def test_check_repl_against_the_virtual_board(tmp_path):
    from host_tools.vboard import VirtualBoard
    with VirtualBoard(str(tmp_path / "vb")) as vb:
        assert fl.check_repl(vb.port, tries=2, wait=0.1).startswith("micropython 1.29")


# -- a frozen production image (board_config's manifest) ------------------------

def frozen_firmware(code="ab" * 32, app_size=0x180000):
    """What an ESP-IDF build with the firmware frozen in gives as firmware.bin:
    the bootloader at flash 0x1000 (file offset 0), the partition table at
    0x8000, the application (its own ESP image header) at 0x10000, with the
    frozen modules' bytecode in it. Larger than a stock image, otherwise the same."""
    data = bytearray(image(size=0x10000 - 0x1000))
    app = bytearray(app_size)
    app[0] = fl.IMAGE_MAGIC
    app[1] = 5
    app[12:14] = (0).to_bytes(2, "little")
    frozen = b"frozen_id.py\x00CODE_SHA256\x00" + code.encode()
    app[0x1000:0x1000 + len(frozen)] = frozen
    return bytes(data + app), bytes(app)


def test_frozen_firmware_image_is_flashed_like_any_complete_image(tmp_path):
    full, app = frozen_firmware()
    fw = write(tmp_path, full, "firmware.bin")
    assert fl.read_image_header(full) == "esp32"
    cmd = fl.flash("/dev/ttyUSB0", fw, dry_run=True, out=lambda s: None)
    assert cmd[-2:] == ["0x1000", fw]
    port = write(tmp_path, b"", "ttyFAKE")
    run = FakeRun("ESP32-D0WD-V3")
    lines = []
    fl.flash(port, fw, run=run, out=lines.append,
             repl_check=lambda p: "micropython 1.28.0 6, frozen firmware " + "ab" * 32)
    assert run.calls[1][-2:] == ["0x1000", fw]
    assert lines[-1].endswith("frozen firmware " + "ab" * 32)
    # the build's application alone (micropython.bin) is not a complete firmware
    with pytest.raises(fl.FlashError, match="application-only.*micropython.bin"):
        fl.read_image_header(app)


def test_check_repl_reports_the_frozen_code_hash(tmp_path):
    import shutil

    from host_tools.vboard import SIM_DIR, VirtualBoard
    image_dir = tmp_path / "image"
    image_dir.mkdir()
    for name in os.listdir(SIM_DIR):
        if name.endswith(".py"):
            shutil.copy(os.path.join(SIM_DIR, name), image_dir / name)
    (image_dir / "frozen_id.py").write_text('CODE_SHA256 = "%s"\n' % ("cd" * 32))
    with VirtualBoard(str(tmp_path / "vb"), frozen=str(image_dir)) as vb:
        if vb.frozen_in:
            pytest.skip("this interpreter has sim/ frozen in: no stand-in frozen image")
        answer = fl.check_repl(vb.port, tries=2, wait=0.1)
    assert answer.startswith("micropython 1.") and answer.endswith(", frozen firmware " + "cd" * 32)
