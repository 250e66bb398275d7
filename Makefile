# Scavenger build. `make` builds build/scavenger and libscv (build/libscv.a, build/libscv.so);
# `make check` verifies the layers (docs/layers.txt: scripts/check-layers.sh), the public
# contract (libscv.so exports exactly what include/scv.h declares: scripts/check-exports.sh),
# the headers' include guards (scripts/check-guards.sh) and the format of the C lines a
# change touched (.clang-format: scripts/check-format.sh),
# then runs every test on the normal build and on an AddressSanitizer+UBSan build
# (build/asan), and each libFuzzer harness of tests/fuzz/ for 8 s (build/fuzz, clang);
# `make fuzz` runs each for FUZZ_SECONDS (default 60). Any finding fails the target.
# `make install` / `make uninstall` honour PREFIX (default /usr/local) and DESTDIR.
CC      ?= gcc
MODE    ?= release
BUILD   := build
WERROR  := -Werror
ifeq ($(MODE),asan)
BUILD   := build/asan
OPT     := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else ifeq ($(MODE),fuzz)
# Debian 12's clang (libFuzzer is in libclang-rt-14-dev); warnings stay warnings here, the
# gcc builds are the -Werror gate
CC      := clang
BUILD   := build/fuzz
WERROR  :=
OPT     := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
           -fno-sanitize-recover=all
else
OPT     := -O3 -g
endif
MPI_CFLAGS := $(shell mpicc --showme:compile 2>/dev/null)
MPI_LIBS   := $(shell mpicc --showme:link 2>/dev/null)
# position-independent objects serve libscv.so too; no semantic interposition keeps calls
# within the library inlinable as in an executable; hidden visibility (the release build, whose
# objects make libscv.so): libscv.so exports only the functions include/scv.h marks SCV_API
# (scripts/check-exports.sh verifies it). The sanitizer builds keep default visibility: with
# it hidden, LeakSanitizer reported Open MPI's process-lifetime allocations at a K=2 train's
# exit through frames it could not name, so tests/lsan.supp no longer matched them.
VISIBILITY := $(if $(filter release,$(MODE)),-fvisibility=hidden,)
CFLAGS  := -std=c11 -Wall -Wextra $(WERROR) $(OPT) -fPIC -fno-semantic-interposition $(VISIBILITY) \
           -Iinclude -Isrc
LDLIBS  := $(MPI_LIBS) -ldnnl -lcjson -lsqlite3 -lz -lm -fopenmp

