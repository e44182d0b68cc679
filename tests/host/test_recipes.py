# docs/design.md's "Where to change what", followed for real: each recipe's
# edits applied, as a developer would make them, to a copy of the firmware
# (device/ copied into the test's folder; the checkout is never touched), the
# commands the recipe says to run run on the copy, then the new thing checked
# end to end through the firmware's own code in a fresh interpreter whose
# firmware is the copy (SICBO_DEVICE_DIR, host_tools/__init__.py) and whose
# rig is tests/logic's (appkit: the whole controller on the simulated board).
#
# The edits find their place by what is there (the highest code in use, the
# closing line of a table), not by line numbers or fixed codes: other record
# types, sensors or messages added meanwhile leave them valid. An anchor that
# is gone fails with the recipe's step named: the recipe needs a look.
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEVICE = os.path.join(REPO, "device")
LOGIC = os.path.join(REPO, "tests", "logic")
SIM = os.path.join(REPO, "sim")


# ---- the copy and its edits -----------------------------------------------------


def copy_tree(src, dst):
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
    return str(dst)


def firmware_copy(tmp_path):
    return copy_tree(DEVICE, tmp_path / "device")


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


def write(root, rel, text):
    with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
        f.write(text)


def edit(root, rel, old, new):
    """Replace the one occurrence of old in root/rel by new."""
    text = read(root, rel)
    assert text.count(old) == 1, "%s: %r is not there once: the recipe's step moved" % (rel, old)
    write(root, rel, text.replace(old, new))


def insert_before_close(root, rel, opener, closer, lines):
    """lines inserted before the first `closer` after `opener` (the end of a
    table: a tuple's closing parenthesis)."""
    text = read(root, rel)
    assert text.count(opener) == 1, "%s: %r is not there once" % (rel, opener)
    start = text.index(opener) + len(opener)
    end = text.index(closer, start)
    write(root, rel, text[:end] + "\n" + lines.rstrip("\n") + text[end:])


def highest(text, prefix):
    """(value, line) of the highest `PREFIX... = const(N)` (not *_LAST)."""
    found = [(int(m.group(2)), m.group(0)) for m in
             re.finditer(r"^(%s\w+) = const\((\d+)\).*$" % prefix, text, re.M)
             if not m.group(1).endswith("_LAST")]
    assert found, "no %s constants" % prefix
    return max(found)


def add_const(root, rel, prefix, name, comment):
    """NAME = const(next free) after the highest PREFIX constant; returns it."""
    text = read(root, rel)
    value, line = highest(text, prefix)
    edit(root, rel, line + "\n", "%s\n%s = const(%d)  # %s\n" % (line, name, value + 1, comment))
    return value + 1


def add_last(root, rel, prefix, name, comment):
    """NAME as the new PREFIX_LAST (J_LAST, R_LAST): the next code after it."""
    text = read(root, rel)
    m = re.search(r"^%sLAST = const\((\d+)\)" % prefix, text, re.M)
    assert m, "%s: no %sLAST" % (rel, prefix)
    value = int(m.group(1)) + 1
    edit(root, rel, m.group(0), "%s = const(%d)  # %s\n%sLAST = const(%d)"
         % (name, value, comment, prefix, value))
    return value


def env_of(copy):
    env = dict(os.environ, SICBO_DEVICE_DIR=copy, PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)
    return env


def tool(copy, *args, ok=True):
    """A host tool (python -m ...) on the copy's firmware: (exit code, output)."""
    r = subprocess.run([sys.executable, "-m"] + list(args), cwd=REPO, env=env_of(copy),
                       capture_output=True, text=True, timeout=120)
    if ok:
        assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r.returncode, r.stdout + r.stderr


def on_copy(copy, script, rig=LOGIC, host=REPO):
    """script in a fresh CPython whose firmware is the copy, with the test rig
    (tests/logic, or an edited copy of it), sim/ and the host tools (host:
    the folder of host_tools) on the path, as tests/conftest.py sets them
    up; its output. It fails on any exception."""
    prelude = textwrap.dedent("""\
        import sys
        sys.path.insert(0, %r)
        import host_tools  # the firmware: SICBO_DEVICE_DIR
        for p in (%r, %r):
            sys.path.insert(0, p)
        import sicbo
        assert sicbo.__file__.startswith(%r), sicbo.__file__
        """ % (host, SIM, rig, copy))
    r = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(script)], cwd=REPO,
                       env=env_of(copy), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def write_tables(copy):
    """The recipe's `python -m host_tools.records --write` (after --check has
    said the generated tables are stale): the copy's files, not the checkout's."""
    ours = (read(DEVICE, "sicbo/journal.py"), read(DEVICE, "sicbo/texts.py"))
    code, out = tool(copy, "host_tools.records", "--check", ok=False)
    assert code == 1 and "disagrees with sicbo/records.py" in out, out
    tool(copy, "host_tools.records", "--write")
    assert tool(copy, "host_tools.records", "--check")[0] == 0
    assert (read(DEVICE, "sicbo/journal.py"), read(DEVICE, "sicbo/texts.py")) == ours


