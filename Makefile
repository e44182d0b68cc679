# The two commands of the README: `make run` and `make test`. Both set up the
# project first (a .venv with every pinned dependency, the ESP32 stubs in typings/).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.setup-done
# The pip port (64-bit) for the settlement bench: speed and allocation, not the
# board's memory (that is the 32-bit VM's, host_tools/heaps.py).
MPY    := $(BIN)/micropython -X heapsize=110k

# The ESP32-faithful test VM (host_tools/vm32.py): a 32-bit unix port built
# from MICROPYTHON_SRC, a MicroPython v1.28.0 source tree or tarball.
MICROPYTHON_SRC ?=
export MICROPYTHON_SRC
# The host tests run in TEST_JOBS processes (pytest-xdist), each test file in
# one of them: most of their time is spent waiting for a virtual board, a
# broker or a browser, not computing.
TEST_JOBS ?= 4
# Except diag in every state at the board's heap on the virtual board, run
# after them on its own: beside three other test processes its heap came out
# in pieces (a 1.8 KB or 2 KB allocation refused with 35 KB free) in about
# one run of five, never alone.
DIAG_STATES := tests/host/test_diag_states.py
VM32        := build/vm32/sim/micropython
VM32_FROZEN := build/vm32/frozen/micropython

.PHONY: setup run test test-py test-mp test-board lint typecheck mpy-check bench soak clean \
        vm32 vm32-frozen vm32-if-src mutate

setup: $(STAMP)

$(STAMP): requirements.lock requirements-stubs.lock pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
	rm -rf typings && $(BIN)/python -m pip install -q --disable-pip-version-check \
	    --target typings -r requirements-stubs.lock
	@touch $@

# With mosquitto installed the demo also starts a broker and the floor service
# beside the table and shows each round the floor stores; without it, it says
# so in one line and plays.
run: setup
	$(BIN)/sicbo demo --floor

lint: setup
	$(BIN)/ruff check .

mpy-check: setup
	$(BIN)/python -m host_tools.mpycheck device sim

typecheck: setup
	MYPYPATH=device $(BIN)/mypy --config-file device/mypy.ini device
	$(BIN)/mypy

test-py: setup
	$(BIN)/pytest tests --ignore=tests/board --ignore=$(DIAG_STATES) -n $(TEST_JOBS) \
	    --dist loadfile --durations=60
	$(BIN)/pytest $(DIAG_STATES) --durations=5

test-mp: setup
	$(BIN)/python -m host_tools.mprun tests/logic

vm32: setup
	$(BIN)/python -m host_tools.vm32

vm32-frozen: setup
	$(BIN)/python -m host_tools.vm32 --frozen

# The gate at the board's heap (111,936 bytes), on the 32-bit VMs: the logic
# tests with the firmware as .mpy (as sicbo deploy installs it); every test,
# the controller's included, on the production image (firmware frozen); then
# real boots through main.py on the virtual board (tests/board). The
# controller tests load the test rig and the test code beside the firmware,
# which a board does not: as .mpy they do not fit beside it.
test-board: setup
	@if [ -z "$(MICROPYTHON_SRC)" ]; then \
	    echo "ESP32-heap gate SKIPPED: no MicroPython source; run make test MICROPYTHON_SRC=../shared/vendor/micropython-1.28.0.tar.gz (needs gcc-multilib)"; \
	else \
	    $(BIN)/python -m host_tools.vm32 && $(BIN)/python -m host_tools.vm32 --frozen && \
	    $(BIN)/python -m host_tools.mprun --micropython $(VM32) --skip-controller tests/logic && \
	    $(BIN)/python -m host_tools.mprun --micropython $(VM32_FROZEN) tests/logic && \
	    SICBO_VM32=$(VM32) SICBO_VM32_FROZEN=$(VM32_FROZEN) SICBO_REQUIRE_VM32=1 \
	        $(BIN)/pytest tests/board -n 3 --dist loadfile --durations=20; \
	fi

# The 32-bit VMs, when MicroPython's source is given: the host tests run the
# link's client on them too (tests/host/test_link_*.py), so they are built
# before test-py, not only by test-board.
vm32-if-src: setup
	@if [ -n "$(MICROPYTHON_SRC)" ]; then \
	    $(BIN)/python -m host_tools.vm32 && $(BIN)/python -m host_tools.vm32 --frozen; fi

# Every gate; make stops at the first that fails.
test: lint mpy-check typecheck vm32-if-src test-py test-mp test-board

# Figures, not pass/fail. The controller bench runs at the board's heap
# (host_tools/heaps.py): 111936 bytes on the 32-bit VM when it is built, and
# the measured 64-bit equivalent on the pip port. board_heap bisects the
# smallest heap that boots on a full journal and plays 1,000 rounds with power
# cuts, on the 32-bit VM (.mpy and frozen) and the 64-bit port. The floor
# link (bench_link: the link's own figures, then the whole table's: journaled
# -> stored over TLS, a full backlog's drain, the boot on it) and the floor
# service (bench_floor: ingest of 200 tables, latency) need mosquitto, the
# floor view (bench_floor_web) mosquitto and Chromium: without them each says
# so in one line.
bench: setup
	$(BIN)/python -c "from host_tools.mprun import compile_trees; compile_trees()"
	$(MPY) bench/bench_settle.py
	@if [ -n "$(MICROPYTHON_SRC)" ]; then \
	    $(BIN)/python -m host_tools.vm32 && $(BIN)/python -m host_tools.vm32 --frozen; fi
	-$(BIN)/micropython -X heapsize=$$($(BIN)/python -c "from host_tools import heaps; print(heaps.HEAP_64_EQUIVALENT)") bench/bench_controller.py
	-@if [ -x $(VM32) ]; then set -x; $(VM32) -X heapsize=$$($(BIN)/python -c "from host_tools import heaps; print(heaps.BOARD_HEAP)") bench/bench_controller.py; fi
	$(BIN)/python bench/board_heap.py --all
	$(BIN)/python bench/bench_deploy.py
	$(BIN)/python bench/bench_link.py
	$(BIN)/python bench/bench_floor.py
	$(BIN)/python bench/bench_floor_web.py

# The long runs of the reliability campaign (about 25 minutes; figures and what
# they prove: README.md, Reliability). `make test` runs short versions of each.
# The soak and the power-cut campaign run at the board's heap for their
# interpreter (host_tools/heaps.py); the in-process soak with power cuts keeps
# every reboot's garbage in one interpreter, which a board's reset does not.
soak: setup
	$(BIN)/python bench/soak.py 100000 5 0
	SICBO_SOAK_HEAP=400k $(BIN)/python bench/soak.py 100000
	$(BIN)/python bench/powercut_vboard.py --rounds 1000
	SICBO_FUZZ_EXAMPLES=20000 SICBO_STATEFUL_EXAMPLES=2000 $(BIN)/pytest -s \
	    tests/host/test_fuzz.py tests/host/test_round_stateful.py

# Mutation testing (figures): a seeded sample of single-point mutations of
# device/, each run against the tests that import the mutated module.
# make mutate MUTATE="--min-score 90" makes it a gate.
MUTATE ?=
mutate: setup
	$(BIN)/python -m host_tools.mutate --seed 1 --sample 200 --jobs 2 $(MUTATE)

clean:
	rm -rf $(VENV) typings build .pytest_cache .mypy_cache .ruff_cache .hypothesis