# job/ (a run's settings -> its parameters and driver) is the facade over search/ and drivers/
LIB_SRC := $(wildcard src/core/*.c src/model/*.c src/io/*.c src/train/*.c src/runtime/*.c src/store/*.c \
                      src/search/*.c src/drivers/*.c src/job/*.c)
CLI_SRC := $(wildcard src/cli/*.c)
# the service (`scavenger serve`): a shell over the library like the CLI, on libmicrohttpd;
# its dashboard's files (web/) are compiled in (web/embed.sh)
SVC_SRC := $(wildcard src/service/*.c)
WEB_SRC := web/index.html web/app.js web/app.css
SVC_LIBS := -lmicrohttpd -lpthread
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o) $(SVC_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/web_assets.o
TESTS   := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/test_*.c))
# test_cluster (the emulated cluster's kernel features, and whole runs on it: a straggler
# replaced) runs in the normal build only, as the script tests do: its trainer code runs
# under the sanitizers in test_elastic, and its LeNet runs cost the suite 95 s more there
ifeq ($(MODE),asan)
TESTS   := $(filter-out $(BUILD)/tests/test_cluster,$(TESTS))
endif

all: $(BUILD)/scavenger $(TESTS)

$(BUILD)/libscv.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/scavenger: $(CLI_OBJ) $(BUILD)/libscv.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) $(SVC_LIBS)

$(BUILD)/gen/web_assets.c: $(WEB_SRC) web/embed.sh
	@mkdir -p $(dir $@)
	sh web/embed.sh $@ $(WEB_SRC)

# the shared library: libscv.so -> libscv.so.MAJOR (the soname) -> libscv.so.VERSION
VERSION := $(shell sed -n 's/^\#define SCV_VERSION "\(.*\)"$$/\1/p' include/scv.h)
SONAME  := libscv.so.$(firstword $(subst ., ,$(VERSION)))
$(BUILD)/libscv.so.$(VERSION): $(LIB_OBJ)
	$(CC) $(CFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,--no-undefined -o $@ $^ $(LDLIBS)
$(BUILD)/$(SONAME): $(BUILD)/libscv.so.$(VERSION)
	ln -sf $(notdir $<) $@
$(BUILD)/libscv.so: $(BUILD)/$(SONAME)
	ln -sf $(notdir $<) $@

# ---- install: PREFIX and DESTDIR, as C libraries do ----
PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
LIBDIR      ?= $(PREFIX)/lib
INCLUDEDIR  ?= $(PREFIX)/include
DATAROOTDIR ?= $(PREFIX)/share
DATADIR     ?= $(DATAROOTDIR)/scavenger
MANDIR      ?= $(DATAROOTDIR)/man
BASHCOMPDIR ?= $(DATAROOTDIR)/bash-completion/completions
# the Python binding goes where that Python looks under PREFIX (Debian: dist-packages);
# evaluated by install and uninstall only
PYTHON      ?= $(shell command -v /usr/bin/python3 || command -v python3)
PYTHONDIR   ?= $(if $(PYTHON),$(LIBDIR)/python$(shell $(PYTHON) -c \
                 'import sys; print("%d.%d" % sys.version_info[:2])')/dist-packages)
DATA_FILES  := data/vm-catalog.csv data/emulated-vms.csv data/vm-catalog-SOURCES.md data/curves.jsonl

# src/core/datadir.c has DATADIR compiled in (where an installed scavenger finds its
# catalog); the stamp changes, and the object is rebuilt, only when DATADIR does
$(BUILD)/datadir.stamp: FORCE
	@mkdir -p $(dir $@)
	@echo '$(DATADIR)' | cmp -s - $@ || echo '$(DATADIR)' > $@
$(BUILD)/src/core/datadir.o: src/core/datadir.c $(BUILD)/datadir.stamp
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DSCV_DATADIR='"$(DATADIR)"' -MMD -MP -c -o $@ $<
FORCE:

# the pkg-config file: prefix and directories substituted into scv.pc.in
PC_SUBST := -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))|' \
            -e 's|@INCLUDEDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))|' \
            -e 's|@DATADIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(DATADIR))|' \
            -e 's|@VERSION@|$(VERSION)|' -e 's|@MPI_LIBS@|$(MPI_LIBS)|'

install: $(BUILD)/scavenger $(BUILD)/libscv.a $(BUILD)/libscv.so
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR) \
	    $(DESTDIR)$(DATADIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR)
	install -m 755 $(BUILD)/scavenger $(DESTDIR)$(BINDIR)/scavenger
	install -m 644 $(BUILD)/libscv.a $(DESTDIR)$(LIBDIR)/libscv.a
	install -m 755 $(BUILD)/libscv.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libscv.so.$(VERSION)
	ln -sf libscv.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libscv.so
	install -m 644 include/scv.h $(DESTDIR)$(INCLUDEDIR)/scv.h
	sed $(PC_SUBST) scv.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/scv.pc
	chmod 644 $(DESTDIR)$(LIBDIR)/pkgconfig/scv.pc
	install -m 644 $(DATA_FILES) $(DESTDIR)$(DATADIR)/
	install -m 644 docs/scavenger.1 $(DESTDIR)$(MANDIR)/man1/scavenger.1
	install -m 644 scripts/scavenger.bash-completion $(DESTDIR)$(BASHCOMPDIR)/scavenger
	if [ -n "$(PYTHON)" ]; then \
	    install -d $(DESTDIR)$(PYTHONDIR)/scavenger && \
	    install -m 644 python/scavenger/*.py $(DESTDIR)$(PYTHONDIR)/scavenger/; fi
	if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/scavenger $(DESTDIR)$(LIBDIR)/libscv.a $(DESTDIR)$(LIBDIR)/libscv.so \
	    $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libscv.so.$(VERSION) \
	    $(DESTDIR)$(INCLUDEDIR)/scv.h $(DESTDIR)$(LIBDIR)/pkgconfig/scv.pc \
	    $(DESTDIR)$(MANDIR)/man1/scavenger.1 $(DESTDIR)$(BASHCOMPDIR)/scavenger \
	    $(addprefix $(DESTDIR)$(DATADIR)/,$(notdir $(DATA_FILES)))
	rmdir $(DESTDIR)$(DATADIR) 2>/dev/null || true
	if [ -n "$(PYTHON)" ]; then rm -rf $(DESTDIR)$(PYTHONDIR)/scavenger; fi
	if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi

$(BUILD)/tests/%: tests/%.c tests/scv_test.h $(BUILD)/libscv.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libscv.a $(LDLIBS)

$(BUILD)/src/runtime/comm_mpi.o: src/runtime/comm_mpi.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(MPI_CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d)

# the objects are rebuilt when the compiler or its flags change (the stamp holds them)
$(BUILD)/cflags.stamp: FORCE
	@mkdir -p $(dir $@)
	@echo '$(CC) $(CFLAGS) $(MPI_CFLAGS)' | cmp -s - $@ || echo '$(CC) $(CFLAGS) $(MPI_CFLAGS)' > $@
$(LIB_OBJ) $(CLI_OBJ): $(BUILD)/cflags.stamp

asan:
	$(MAKE) MODE=asan all

# ---- fuzzing: tests/fuzz/fuzz_NAME.c against libscv built with clang's sanitizers ----
FUZZ_SECONDS ?= 60
FUZZ_NAMES   := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS    := $(FUZZ_NAMES:%=build/fuzz/fuzz_%)

build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_util.h build/fuzz/libscv.a
	clang -std=c11 -Wall -Wextra -O1 -g -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=all -Iinclude -Isrc -o $@ $< build/fuzz/libscv.a \
	    $(filter-out -fopenmp,$(LDLIBS)) -l:libgomp.so.1

# the service's job check (fuzz_request) is in the service's jobs_check.c, not in libscv
FUZZ_SVC_OBJ := build/fuzz/src/service/jobs_check.o build/fuzz/src/service/jobs.o
build/fuzz/fuzz_request: tests/fuzz/fuzz_request.c tests/fuzz/fuzz_util.h $(FUZZ_SVC_OBJ) build/fuzz/libscv.a
	clang -std=c11 -Wall -Wextra -O1 -g -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=all -Iinclude -Isrc -o $@ $< $(FUZZ_SVC_OBJ) build/fuzz/libscv.a \
	    $(filter-out -fopenmp,$(LDLIBS)) -l:libgomp.so.1 -lpthread

# the harnesses and build/fuzz/tests/test_fuzz, the runner tests/run.sh counts
fuzz-build: $(if $(filter fuzz,$(MODE)),$(FUZZ_BINS),)
ifneq ($(MODE),fuzz)
	$(MAKE) MODE=fuzz fuzz-build
	@mkdir -p build/fuzz/tests
	cp tests/fuzz/run.sh build/fuzz/tests/test_fuzz
	chmod +x build/fuzz/tests/test_fuzz
endif

# the fault-injection script (signals, full disk, read-only report, concurrent runs), the
# install test (make install into a temporary DESTDIR, pkg-config, the Python binding) and
# the PyTorch module's tests (python/scavenger/trainer.py, torch.py; the example through
# `scavenger run --exec` apart, to run beside them) run the normal build only;
# tests/run.sh counts build/tests/test_faults, test_install, test_pytorch and test_pytorch_run
SCRIPT_TESTS := build/tests/test_faults build/tests/test_install build/tests/test_pytorch \
                build/tests/test_pytorch_run
# the dashboard in Debian's headless chromium (tests/browser.sh; skipped without chromium)
SCRIPT_TESTS += build/tests/test_browser
# the layer check and the export check, and their test: they fail on an injected forbidden
# dependency (tests/layers.sh; docs/layers.txt, scripts/check-layers.sh, check-exports.sh)
SCRIPT_TESTS += build/tests/test_layers
# the hygiene checks and their test: each header's include guard its own, the changed C
# lines formatted as .clang-format says (tests/hygiene.sh; scripts/check-guards.sh,
# check-format.sh)
SCRIPT_TESTS += build/tests/test_hygiene
ifeq ($(MODE),release)
all: $(BUILD)/libscv.so $(SCRIPT_TESTS)
endif
build/tests/test_faults: tests/faults.sh
build/tests/test_install: tests/install.sh
build/tests/test_pytorch: tests/pytorch.sh
build/tests/test_pytorch_run: tests/pytorch_run.sh
build/tests/test_browser: tests/browser.sh
build/tests/test_layers: tests/layers.sh scripts/check-layers.sh scripts/check-exports.sh
build/tests/test_hygiene: tests/hygiene.sh scripts/check-guards.sh scripts/check-format.sh
$(SCRIPT_TESTS):
	@mkdir -p $(dir $@)
	cp $< $@
	chmod +x $@

fuzz: fuzz-build
	FUZZ_SECONDS=$(FUZZ_SECONDS) sh tests/fuzz/run.sh

# the layers (docs/layers.txt) on includes and on the objects' symbols, the public
# contract against libscv.so's exports, the headers' include guards and the format of the
# changed C lines (since the merge base with main, or main's last commit), before the tests
check: all
	sh scripts/check-layers.sh
	sh scripts/check-exports.sh
	sh scripts/check-guards.sh
	sh scripts/check-format.sh
	$(MAKE) MODE=asan all
	$(MAKE) fuzz-build
	FUZZ_SECONDS=8 sh tests/run.sh build build/asan build/fuzz

clean:
	rm -rf build

.PHONY: all asan check clean fuzz fuzz-build install uninstall FORCE

# the option lists of the bash completion and the man page, written from the commands'
# option tables (tests/test_options.c checks that the committed files hold them)
options-docs: $(BUILD)/scavenger
	sh scripts/gen-options.sh $(BUILD)/scavenger
.PHONY: options-docs
