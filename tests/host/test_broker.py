# The test broker itself: a real mosquitto on a free loopback port, whose
# persistence keeps retained and queued messages across a restart, and whose
# kill -9 is a crash.
import subprocess

from brokerkit import start_broker


def _pub(port, topic, text, *extra):
    r = subprocess.run(["mosquitto_pub", "-p", str(port), "-t", topic, "-m", text,
                        "-q", "1", *extra], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def _sub_one(port, topic):
    r = subprocess.run(["mosquitto_sub", "-p", str(port), "-t", topic, "-C", "1", "-W", "30"],
                       capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout.strip()


def test_retained_message_survives_a_clean_restart_on_the_same_port(tmp_path):
    b = start_broker(tmp_path / "mq")
    try:
        port = b.port
        _pub(port, "sicbo/t/status", "online", "-r")
        b.stop()
        assert not b.running()
        b.start()
        assert b.port == port
        assert _sub_one(port, "sicbo/t/status") == (0, "online")
    finally:
        b.stop()


def test_kill_is_a_crash_and_the_broker_starts_again(tmp_path):
    b = start_broker(tmp_path / "mq")
    try:
        first = b.proc.pid
        b.kill()
        assert not b.running()
        b.restart()
        assert b.running() and b.proc.pid != first
        _pub(b.port, "x", "y")  # it serves again
        assert "running" in b.log()
    finally:
        b.stop()