# ---- A journal record type ---------------------------------------------------------


def test_a_new_record_type_is_one_declaration_and_works_end_to_end(tmp_path):
    copy = firmware_copy(tmp_path)
    rel = "sicbo/records.py"
    # Its J_ code as the new J_LAST, its payload offset, its RECORD_TYPES entry.
    code = add_last(copy, rel, "J_", "J_TILT", "the table was tilted")
    edit(copy, rel, "# J_METERS: the meters checkpoint",
         "P_TILT_SIDE = const(0)  # J_TILT: 1 front, 2 back, 3 left, 4 right\n"
         "# J_METERS: the meters checkpoint")
    insert_before_close(copy, rel, "RECORD_TYPES = (", "\n)\n",
                        '    (J_TILT, "tilt", (("side", P_TILT_SIDE, 1, "code", 1, 4, None),),\n'
                        '     ALWAYS, "alarms", "the table was tilted: an alarm"),')
    write_tables(copy)
    # What tests/host/test_records.py checks of every declaration holds for it.
    r = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
                        os.path.join(REPO, "tests", "host", "test_records.py")],
                       cwd=REPO, env=env_of(copy), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr

    folder = on_copy(copy, """
        from appkit import Table, reboot

        from sicbo import events as E
        from sicbo import journal, logtext, texts
        from sicbo import records as R
        from sicbo.journal import FOLLOWS

        code = R.J_TILT
        assert code == R.J_LAST == %d
        assert texts.J_NAMES[code] == "tilt"
        assert FOLLOWS[code] == (1 << (E.ST_HOLD + 1)) - 1  # ALWAYS: after any state
        t = Table()
        t.play(2, 3, 4)
        alarms = t.m.meters.get("alarms")
        # Written as anyone but the round machine writes one (the recipe's
        # writer): encode_next, then the journal.
        now = t.now()
        rec = t.m.encode_next(code, bytes((2, 0, 0, 0, 0, 0, 0, 0)), now,
                              t.ctl.wall.seconds(now))
        assert journal.check_payload(code, len(rec), rec, R.HEADER) == 0
        for side in (0, 5, 255):  # outside its declared 1..4
            bad = bytearray(rec)
            bad[R.HEADER + R.P_TILT_SIDE] = side
            assert journal.check_payload(code, len(bad), bad, R.HEADER) == E.BAD_VALUE, side
        assert journal.check_payload(code, len(rec) + 1, rec + b"x", R.HEADER) == E.BAD_LENGTH
        t.store.append(rec, t.m.open_seq)
        assert t.m.meters.get("alarms") == alarms + 1  # its meter, counted as it is applied
        line = logtext.journal_line(journal.Record(rec, 0))
        assert " tilt " in line, line
        # The next boot replays it: no damage, the same count, the round goes on.
        t2 = reboot(t)
        assert t2.m.damaged == 0 and t2.m.duplicates == 0, (t2.m.damaged, t2.m.duplicates)
        assert t2.m.meters.get("alarms") == alarms + 1
        types = t2.types()
        assert code in types and R.J_DAMAGE not in types, types
        assert types.index(code) < len(types) - 1 and types[-1] == R.J_BOOT, types
        t2.play(1, 1, 2)
        assert t2.m.meters.get("rounds") == 2
        t2.close()
        print(t2.folder)
        """ % code).strip().splitlines()[-1]

    # `sicbo journal` names it and its field, and counts its meter.
    _code, out = tool(copy, "host_tools", "journal", folder, "--json")
    d = json.loads(out)
    tilts = [r for r in d["records_listed"] if r["type_code"] == code]
    assert len(tilts) == 1, d["records_listed"]
    assert tilts[0]["type"] == "tilt" and tilts[0]["side"] == 2 and tilts[0]["damage"] is None
    assert d["damage"] == [] and d["meters"]["alarms"] == 1 and d["meters"]["rounds"] == 2
    _code, out = tool(copy, "host_tools", "journal", folder, "--records", "-1")
    assert re.search(r"round +1 tilt", out), out


# ---- A periodic task ---------------------------------------------------------------


