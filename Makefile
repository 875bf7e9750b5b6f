# memcached-ac / acbench. `make demo` and `make test` do all set-up on a fresh
# machine (Debian packages and Python packages are installed when missing).
TOP := $(abspath .)
BUILD := $(TOP)/build
export TOP
# Component directories with a Makefile of their own (deps/all/test/bench/clean).
COMPONENTS := $(foreach d,policies ycsb-driver harness cgroups,$(if $(wildcard $(d)/Makefile),$(d)))
SRC := $(BUILD)/upstream/memcached-1.6.18
PY_PKGS := pytest pymemcache pytest-xdist
# tools the READMEs' commands use: nc (printf 'stats anticache\r\n' | nc -q1 127.0.0.1 PORT),
# memcached's client tools (memccapable, memcaslap)
TOOL_DEB_PKGS := netcat-openbsd libmemcached-tools

.PHONY: all deps test test-held bench-held test-full test-stage bench-builds bench-scaling test-times test-upstream test-upstream-none test-integration test-fuzz demo demo-server bench clean paper-smoke paper rerun soak fuzz
all: deps
	$(MAKE) -C memcached all
	@for d in $(COMPONENTS); do $(MAKE) -C $$d all || exit 1; done

deps:
	@missing=""; for p in $(TOOL_DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; fi
	$(MAKE) -C memcached deps
	@for d in $(COMPONENTS); do $(MAKE) -C $$d deps || exit 1; done
	@python3 -c "import pytest, pymemcache, xdist" 2>/dev/null || pip install -q $(PY_PKGS)

# make test: each stage timed, the table printed at the end (also when a stage fails).
# test-full: everything make test runs, plus the integration variants it leaves out (marked
# `full`: the same checks over more pairs, whose defects faster tests already catch;
# memcached/tests/README.md lists each with the test that catches its bug).
STAGES := $(BUILD)/test-stages.txt
STAGE = $(MAKE) --no-print-directory test-stage STAGE_NAME=$(1) STAGE_TARGET="$(2)"

# make test, bench, soak, fuzz, demo and paper-smoke hold the machine (harness/hold-machine): a grid running here
# (`acbench run`, make paper) stops its cell and waits until they are done (harness/README.md
# "Sharing the machine with a grid").
HOLD := $(TOP)/harness/hold-machine
test: all
	@$(HOLD) $(MAKE) --no-print-directory test-held

test-held:
	@mkdir -p $(BUILD) && rm -f $(STAGES) && echo "start 0 $$(date +%s)" > $(STAGES)
	@for d in $(COMPONENTS); do $(call STAGE,$$d,-C $$d test) || exit 1; done
	@$(call STAGE,integration,test-integration)
	@$(call STAGE,fuzz-smoke,test-fuzz)
	@$(call STAGE,upstream-suite,test-upstream)
	@$(MAKE) --no-print-directory test-times

# One stage of make test: runs STAGE_TARGET, appends "STAGE_NAME SECONDS STATUS" to $(STAGES); a
# failed stage prints the table so far and fails.
# A stage that leaves vm.page-cluster changed is named on stderr (every fixture restores it).
test-stage:
	@t0=$$(date +%s); pc0=$$(cat /proc/sys/vm/page-cluster); $(MAKE) --no-print-directory $(STAGE_TARGET); rc=$$?; \
	pc1=$$(cat /proc/sys/vm/page-cluster); [ "$$pc0" = "$$pc1" ] || \
	  echo "make test: WARNING: stage $(STAGE_NAME) left vm.page-cluster=$$pc1 (it was $$pc0)" >&2; \
	echo "$(STAGE_NAME) $$(( $$(date +%s) - t0 )) $$rc" >> $(STAGES); \
	if [ $$rc -ne 0 ]; then $(MAKE) --no-print-directory test-times; fi; exit $$rc

test-full: all
	$(MAKE) test INTEGRATION_MARKS= UPSTREAM_SET=all

# The table of make test's stages so far, and the total wall time.
test-times:
	@echo "make test, wall time per stage:"
	@awk -v now=$$(date +%s) 'NR == 1 { start = $$3; next } \
	  { printf "  %-16s %5d s  %s\n", $$1, $$2, ($$3 == 0 ? "" : "FAILED"); sum += $$2 } \
	  END { w = now - start; printf "  %-16s %5d s  (%d min %d s since make test started, the build before it not counted)\n", \
	  "stages", sum, int(w / 60), w % 60 }' $(STAGES)

# Two workers (pytest-xdist): tests that change or read machine-wide state (vm.page-cluster,
# swap, major faults) go to one worker, one at a time (memcached/tests/conftest.py).
INTEGRATION_MARKS ?= not full
test-integration: all
	python3 -m pytest -q -n 2 --dist loadgroup --durations=25 $(if $(INTEGRATION_MARKS),-m "$(INTEGRATION_MARKS)") memcached/tests

# A one-minute fuzz smoke (ASan + UBSan build of memcached-ac, libFuzzer; fuzz/README.md) and
# every kept regression input.
test-fuzz: all
	$(MAKE) -C fuzz deps
	$(MAKE) -C fuzz smoke

# Not in CI: at least 10 million fuzz inputs (fuzz/README.md for the split and the duration).
fuzz: all
	$(MAKE) -C fuzz deps
	$(HOLD) $(MAKE) -C fuzz -j2 long

# Not in CI: 30 minutes per approach of the mixed-size many-client load at 8x overcommit, all
# approaches at once (memcached/soak/README.md), then memcaslap with verification against lru.
SOAK_ARGS ?= --jobs 7
soak: all
	$(HOLD) sh -c 'python3 memcached/soak/soak.py $(SOAK_ARGS) && memcached/soak/memcaslap.sh'

# memcached's own suite (prove t/) on the fork: stock (ac_policy none) and under the policies
# that spill and serve the network, as the binary lists them (-o ac_list: memcached/ac_list.py
# spill-policies; lru, alru, logging today). make test runs the first of them (lru), make test-full
# every one (UPSTREAM_SET=all): what alru's and logging's hooks could break under memcached's
# commands, faster tests catch (memcached/tests/README.md, "make test and make test-full").
# memcached/upstream-skip.txt lists the files skipped under a spilling policy, each with its reason.
# test-upstream-POLICY runs one.
# The suite is mostly sleeps (37 CPU-s in 232 s at -j2): UPSTREAM_JOBS files at once, the slowest
# started first (memcached/upstream-order.sh), take about as long as its longest file; and
# UPSTREAM_SUITES suites at once (stock beside lru: memcached/upstream-run.sh).
UPSTREAM_SET ?= first
UPSTREAM_JOBS ?= 6
UPSTREAM_SUITES ?= 2
export UPSTREAM_JOBS UPSTREAM_SUITES
UPSTREAM_PROVE = cd $(SRC) && prove -j$(UPSTREAM_JOBS) $$($(TOP)/memcached/upstream-order.sh t/*.t)
test-upstream: all
	$(MAKE) -s -C $(SRC) timedrun sizes testapp
	@pols=$$(python3 memcached/ac_list.py $(BUILD)/bin/memcached-ac spill-policies); \
	[ "$(UPSTREAM_SET)" = all ] || pols=$${pols%% *}; \
	memcached/upstream-run.sh $(SRC) $$pols
test-upstream-none: all
	$(MAKE) -s -C $(SRC) timedrun sizes testapp
	$(UPSTREAM_PROVE)
test-upstream-%: all
	$(MAKE) -s -C $(SRC) timedrun sizes testapp
	memcached/upstream-suite.sh $(SRC) $*

# A small real experiment: experiments/demo.toml (every approach, a few minutes) and its figures.
# demo and paper-smoke are short: they hold the machine (a long grid running here waits for them)
demo: all
	$(HOLD) $(MAKE) -C harness demo

# Not in CI (about 10 minutes: 9 min 58 s on the 2-core VM, 2026-11-28, its memory calibrations included): every approach once at the paper's scale (1M records), calibrated
# memory plan, no OOM kill allowed (experiments/paper-smoke.toml).
paper-smoke: all
	$(HOLD) $(MAKE) -C harness paper-smoke

# Not in CI (hours): the paper-scale grids (experiments/fig3-paper, fig4-paper, inmemory-paper,
# blocks-paper and compression-paper .toml, in that order; each resumes where it stopped), their
# rows committed to experiments/results/<grid>/, every notebook rendered against them into
# experiments/results/paper/.
paper: all
	$(MAKE) -C harness paper

# The paper grids rerun in pieces, each ending by STOP_BY (default +2h) with its rows staged in
# experiments/results/rerun/<machine>/ to commit, on the binaries of the revision the first piece
# pinned (built in build/rerun-pin); `python3 -m acbench rerun --status` says where it stands.
rerun: all
	$(MAKE) -C harness rerun

# The server on its own: 4x -m of data written, read back byte-exact, stats anticache.
demo-server: all
	memcached/demo.sh $(BUILD)/bin/memcached-ac

# Two builds of memcached-ac side by side (in-process, lru/alru/logging, in RAM and spilling):
# make bench-builds OLD=/path/to/old/memcached-ac [RUNS=9]
RUNS ?= 9
bench-builds: all
	@test -n "$(OLD)" || { echo "make bench-builds: OLD=/path/to/the other build's memcached-ac is required"; exit 2; }
	memcached/bench-builds.sh $(OLD) $(BUILD)/bin/memcached-ac $(RUNS)

# each policy's throughput against none as driver threads grow, up to the machine's cores (policies/Makefile)
bench-scaling: all
	$(MAKE) -C policies bench-scaling

bench: all
	$(MAKE) -C memcached stock
	@$(HOLD) $(MAKE) --no-print-directory bench-held

bench-held:
	memcached/bench.sh $(BUILD)/bin/memcached-ac $(BUILD)/bin/memcached-stock
	@for d in $(COMPONENTS); do $(MAKE) -C $$d bench || exit 1; done

clean:
	@for d in $(COMPONENTS); do $(MAKE) -C $$d clean; done
	rm -rf $(BUILD)
