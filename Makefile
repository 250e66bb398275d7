# Scavenger build. `make` builds build/scavenger; `make check` runs every test on the
# normal build and on an AddressSanitizer+UBSan build (build/asan), and each libFuzzer
# harness of tests/fuzz/ for 20 s (build/fuzz, clang); `make fuzz` runs each for
# FUZZ_SECONDS (default 60). Any finding fails the target.
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
CFLAGS  := -std=c11 -Wall -Wextra $(WERROR) $(OPT) -Iinclude -Isrc
LDLIBS  := $(MPI_LIBS) -ldnnl -lcjson -lsqlite3 -lz -lm -fopenmp

LIB_SRC := $(wildcard src/core/*.c src/model/*.c src/io/*.c src/train/*.c src/runtime/*.c src/store/*.c \
                      src/search/*.c src/drivers/*.c)
CLI_SRC := $(wildcard src/cli/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
TESTS   := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/test_*.c))

all: $(BUILD)/scavenger $(TESTS)

$(BUILD)/libscv.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/scavenger: $(CLI_OBJ) $(BUILD)/libscv.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

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

# the harnesses and build/fuzz/tests/test_fuzz, the runner tests/run.sh counts
fuzz-build: $(if $(filter fuzz,$(MODE)),$(FUZZ_BINS),)
ifneq ($(MODE),fuzz)
	$(MAKE) MODE=fuzz fuzz-build
	@mkdir -p build/fuzz/tests
	cp tests/fuzz/run.sh build/fuzz/tests/test_fuzz
	chmod +x build/fuzz/tests/test_fuzz
endif

# the fault-injection script (signals, full disk, read-only report, concurrent runs) runs
# the normal build's scavenger only; tests/run.sh counts build/tests/test_faults
ifeq ($(MODE),release)
all: build/tests/test_faults
endif
build/tests/test_faults: tests/faults.sh
	@mkdir -p $(dir $@)
	cp $< $@
	chmod +x $@

fuzz: fuzz-build
	FUZZ_SECONDS=$(FUZZ_SECONDS) sh tests/fuzz/run.sh

check: all
	$(MAKE) MODE=asan all
	$(MAKE) fuzz-build
	FUZZ_SECONDS=20 sh tests/run.sh build build/asan build/fuzz

clean:
	rm -rf build

.PHONY: all asan check clean fuzz fuzz-build