def test_a_new_periodic_task_is_called_watched_and_journaled_when_it_raises(tmp_path):
    copy = firmware_copy(tmp_path)
    rel = "controller.py"
    # A method (self, now) of the Controller and a row in TASKS. This one is
    # written to fail on its third pass, as a broken one would.
    edit(copy, rel, "\nclass Controller:\n",
         "\nPASSES = [0]  # the heartbeat task's passes\n\n\nclass Controller:\n")
    edit(copy, rel, "    # ---- boot ----",
         "    def heartbeat(self, now):\n"
         "        \"\"\"Counts its passes; the third raises.\"\"\"\n"
         "        PASSES[0] += 1\n"
         "        if PASSES[0] >= 3:\n"
         "            raise RuntimeError(\"heartbeat stopped\")\n"
         "        return None\n\n"
         "    # ---- boot ----")
    insert_before_close(copy, rel, "TASKS = (", "\n)\n",
                        '    ("heartbeat", 10, Controller.heartbeat),')
    on_copy(copy, """
        import controller
        import faults
        import machine
        from appkit import Table

        from sicbo import events as E
        from sicbo import journal, logtext
        from sicbo import records as R

        task = [row[0] for row in controller.TASKS].index("heartbeat")
        t = Table()
        resets = len(machine.sim_resets())
        try:
            controller.run(t.ctl)
        except SystemExit:
            pass  # the simulated machine.reset()
        else:
            raise AssertionError("the table ran on")
        assert controller.PASSES[0] == 3, controller.PASSES  # called, by its period
        wd = t.hw.watchdog
        assert wd.tasks() == len(controller.TASKS) and wd.name(task) == "heartbeat"
        assert machine.sim_resets()[resets:] == [machine.HARD_RESET]
        found = [r for r in t.journal() if r.type == R.J_FAULT]
        assert len(found) == 1, found
        # Journaled as the task's row in TASKS (the watchdog's id for it).
        assert found[0].p(0) == E.F_TASK and found[0].p(2) == task, found[0]
        assert "detail %d" % task in logtext.journal_line(found[0])
        n, text = faults.Faults(t.folder + "/fault.txt").failed_boots()
        assert n == 1 and "heartbeat stopped" in text, text
        """)


def test_a_task_beyond_the_watchdogs_room_is_refused_where_the_tasks_are_built(tmp_path):
    copy = firmware_copy(tmp_path)
    text = read(copy, "controller.py")
    start = text.index("TASKS = (\n")
    rows = text[start:text.index("\n)\n", start)].count("\n    (")
    extra = "".join('    ("spare%d", 10, Controller.poll),\n' % k for k in range(9 - rows))
    insert_before_close(copy, "controller.py", "TASKS = (", "\n)\n", extra)
    on_copy(copy, """
        from hw.watchdog import Watchdog

        wd = Watchdog(object())
        for k in range(8):
            wd.register("task%d" % k, 1000, 0)
        try:
            wd.register("task8", 1000, 0)
        except ValueError:
            pass
        else:
            raise AssertionError("the watchdog took a ninth task")
        try:
            import controller  # noqa: F401
        except ValueError as e:
            assert str(e) == "9 tasks: the watchdog watches at most 8", e
        else:
            raise AssertionError("a ninth task was taken")
        """)


# ---- A sensor ----------------------------------------------------------------------


