# linklab - plain Makefile (see README.md).
#   make            build build/linklab (installs missing build deps first)
#   make check      unit tests under ASan/UBSan, lab tests, console tests
#   make demo       two-namespace lab + console (root); TOPO=bridge: A - middle
#                   box - B; ENGINE=auto|kernel|user: the console starts the bridge
#   make bench      speed figures against iperf3 and tc, same run
PREFIX  ?= /usr/local
DESTDIR ?=
CC      ?= cc
BUILD   := build

PKGS    := libnl-route-3.0 libssh2 ncursesw libcjson
WARN    := -Wall -Wextra -Werror -Wformat=2 -Wshadow -Wstrict-prototypes \
           -Wmissing-prototypes -Wold-style-definition -Wwrite-strings \
           -Wpointer-arith -Wundef -Wvla -Wno-missing-field-initializers
CFLAGS  ?= -O2 -g
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -Iinclude \
           $(shell pkg-config --cflags $(PKGS) 2>/dev/null) -I/usr/include/iniparser
LDLIBS  = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -liniparser -lpthread -lm

# src/LAYER/*.c: one folder per layer (doc/architecture.md); the console's
# screens (src/tui/) are the only curses code and stay out of the unit library.
CORE_SRC := $(filter-out src/tui/%,$(wildcard src/*/*.c))
TUI_SRC  := $(wildcard src/tui/*.c)
CORE_OBJ := $(CORE_SRC:src/%.c=$(BUILD)/obj/%.o)
TUI_OBJ  := $(TUI_SRC:src/%.c=$(BUILD)/obj/%.o)
HDRS     := $(wildcard include/linklab/*/*.h src/tui/*.h)

SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
ASAN_OBJ := $(CORE_SRC:src/%.c=$(BUILD)/asan/%.o)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/asan/tests/%)

.PHONY: all deps check unit lab-test tui-test demo demo-down lab-up lab-down \
        bench install clean layering fuzz fuzz-check \
        exitpaths-test

all: $(BUILD)/.deps $(BUILD)/linklab

deps $(BUILD)/.deps: scripts/deps.sh
	@sh scripts/deps.sh
	@mkdir -p $(BUILD) && touch $(BUILD)/.deps

$(BUILD)/obj/%.o: src/%.c $(HDRS) | $(BUILD)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/linklab: $(BUILD)/obj/main.o $(CORE_OBJ) $(TUI_OBJ)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

# --- unit tests: core objects rebuilt with ASan/UBSan -----------------------
$(BUILD)/asan/%.o: src/%.c $(HDRS) | $(BUILD)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -c $< -o $@

$(BUILD)/asan/libcore.a: $(ASAN_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/asan/tests/%: tests/unit/%.c $(BUILD)/asan/libcore.a $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -Itests/unit -o $@ $< $(BUILD)/asan/libcore.a \
		$(LDLIBS) -lcmocka

unit: $(BUILD)/.deps $(UNIT_BIN)
	@sh tests/run-unit.sh $(UNIT_BIN)

lab-test: all
	@sh tests/lab/run.sh

tui-test: all
	@sh tests/tui/run.sh

# every exit path restores both peers (lab + console under tmux)
exitpaths-test: all
	@sh tests/lab/exitpaths.sh; a=$$?; sh tests/tui/exitpaths.sh; b=$$?; [ $$a = 0 ] && [ $$b = 0 ]

layering:
	@sh scripts/check-layering.sh

check: all
	@sh tests/run-all.sh

# --- fuzz targets (libFuzzer, clang): the control-message, params and
# results parsers of the iperf3 protocol. `make fuzz` builds them;
# `make fuzz-check` (run by `make check` first) runs each for FUZZ_SECONDS
# (default 6: about 20 s in all) from the seeds in fuzz/corpus/ and prints
# "fuzz: N passed, N failed".
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 6
FUZZ_SRC     := $(wildcard fuzz/fuzz_*.c)
FUZZ_BIN     := $(FUZZ_SRC:fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_CORE    := src/traffic/iperf3.c src/traffic/udpstats.c src/base/err.c
FUZZ_FLAGS   := -std=c11 -D_GNU_SOURCE -g -O1 -Iinclude -fsanitize=fuzzer,address,undefined \
                $(shell pkg-config --cflags libcjson 2>/dev/null)

$(BUILD)/fuzz/%: fuzz/%.c $(FUZZ_CORE) $(HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(FUZZ_CORE) \
		$(shell pkg-config --libs libcjson 2>/dev/null) -lpthread -lm

fuzz: $(FUZZ_BIN)

fuzz-check: $(FUZZ_BIN)
	@p=0; f=0; for b in $(FUZZ_BIN); do n=$${b##*/}; c=fuzz/corpus/$${n#fuzz_}; \
		w=$$(mktemp -d); cp $$c/* $$w/ 2>/dev/null; \
		if $$b -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -timeout=5 -print_final_stats=1 $$w >$$w.log 2>&1; then \
			echo "PASS: $$n ($(FUZZ_SECONDS) s, $$(grep -o 'stat::number_of_executed_units: [0-9]*' $$w.log | cut -d' ' -f2) runs)"; \
			p=$$((p+1)); \
		else echo "FAIL: $$n"; tail -n 30 $$w.log; f=$$((f+1)); fi; \
		rm -rf $$w $$w.log; done; echo "fuzz: $$p passed, $$f failed"; [ $$f = 0 ]

# --- the two-namespace lab ----------------------------------------------------
lab-up: all
	@sh lab/lab.sh up

lab-down:
	@sh lab/lab.sh down

# TOPO=bridge: peer A - middle box (linklab bridge) - peer B
TOPO ?= direct
demo: all
	@if [ "$(TOPO)" = bridge ]; then LL_DEMO_ENGINE="$(ENGINE)" sh lab/lab-bridge.sh demo; else sh lab/lab.sh demo; fi

demo-down:
	@sh lab/lab.sh down; sh lab/lab-bridge.sh down

bench: all
	@sh scripts/bench.sh

install: all
	install -D -m 0755 $(BUILD)/linklab $(DESTDIR)$(PREFIX)/bin/linklab
	install -d $(DESTDIR)$(PREFIX)/share/linklab/profiles
	install -m 0644 profiles/*.ini $(DESTDIR)$(PREFIX)/share/linklab/profiles/ 2>/dev/null || true
	@for m in doc/*.1 doc/*.5; do [ -f "$$m" ] || continue; \
		s=$${m##*.}; install -D -m 0644 $$m $(DESTDIR)$(PREFIX)/share/man/man$$s/$${m##*/}; done

clean:
	rm -rf $(BUILD)
