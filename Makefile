# Scavenger build. `make` builds build/scavenger; `make check` runs every test on the
# normal build and on an AddressSanitizer+UBSan build (build/asan).
CC      ?= gcc
MODE    ?= release
BUILD   := build
ifeq ($(MODE),asan)
BUILD   := build/asan
OPT     := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else
OPT     := -O3 -g
endif
MPI_CFLAGS := $(shell mpicc --showme:compile 2>/dev/null)
MPI_LIBS   := $(shell mpicc --showme:link 2>/dev/null)
CFLAGS  := -std=c11 -Wall -Wextra -Werror $(OPT) -Iinclude -Isrc
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

check: all
	$(MAKE) MODE=asan all
	sh tests/run.sh build build/asan

clean:
	rm -rf build

.PHONY: all asan check clean