def add_tilt_sensor(copy):
    """The sensor recipe for a tilt switch (1 = the table tilted: a sensor
    that acts when it reads 1, like a key; not a level the round keeps),
    and the alarm message it raises. Returns its sensor id."""
    # sicbo/signals.py: its index (the last, below COUNT) and its name.
    text = read(copy, "sicbo/signals.py")
    count = int(re.search(r"^COUNT = const\((\d+)\)", text, re.M).group(1))
    edit(copy, "sicbo/signals.py", "COUNT = const(%d)" % count,
         "TILT = const(%d)  # 1 = the table tilted\nCOUNT = const(%d)" % (count, count + 1))
    edit(copy, "sicbo/signals.py", '"key_face_6")', '"key_face_6", "tilt")')
    # sicbo/events.py: its event, its sensor id, and the alarm it raises.
    add_const(copy, "sicbo/events.py", "EV_", "EV_TILT", "the table tilted")
    sensor = add_const(copy, "sicbo/events.py", "S_", "S_TILT", "the tilt switch")
    add_last(copy, "sicbo/events.py", "R_", "R_TILT", "the table tilted")
    insert_before_close(copy, "sicbo/texts.py", "_TEXTS = (", "\n)\n",
                        '    "alarm: the table tilted between the shake and the bell: '
                        'round void\\n"  # R_TILT')
    insert_before_close(copy, "sicbo/texts.py", "_CODES = bytes((", "\n))\n", "    E.R_TILT,")
    text = read(copy, "sicbo/texts.py")
    names = re.search(r"^SENSOR_NAMES = \((.*?)\)", text, re.M | re.S)
    assert names.group(1).count('"') == 2 * sensor, "SENSOR_NAMES is not by sensor id"
    edit(copy, "sicbo/texts.py", names.group(0), names.group(0)[:-1] + ', "tilt")')
    # controller._INPUTS: its row.
    insert_before_close(copy, "controller.py", "_INPUTS = (", "\n)\n",
                        "    (E.EV_TILT, 0, 0, E.S_TILT),  # S.TILT")
    # What it means to the round: RoundMachine.handle.
    edit(copy, "sicbo/roundmachine.py",
         "        else:\n            self._not_now()\n        return self.ncmd\n",
         "        elif ev == E.EV_TILT:\n"
         "            # Between the shake and the bell the dice may have moved.\n"
         "            self._rec(R.J_ALARM, E.R_TILT)\n"
         "            if st == E.ST_SHAKING or st == E.ST_OPEN:\n"
         "                self._stop_shaker()\n"
         "                self._void(E.V_TAMPER)\n"
         "            else:\n"
         "                self._lamps()\n"
         "            self._show(E.R_TILT)\n"
         "        else:\n            self._not_now()\n        return self.ncmd\n")
    return sensor


def test_a_new_sensor_reaches_the_round_from_the_input_table(tmp_path):
    copy = firmware_copy(tmp_path)
    sensor = add_tilt_sensor(copy)
    # A new alarm message widens the range the J_ALARM check allows.
    write_tables(copy)
    # The board files: the test rig's board wires it (GPIO4, active high).
    rig = copy_tree(LOGIC, tmp_path / "logic")
    edit(rig, "appkit.py", '"key_face_6": 0,\n}', '"key_face_6": 0, "tilt": 4,\n}')
    edit(rig, "appkit.py", '"clasp_right", "shake")', '"clasp_right", "shake", "tilt")')
    on_copy(copy, """
        import json

        import controller
        from appkit import Table, reboot

        from sicbo import board, config, logtext
        from sicbo import events as E
        from sicbo import records as R
        from sicbo import signals as S

        assert S.INPUT_SIGNALS[S.TILT] == "tilt" and S.COUNT == S.TILT + 1 == len(S.INPUT_SIGNALS)
        assert E.S_TILT == %d
        k = 4 * S.TILT
        assert tuple(controller.INPUTS[k:k + 4]) == (E.EV_TILT, 0, 0, E.S_TILT)
        # A board file without it is refused, naming it.
        with open(%r) as f:
            try:
                board.parse_board(json.load(f))
            except config.ConfigError as e:
                assert "inputs.tilt" in str(e), e
            else:
                raise AssertionError("a board without the tilt switch was accepted")

        t = Table()
        t.open_round()
        assert t.state() == E.ST_OPEN
        seq = t.m.seq
        events = t.ctl.events
        t.set("tilt", 1)
        t.run(60)
        assert t.ctl.events == events + 1
        new = [r for r in t.journal() if r.seq > seq]
        assert [r.type for r in new] == [R.J_ALARM, R.J_VOID], new
        assert new[0].p(0) == E.R_TILT and new[1].p(0) == E.V_TAMPER, new
        assert t.state() == E.ST_IDLE and "ALARM" in t.lit() and "VOID" in t.lit(), t.lit()
        assert "table tilted" in logtext.journal_line(new[0])
        t.set("tilt", 0)
        t.run(60)
        assert t.ctl.events == events + 1  # it acts when it reads 1 only
        # Its faults are reported under its sensor id, by name.
        seq = t.m.seq
        for i in range(30):
            t.set("tilt", 1 - i %% 2)
            t.run(2)
        t.set("tilt", 0)
        t.run(10)
        alarms = [r for r in t.journal() if r.seq > seq and r.type == R.J_ALARM]
        assert [(r.p(0), r.p(1)) for r in alarms] == [(E.R_SENSOR_FAULT, E.S_TILT)], alarms
        assert t.m.faults == 1 << E.S_TILT
        assert logtext.message_text(E.R_SENSOR_FAULT, E.S_TILT).endswith(": tilt")
        # The next boot replays the new alarm without damage.
        t2 = reboot(t)
        assert t2.m.damaged == 0 and R.J_DAMAGE not in t2.types()
        t2.close()
        """ % (sensor, os.path.join(REPO, "board_config", "boards", "virtual.json")), rig=rig)


