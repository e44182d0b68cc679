# The two commands of the README: `make run` and `make test`. Both set up the
# project first (a .venv with every pinned dependency, the ESP32 stubs in typings/).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.setup-done
# An ESP32-sized heap: a real MemoryError where the board would raise one.
MPY    := $(BIN)/micropython -X heapsize=110k

.PHONY: setup run test test-py test-mp lint typecheck mpy-check bench soak clean

setup: $(STAMP)

$(STAMP): requirements.lock requirements-stubs.lock pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
	rm -rf typings && $(BIN)/python -m pip install -q --disable-pip-version-check \
	    --target typings -r requirements-stubs.lock
	@touch $@

run: setup
	$(BIN)/sicbo demo

lint: setup
	$(BIN)/ruff check .

mpy-check: setup
	$(BIN)/python -m host_tools.mpycheck device

typecheck: setup
	MYPYPATH=device $(BIN)/mypy --config-file device/mypy.ini device
	$(BIN)/mypy

test-py: setup
	$(BIN)/pytest tests

test-mp: setup
	$(BIN)/python -m host_tools.mprun --heap 110k tests/logic

# Every gate; make stops at the first that fails.
test: lint mpy-check typecheck test-py test-mp

# Figures, not pass/fail. The controller bench runs at 110k (where it shows
# how far the 64-bit port is from fitting) and at 220k, the 64-bit equivalent.
bench: setup
	$(MPY) bench/bench_settle.py
	$(BIN)/python -c "from host_tools.mprun import compile_trees; compile_trees()"
	-$(MPY) bench/bench_controller.py
	$(BIN)/micropython -X heapsize=220k bench/bench_controller.py
	$(BIN)/python bench/bench_deploy.py

# The long runs of the reliability campaign (about 25 minutes; figures and what
# they prove: README.md, Reliability). `make test` runs short versions of each.
soak: setup
	SICBO_SOAK_HEAP=220k $(BIN)/python bench/soak.py 100000 5 0
	SICBO_SOAK_HEAP=400k $(BIN)/python bench/soak.py 100000
	$(BIN)/python bench/powercut_vboard.py --rounds 1000
	SICBO_FUZZ_EXAMPLES=20000 SICBO_STATEFUL_EXAMPLES=2000 $(BIN)/pytest -s \
	    tests/host/test_fuzz.py tests/host/test_round_stateful.py

clean:
	rm -rf $(VENV) typings build .pytest_cache .mypy_cache .ruff_cache .hypothesis
