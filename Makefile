# linklab - plain Makefile (see README.md).
#   make            build build/linklab (never installs anything)
#   make deps       install the missing Debian packages (apt-get; root)
#   make check      deps, then unit tests under ASan/UBSan, lab tests, console
#                   tests; warnings are errors (WERROR=1)
#   make demo       deps, then the two-namespace lab + console (root);
#                   TOPO=bridge: A - middle box - B; ENGINE=auto|kernel|user
#   make bench      build/linklab-bench, then speed figures against iperf3
#                   and tc, same run
#   make install / uninstall   PREFIX (/usr/local), DESTDIR
#   make lab-run lab-interop lab-ssh lab-bridge lab-bridgectl lab-impair
#        tui-test lint layering unit fuzz-check   one suite each;
#        tui-NAME one console scenario (tests/tui/NAME.sh)
# CPPFLAGS, CFLAGS and LDFLAGS are honoured; WERROR=1 adds -Werror.
PREFIX  ?= /usr/local
DESTDIR ?=
CC      ?= cc
BUILD   := build

PKGS    := libnl-route-3.0 libssh2 ncursesw libcjson libnetfilter_queue
WARN    := -Wall -Wextra -Wformat=2 -Wshadow -Wstrict-prototypes \
           -Wmissing-prototypes -Wold-style-definition -Wwrite-strings \
           -Wpointer-arith -Wundef -Wvla -Wno-missing-field-initializers
ifeq ($(WERROR),1)
WARN    += -Werror
endif
CFLAGS  ?= -O2 -g
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) $(CPPFLAGS) $(CFLAGS) -Iinclude \
           $(shell pkg-config --cflags $(PKGS) 2>/dev/null) -I/usr/include/iniparser
LDLIBS  = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -liniparser -lpthread -lm
DEPFLAGS = -MMD -MP