def add_dome_lock_level(copy, rig):
    """The sensor recipe for a level the round keeps: the dome's lock (1 =
    locked), below LEVELS (the keys after it renumbered); no round starts
    unless it is locked (a refusal of its own)."""
    rel = "sicbo/signals.py"
    text = read(copy, rel)
    levels = int(re.search(r"^LEVELS = const\((\d+)\)", text, re.M).group(1))
    count = int(re.search(r"^COUNT = const\((\d+)\)", text, re.M).group(1))
    keys = re.findall(r"^(KEY_\w+ = const\((\d+)\))", text, re.M)
    assert keys and min(int(n) for _line, n in keys) == levels, "the keys follow the levels"
    for line, n in keys:
        edit(copy, rel, line, line.replace("(%s)" % n, "(%d)" % (int(n) + 1)))
    edit(copy, rel, "# The dealer's keys:",
         "DOME_LOCK = const(%d)  # 1 = the dome's lock engaged\n# The dealer's keys:" % levels)
    edit(copy, rel, "LEVELS = const(%d)" % levels, "LEVELS = const(%d)" % (levels + 1))
    edit(copy, rel, "COUNT = const(%d)" % count, "COUNT = const(%d)" % (count + 1))
    edit(copy, rel, '"supervisor",', '"supervisor", "dome_lock",')
    add_const(copy, "sicbo/events.py", "EV_", "EV_LOCK_ON", "the dome locked")
    add_const(copy, "sicbo/events.py", "EV_", "EV_LOCK_OFF", "the dome unlocked")
    sensor = add_const(copy, "sicbo/events.py", "S_", "S_DOME_LOCK", "the dome's lock")
    add_last(copy, "sicbo/events.py", "R_", "R_DOME_UNLOCKED", "no shaking unless locked")
    insert_before_close(copy, "sicbo/texts.py", "_TEXTS = (", "\n)\n",
                        '    "refused: no shaking unless the dome is locked\\n"  # R_DOME_UNLOCKED')
    insert_before_close(copy, "sicbo/texts.py", "_CODES = bytes((", "\n))\n",
                        "    E.R_DOME_UNLOCKED,")
    text = read(copy, "sicbo/texts.py")
    names = re.search(r"^SENSOR_NAMES = \((.*?)\)", text, re.M | re.S)
    assert names.group(1).count('"') == 2 * sensor, "SENSOR_NAMES is not by sensor id"
    edit(copy, "sicbo/texts.py", names.group(0), names.group(0)[:-1] + ', "dome_lock")')
    edit(copy, "controller.py", "  # S.SUPERVISOR\n",
         "  # S.SUPERVISOR\n    (E.EV_LOCK_ON, E.EV_LOCK_OFF, 0, E.S_DOME_LOCK),  # S.DOME_LOCK\n")
    rel = "sicbo/roundmachine.py"
    edit(copy, rel, "        elif ev == E.EV_VOID:\n",
         "        elif ev == E.EV_LOCK_ON or ev == E.EV_LOCK_OFF:\n"
         "            self.levels[S.DOME_LOCK] = 1 if ev == E.EV_LOCK_ON else 0\n"
         "        elif ev == E.EV_VOID:\n")
    edit(copy, rel, "            else:\n                self._start()\n",
         "            elif not lv[S.DOME_LOCK]:\n"
         "                self._refuse(E.R_DOME_UNLOCKED)\n"
         "            else:\n                self._start()\n")
    edit(rig, "appkit.py", '"key_face_6": 0,\n}', '"key_face_6": 0, "dome_lock": 4,\n}')
    edit(rig, "appkit.py", '"clasp_right", "shake")', '"clasp_right", "shake", "dome_lock")')


def test_a_new_level_is_kept_by_the_round_and_read_again_at_boot(tmp_path):
    copy = firmware_copy(tmp_path)
    rig = copy_tree(LOGIC, tmp_path / "logic")
    add_dome_lock_level(copy, rig)
    write_tables(copy)
    on_copy(copy, """
        import controller
        from appkit import Table, reboot

        from sicbo import events as E
        from sicbo import records as R
        from sicbo import signals as S

        assert S.INPUT_SIGNALS[S.DOME_LOCK] == "dome_lock" and S.DOME_LOCK < S.LEVELS
        assert S.INPUT_SIGNALS[S.KEY_CONFIRM] == "key_confirm"  # the keys moved along
        k = 4 * S.DOME_LOCK
        assert tuple(controller.INPUTS[k:k + 4]) == (E.EV_LOCK_ON, E.EV_LOCK_OFF, 0,
                                                     E.S_DOME_LOCK)

        def refusals(t, seq):
            return [r.p(0) for r in t.journal() if r.seq > seq and r.type == R.J_REFUSED]

        t = Table()
        t.close_dome()
        seq = t.m.seq
        t.press("shake")
        assert t.state() == E.ST_IDLE and refusals(t, seq) == [E.R_DOME_UNLOCKED]
        t.set("dome_lock", 1)
        t.run(60)
        assert t.m.levels[S.DOME_LOCK] == 1
        t.press("shake")
        t.run(2000)
        assert t.state() == E.ST_OPEN
        t.press("key_bell")
        t.set("cover", 0)
        t.run(60)
        t.enter(1, 2, 3)  # the keys, renumbered, still act
        assert t.state() == E.ST_PAYING
        t.press("key_payout")
        assert t.state() == E.ST_IDLE
        # A boot reads the level as it is now: still locked, the next round starts.
        t2 = reboot(t)
        assert t2.m.damaged == 0 and t2.m.levels[S.DOME_LOCK] == 1, (t2.m.damaged, t2.m.levels)
        seq = t2.m.seq
        t2.play(4, 5, 6)
        assert refusals(t2, seq) == [], refusals(t2, seq)
        # Unlocked while the table was off: refused after the next boot.
        t2.set("dome_lock", 0)
        t3 = reboot(t2)
        assert t3.m.levels[S.DOME_LOCK] == 0 and t3.state() == E.ST_IDLE, (t3.m.levels, t3.state())
        t3.close_dome()
        seq = t3.m.seq
        t3.press("shake")
        assert t3.state() == E.ST_IDLE, t3.state()
        assert refusals(t3, seq) == [E.R_DOME_UNLOCKED], refusals(t3, seq)
        t3.close()
        """, rig=rig)


def test_a_sensor_id_of_16_is_refused_where_the_input_table_is_built(tmp_path):
    copy = firmware_copy(tmp_path)
    sensor = add_tilt_sensor(copy)
    edit(copy, "sicbo/events.py", "S_TILT = const(%d)" % sensor, "S_TILT = const(16)")
    on_copy(copy, """
        try:
            import controller  # noqa: F401
        except ValueError as e:
            assert "sensor id 16 is not below 16" in str(e), e
        else:
            raise AssertionError("a sensor id of 16 was taken")
        """)


# ---- A bet area --------------------------------------------------------------------


def add_straight_areas(copy):
    """A kind of bet, the straight (three numbers in a row; the lowest
    named: STRAIGHT_1 .. STRAIGHT_4, 30 to 1): its kind and the 2004
    edition's area count in sicbo/kinds.py; its name, parameters, legal
    odds, code and hits() in sicbo/areas.py."""
    rel = "sicbo/kinds.py"
    text = read(copy, rel)
    four = re.search(r"^FOUR = const\((\d+)\).*$", text, re.M)
    edit(copy, rel, four.group(0) + "\n", "%s\nSTRAIGHT = const(%d)  # three numbers in a row\n"
         % (four.group(0), int(four.group(1)) + 1))
    count = re.search(r"^AREA_COUNT_2004 = const\((\d+)\)", text, re.M)
    edit(copy, rel, count.group(0), "AREA_COUNT_2004 = const(%d)" % (int(count.group(1)) + 4))
    rel = "sicbo/areas.py"
    text = read(copy, rel)
    insert_before_close(copy, rel, "KIND_NAMES = (", "\n)\n", '    "Straight",')
    odds = re.search(r"^_KIND_ODDS = const\(\((.*)\)\)$", text, re.M)
    edit(copy, rel, odds.group(0), "_KIND_ODDS = const((%s, 30))" % odds.group(1))
    edit(copy, rel, "    return bytes(kinds), bytes(params)\n",
         "    for a in range(1, 5):\n        add(K.STRAIGHT, a)\n"
         "    return bytes(kinds), bytes(params)\n")
    prefix = re.search(r"^_PREFIX = const\(\((.*?)\)\)$", text, re.M | re.S)
    edit(copy, rel, prefix.group(0), prefix.group(0)[:-2] + ', "STRAIGHT"))')
    numbers = re.search(r'^_NUMBERS = const\(b"(.*)"\)$', text, re.M)
    edit(copy, rel, numbers.group(0), numbers.group(0)[:-2] + '\\x01")')
    edit(copy, rel, '    raise ValueError("unknown area kind")',
         "    if kind == K.STRAIGHT:\n"
         "        return 1 if (_count(a, d1, d2, d3) == 1 and _count(a + 1, d1, d2, d3) == 1\n"
         "                     and _count(a + 2, d1, d2, d3) == 1) else 0\n"
         '    raise ValueError("unknown area kind")')