# src/LAYER/*.c: one folder per layer (doc/architecture.md); the console's
# screens (src/tui/) are the only curses code and stay out of the unit library.
# The bench commands (src/cli/bench*.c, cmd_bench_*.c) are a program of their
# own, build/linklab-bench, not part of the shipped binary.
BENCH_SRC := $(wildcard src/cli/bench*.c src/cli/cmd_bench_*.c)
CORE_SRC := $(filter-out src/tui/% $(BENCH_SRC),$(wildcard src/*/*.c))
TUI_SRC  := $(wildcard src/tui/*.c)
CORE_OBJ := $(CORE_SRC:src/%.c=$(BUILD)/obj/%.o)
TUI_OBJ  := $(TUI_SRC:src/%.c=$(BUILD)/obj/%.o)
BENCH_OBJ := $(BENCH_SRC:src/%.c=$(BUILD)/obj/%.o)

SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
ASAN_OBJ := $(CORE_SRC:src/%.c=$(BUILD)/asan/%.o)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/asan/tests/%)

LAB_SUITES := run interop ssh bridge bridgectl impair restore rpm verify ansible engine hostile exitpaths
LAB_TARGETS := $(LAB_SUITES:%=lab-%)

.PHONY: all deps check unit lab-test tui-test lint demo demo-down lab-up lab-down \
        bench bench-bin install uninstall clean layering fuzz fuzz-check restore-test freeze-test hostile-test tui-input-test exitpaths-test \
        $(LAB_TARGETS)

all: $(BUILD)/linklab

# The only target that installs anything. The stamp lets the targets that
# need the packages (check, demo, the lab suites, bench) run it once per
# build directory; `make deps` always runs it.
deps:
	@sh scripts/deps.sh
	@mkdir -p $(BUILD) && touch $(BUILD)/.deps

$(BUILD)/.deps: scripts/deps.sh
	@sh scripts/deps.sh
	@mkdir -p $(BUILD) && touch $@

# The compile flags of the last build, in $(BUILD)/.cflags: objects are
# rebuilt when they change (e.g. `make`, then `make check` adds -Werror).
# Written while the Makefile is read, never under `make -n`.
CFLAGS_NOW = $(ALL_CFLAGS) $(SAN_FLAGS)
ifeq (,$(findstring n,$(firstword -$(MAKEFLAGS))))
$(shell mkdir -p $(BUILD); [ "$$(cat $(BUILD)/.cflags 2>/dev/null)" = '$(CFLAGS_NOW)' ] || \
	echo '$(CFLAGS_NOW)' > $(BUILD)/.cflags)
endif
$(BUILD)/.cflags: ;

$(BUILD)/obj/%.o: src/%.c $(BUILD)/.cflags
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/linklab: $(BUILD)/obj/main.o $(CORE_OBJ) $(TUI_OBJ)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/obj/libcore.a: $(CORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/linklab-bench: $(BENCH_OBJ) $(BUILD)/obj/libcore.a
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# --- unit tests: core objects rebuilt with ASan/UBSan -----------------------
$(BUILD)/asan/%.o: src/%.c $(BUILD)/.cflags
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/asan/libcore.a: $(ASAN_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/asan/tests/%: tests/unit/%.c $(BUILD)/asan/libcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) $(DEPFLAGS) -Itests/unit $(LDFLAGS) -o $@ $< \
		$(BUILD)/asan/libcore.a $(LDLIBS) -lcmocka

# Developer targets: these build what they need but install nothing (run
# `sudo make deps` once, or `make check`).
unit: $(UNIT_BIN)
	@sh tests/run-unit.sh $(UNIT_BIN)

layering:
	@sh scripts/check-layering.sh

lint:
	@sh tests/lint.sh

# The suites that need root packages (iperf3, sshd, tmux, ...): deps first
# (once per build directory), then the binary, then the suite alone.
# lab-test is the old name of lab-run.
$(LAB_TARGETS): $(BUILD)/.deps
	@$(MAKE) --no-print-directory all
	@LINKLAB=$(CURDIR)/$(BUILD)/linklab sh tests/lab/$(@:lab-%=%).sh

lab-test: lab-run
restore-test: lab-restore
freeze-test: tui-freeze
hostile-test: lab-hostile
tui-input-test: tui-input
# every exit path restores both peers (lab suite, then the console under tmux)
exitpaths-test: lab-exitpaths tui-exitpaths

tui-test: $(BUILD)/.deps
	@$(MAKE) --no-print-directory all
	@LINKLAB=$(CURDIR)/$(BUILD)/linklab sh tests/tui/run.sh

# one console scenario alone: make tui-console, tui-middle, ... (tests/tui/NAME.sh)
TUI_TARGETS := $(filter-out tui-lib tui-run,$(patsubst tests/tui/%.sh,tui-%,$(wildcard tests/tui/*.sh)))
.PHONY: $(TUI_TARGETS)
$(TUI_TARGETS): $(BUILD)/.deps
	@$(MAKE) --no-print-directory all
	@LINKLAB=$(CURDIR)/$(BUILD)/linklab sh tests/tui/$(@:tui-%=%).sh

# The README's `sudo make check`: deps, then everything with -Werror.
check: $(BUILD)/.deps
	@$(MAKE) --no-print-directory WERROR=1 all
	@WERROR=1 sh tests/run-all.sh

# --- fuzz targets (libFuzzer, clang): the control-message, params and
# results parsers of the iperf3 protocol. `make fuzz` builds them;
# `make fuzz-check` (run by `make check` first) runs each for FUZZ_SECONDS
# (default 6: about 20 s in all) from the seeds in fuzz/corpus/ and prints
# "fuzz: N passed, N failed".
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 6
FUZZ_SRC     := $(wildcard fuzz/fuzz_*.c)
FUZZ_BIN     := $(FUZZ_SRC:fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_CORE    := src/traffic/iperf3.c src/traffic/udpstats.c src/base/err.c src/base/text.c
FUZZ_FLAGS   := -std=c11 -D_GNU_SOURCE -g -O1 -Iinclude -fsanitize=fuzzer,address,undefined \
                -fno-sanitize-recover=undefined \
                $(shell pkg-config --cflags libcjson 2>/dev/null)

$(BUILD)/fuzz/%: fuzz/%.c $(FUZZ_CORE)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(DEPFLAGS) $(LDFLAGS) -o $@ $< $(FUZZ_CORE) \
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
lab-up: $(BUILD)/.deps
	@$(MAKE) --no-print-directory all
	@sh lab/lab.sh up

lab-down:
	@sh lab/lab.sh down

# TOPO=bridge: peer A - middle box (linklab bridge) - peer B
TOPO ?= direct
demo: $(BUILD)/.deps
	@$(MAKE) --no-print-directory all
	@if [ "$(TOPO)" = bridge ]; then LL_DEMO_ENGINE="$(ENGINE)" sh lab/lab-bridge.sh demo; else sh lab/lab.sh demo; fi

demo-down:
	@sh lab/lab.sh down; sh lab/lab-bridge.sh down

# build/linklab-bench: bench-apply and bench-ssh (scripts/bench.sh);
# build/udpblast: the small-packet generator of scripts/bench-bridge.sh
bench-bin: $(BUILD)/linklab-bench $(BUILD)/udpblast

$(BUILD)/udpblast: scripts/udpblast.c $(BUILD)/.cflags
	@mkdir -p $(BUILD)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< -lpthread

bench: $(BUILD)/.deps
	@$(MAKE) --no-print-directory all bench-bin
	@LINKLAB=$(CURDIR)/$(BUILD)/linklab LINKLAB_BENCH=$(CURDIR)/$(BUILD)/linklab-bench sh scripts/bench.sh

# The shipped files: the binary, the preset profiles, the manual pages.
MANS := $(wildcard doc/*.1 doc/*.5)
PROFILES := $(wildcard profiles/*.ini)
install: all
	install -D -m 0755 $(BUILD)/linklab $(DESTDIR)$(PREFIX)/bin/linklab
	install -d $(DESTDIR)$(PREFIX)/share/linklab/profiles
	$(if $(PROFILES),install -m 0644 $(PROFILES) $(DESTDIR)$(PREFIX)/share/linklab/profiles/)
	@for m in $(MANS); do s=$${m##*.}; \
		echo "install -D -m 0644 $$m $(DESTDIR)$(PREFIX)/share/man/man$$s/$${m##*/}"; \
		install -D -m 0644 $$m $(DESTDIR)$(PREFIX)/share/man/man$$s/$${m##*/} || exit 1; done

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/linklab
	rm -f $(PROFILES:profiles/%=$(DESTDIR)$(PREFIX)/share/linklab/profiles/%)
	rmdir $(DESTDIR)$(PREFIX)/share/linklab/profiles $(DESTDIR)$(PREFIX)/share/linklab 2>/dev/null || true
	@for m in $(MANS); do s=$${m##*.}; \
		echo "rm -f $(DESTDIR)$(PREFIX)/share/man/man$$s/$${m##*/}"; \
		rm -f $(DESTDIR)$(PREFIX)/share/man/man$$s/$${m##*/}; done

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