def test_a_new_bet_area_settles_lights_its_lamp_and_is_drawn(tmp_path):
    copy = firmware_copy(tmp_path)
    add_straight_areas(copy)
    # host_tools/layout_svg.py's cloth: a strip of them (in a copy of the host
    # tools, which take the copy's firmware from SICBO_DEVICE_DIR).
    host = tmp_path / "host"
    copy_tree(os.path.join(REPO, "host_tools"), host / "host_tools")
    edit(str(host), "host_tools/layout_svg.py", '        self.label(y + 12, "SINGLE NUMBERS")\n',
         "        if self.edition == kinds.EDITION_2004:\n"
         '            self.label(y + 12, "STRAIGHTS: THREE NUMBERS IN A ROW")\n'
         "            y += 18\n"
         "            straights = [areas.code(i) for i in range(kinds.AREA_COUNT_2004)\n"
         "                         if areas.kind_of(i) == kinds.STRAIGHT]\n"
         "            self.strip(y, 66, straights, lambda code: self._faces(\n"
         "                code, tuple(range(int(code[-1]), int(code[-1]) + 3))))\n"
         "            y += 66 + 10\n"
         '        self.label(y + 12, "SINGLE NUMBERS")\n')
    on_copy(copy, """
        import host_tools
        from appkit import AREAS, Table, table_dict

        from host_tools import layout_svg
        from sicbo import areas, config
        from sicbo import events as E

        assert host_tools.__file__.startswith(%r), host_tools.__file__
        i = areas.index_of("STRAIGHT_2")
        assert i >= 0 and areas.code(i) == "STRAIGHT_2" and areas.base_odds(i) == 30
        assert areas.KIND_NAMES[areas.kind_of(i)] == "Straight"
        hits = [areas.hits(i, *d) for d in ((2, 3, 4), (4, 2, 3), (2, 3, 3), (1, 2, 3),
                                            (3, 4, 5), (2, 4, 4))]
        assert hits == [1, 1, 0, 0, 0, 0], hits
        # Not an area of the 2003 edition.
        try:
            config.parse_table(table_dict(edition=2003, offered=["STRAIGHT_2"],
                                          lamp_order=["STRAIGHT_2"], triple_kills=[]))
        except config.ConfigError as e:
            assert "not in the 2003 edition" in str(e), e
        else:
            raise AssertionError("a 2003 table offered STRAIGHT_2")

        # The table file: offered, with its lamp segment.
        order = ["PLACE_BETS", "ALARM", "VOID", "PAYING"] + AREAS + ["STRAIGHT_2"]
        t = Table(table=table_dict(offered=AREAS + ["STRAIGHT_2"], lamp_order=order))
        assert (i, 30) in t.table.winning_areas(4, 2, 3)
        assert i not in [a for a, _odds in t.table.winning_areas(3, 4, 5)]
        t.to_result()
        t.enter(4, 2, 3)
        assert t.state() == E.ST_PAYING and "STRAIGHT_2" in t.lit(), t.lit()
        t.press("key_payout")
        assert t.m.meters.as_dict(t.table)["wins"]["STRAIGHT_2"] == 1
        t.to_result()
        t.enter(3, 4, 5)
        assert t.state() == E.ST_PAYING and "STRAIGHT_2" not in t.lit(), t.lit()
        t.press("key_payout")
        assert t.m.meters.as_dict(t.table)["wins"]["STRAIGHT_2"] == 1
        svg = layout_svg.render(t.cfg, t.table, (2, 3, 4))
        assert 'id="area-STRAIGHT_2" data-area="STRAIGHT_2" data-lit="1"' in svg
        assert 'id="area-STRAIGHT_3" data-area="STRAIGHT_3" data-lit="0" data-offered="0"' in svg
        t.close()
        """ % str(host), host=str(host))


# ---- A lamp driver -----------------------------------------------------------------

GPIO_LAMPS = '''

class GpioLamps:
    """GpioLamps(pins, row_bytes): one output Pin a channel (a small table's
    lamps driven directly); channels beyond the pins are not shown."""

    def __init__(self, pins, row_bytes):
        if row_bytes <= 0:
            raise ValueError("row_bytes must be > 0")
        self._pins = pins
        self.row_bytes = row_bytes
        self.frames = 0
        self.write(bytearray(row_bytes))

    def write(self, frame):
        if len(frame) != self.row_bytes:
            raise ValueError("lamp frame has %d bytes, expected %d" % (len(frame), self.row_bytes))
        last = self.row_bytes - 1
        pins = self._pins
        for c in range(len(pins)):
            pins[c].value((frame[last - (c >> 3)] >> (c & 7)) & 1)
        self.frames += 1
'''


def add_gpio_lamps(copy):
    """A lamp bus "gpio" (one output pin a channel): the class in hw/lamps.py,
    chosen in hw/build.lamps from the board file's lamps.bus, validated in
    sicbo/board.py (its fields, and a table with more channels than pins
    refused, as a WS2812 strip with fewer LEDs is)."""
    write(copy, "hw/lamps.py", read(copy, "hw/lamps.py") + GPIO_LAMPS)
    edit(copy, "hw/build.py", "    from neopixel import NeoPixel\n",
         '    if lb["bus"] == "gpio":\n'
         "        from hw.lamps import GpioLamps\n\n"
         '        return GpioLamps([Pin(p, Pin.OUT, value=0) for p in lb["pins"]], row_bytes)\n'
         "    from neopixel import NeoPixel\n")
    rel = "sicbo/board.py"
    edit(copy, rel, 'LAMP_BUSES = ("hc595", "neopixel")',
         'LAMP_BUSES = ("hc595", "neopixel", "gpio")')
    edit(copy, rel, '    _known(obj, "lamps", _NEOPIXEL_FIELDS)\n',
         '    if bus == "gpio":\n'
         '        _known(obj, "lamps", ("bus", "pins"))\n'
         '        wired = obj.get("pins")\n'
         "        if not isinstance(wired, list) or not wired:\n"
         '            raise ConfigError("lamps.pins", "must be a list of GPIO numbers, one a '
         'lamp channel")\n'
         '        return {"bus": bus, "pins": [pins.take("lamps.pins[%d]" % k, wired[k], True)\n'
         "                                     for k in range(len(wired))]}\n"
         '    _known(obj, "lamps", _NEOPIXEL_FIELDS)\n')
    neopixel = '    if lamps.get("bus") == "neopixel" and lamps["count"] < len(cfg.lamp_order):'
    edit(copy, rel, neopixel,
         '    if lamps.get("bus") == "gpio" and len(lamps["pins"]) < len(cfg.lamp_order):\n'
         '        raise ConfigError("lamps.pins", "%d pins for the table\'s %d lamp channels"\n'
         '                          % (len(lamps["pins"]), len(cfg.lamp_order)))\n'
         + neopixel)


def test_a_new_lamp_driver_shows_the_round_on_its_pins(tmp_path):
    copy = firmware_copy(tmp_path)
    add_gpio_lamps(copy)
    on_copy(copy, """
        import machine
        from appkit import Table, board_dict, table_dict

        from sicbo import board as B
        from sicbo import config
        from sicbo import events as E

        def refusal(lamps):
            b = board_dict()
            b["lamps"] = lamps
            try:
                B.parse_board(b)
            except config.ConfigError as e:
                return str(e)
            raise AssertionError("accepted: %r" % (lamps,))

        assert "lamps.pins" in refusal({"bus": "gpio"})
        assert "lamps.pins[1]" in refusal({"bus": "gpio", "pins": [4, 25]})  # the solenoid's
        assert "lamps.sck" in refusal({"bus": "gpio", "pins": [4], "sck": 18})

        # A small table on six pins (the reader's UART freed for two of them).
        pins = [4, 16, 17, 18, 19, 23]
        b = board_dict()
        del b["reader"]
        b["lamps"] = {"bus": "gpio", "pins": pins}
        order = ["PLACE_BETS", "ALARM", "VOID", "PAYING", "SMALL", "BIG"]
        small = table_dict(offered=["SMALL", "BIG"], lamp_order=order)
        try:
            wider = config.parse_table(dict(small, lamp_order=order + [None]))
            B.check_table(B.parse_board(b), wider)
        except config.ConfigError as e:
            assert "6 pins for the table's 7 lamp channels" in str(e), e
        else:
            raise AssertionError("a table of more channels than pins was accepted")

        def lit():
            return [order[c] for c in range(len(pins)) if machine.sim_output(pins[c])]

        t = Table(board=b, table=small)
        assert type(t.hw.lamps).__name__ == "GpioLamps"
        assert lit() == [], lit()
        t.open_round()
        assert lit() == ["PLACE_BETS"], lit()
        t.press("key_bell")
        t.set("cover", 0)
        t.run(60)
        t.enter(1, 2, 3)
        assert t.state() == E.ST_PAYING and lit() == ["PAYING", "SMALL"], lit()
        t.press("key_payout")
        assert lit() == [], lit()
        t.close()
        """)
