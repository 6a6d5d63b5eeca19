# newsd — plain GNU Makefile.
#   make            build/newsd (release)
#   make check      install deps, build release + ASan/UBSan, run every test
#   make demo       install deps, build, load the sample, serve on 127.0.0.1:8080
#   make fuzz       libFuzzer runs (SECONDS=60 per harness)
#   make bench      benchmark (N=1000000)
# Knobs: SANITIZER=address,undefined CC=gcc V=1

CC      ?= gcc
ifeq ($(V),1)
Q :=
else
Q := @
endif
PYTHON  ?= $(shell test -x /usr/bin/python3 && echo /usr/bin/python3 || echo python3)
PKGS    := libmicrohttpd sqlite3 jansson libutf8proc libexttextcat libcurl libxml-2.0 zlib nettle
LIBS_EXTRA := -lstemmer -lpthread -lm

PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN   := -Wall -Wextra -Werror -Wpedantic -Wstrict-prototypes -Wmissing-prototypes \
          -Wold-style-definition -Wvla -Wwrite-strings -Wformat=2 -fno-common
STD    := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
CFLAGS_COMMON = $(STD) $(WARN) -Isrc $(PKG_CFLAGS) -MMD -MP -g

SRCS      := $(shell find src -name '*.c' ! -name main.c | sort)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
FUZZ_SRCS := $(filter-out fuzz/standalone.c,$(wildcard fuzz/fuzz_*.c))

REL := build/release
ASN := build/asan
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

export ASAN_OPTIONS ?= detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS ?= print_stacktrace=1:halt_on_error=1

.PHONY: all deps release asan check unit unit-asan fuzz-replay api-test api-test-asan \
        demo fuzz bench bench-smoke format format-check clean

all: build/newsd

deps:
	@scripts/install-deps.sh

# ---- release ------------------------------------------------------------
REL_OBJS := $(SRCS:%.c=$(REL)/%.o)
$(REL)/%.o: %.c
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS_COMMON) -O2 -c $< -o $@

$(REL)/libnewsd.a: $(REL_OBJS)
	@rm -f $@
	$(Q)ar rcs $@ $^

build/newsd: $(REL)/src/main.o $(REL)/libnewsd.a
	$(CC) -o $@ $^ $(PKG_LIBS) $(LIBS_EXTRA)

release: build/newsd

# ---- ASan + UBSan ---------------------------------------------------------
ASN_OBJS := $(SRCS:%.c=$(ASN)/%.o)
$(ASN)/%.o: %.c
	@mkdir -p $(@D)
	@echo "  CC asan $<"
	$(Q)$(CC) $(CFLAGS_COMMON) -O1 $(ASAN_FLAGS) -DNEWSD_DEBUG_ARENA=1 -c $< -o $@

# Tests and harnesses link the archive: only the objects they use are pulled in.
$(ASN)/libnewsd.a: $(ASN_OBJS)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(ASN)/newsd: $(ASN)/src/main.o $(ASN)/libnewsd.a
	$(CC) $(ASAN_FLAGS) -o $@ $^ $(PKG_LIBS) $(LIBS_EXTRA)

asan: $(ASN)/newsd

# ---- unit tests (cmocka), built against the ASan objects ------------------
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(ASN)/tests/%)
$(ASN)/tests/%: tests/unit/%.c $(ASN)/libnewsd.a
	@mkdir -p $(@D)
	@echo "  LINK    $@"
	$(Q)$(CC) $(CFLAGS_COMMON) -Wno-missing-prototypes -O1 $(ASAN_FLAGS) -Itests/unit -o $@ $< $(ASN)/libnewsd.a \
	    $(PKG_LIBS) $(LIBS_EXTRA) -lcmocka

unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; (cd tests/unit && ../../$$t); done

# ---- fuzz corpora replayed under gcc + ASan -------------------------------
FUZZ_REPLAY := $(FUZZ_SRCS:fuzz/%.c=$(ASN)/fuzz/%)
$(ASN)/fuzz/%: fuzz/%.c fuzz/standalone.c $(ASN)/libnewsd.a
	@mkdir -p $(@D)
	@echo "  LINK    $@"
	$(Q)$(CC) $(CFLAGS_COMMON) -Wno-missing-prototypes -O1 $(ASAN_FLAGS) -o $@ $< fuzz/standalone.c \
	    $(ASN)/libnewsd.a $(PKG_LIBS) $(LIBS_EXTRA)

fuzz-replay: $(FUZZ_REPLAY)
	@set -e; for f in $(FUZZ_REPLAY); do n=$$(basename $$f); n=$${n#fuzz_}; \
	    echo "== replay $$n"; $$f fuzz/corpus/$$n; done

# ---- libFuzzer (clang) ----------------------------------------------------
SECONDS ?= 60
FZ := build/fuzz
FZ_OBJS := $(SRCS:%.c=$(FZ)/%.o)
$(FZ)/%.o: %.c
	@mkdir -p $(@D)
	@echo "  CC fuzz $<"
	$(Q)clang $(CFLAGS_COMMON) -Wno-unused-command-line-argument -O1 -fsanitize=fuzzer-no-link,address,undefined -c $< -o $@
$(FZ)/libnewsd.a: $(FZ_OBJS)
	@rm -f $@
	$(Q)ar rcs $@ $^
$(FZ)/bin/%: fuzz/%.c $(FZ)/libnewsd.a
	@mkdir -p $(@D)
	clang $(CFLAGS_COMMON) -Wno-missing-prototypes -O1 -fsanitize=fuzzer,address,undefined -o $@ $< $(FZ)/libnewsd.a \
	    $(PKG_LIBS) $(LIBS_EXTRA)

fuzz: deps $(FUZZ_SRCS:fuzz/%.c=$(FZ)/bin/%)
	@set -e; for f in $(FUZZ_SRCS:fuzz/%.c=$(FZ)/bin/%); do n=$$(basename $$f); n=$${n#fuzz_}; \
	    mkdir -p $(FZ)/corpus/$$n; d=""; test -f fuzz/$$n.dict && d="-dict=fuzz/$$n.dict"; \
	    echo "== fuzz $$n for $(SECONDS)s"; \
	    $$f $$d -max_total_time=$(SECONDS) -print_final_stats=1 $(FZ)/corpus/$$n fuzz/corpus/$$n; done

# ---- API tests against a real server --------------------------------------
api-test: build/newsd
	NEWSD_BIN=$(CURDIR)/build/newsd $(PYTHON) -m pytest -q tests/api

api-test-asan: $(ASN)/newsd
	NEWSD_BIN=$(CURDIR)/$(ASN)/newsd NEWSD_ASAN=1 $(PYTHON) -m pytest -q tests/api

check: deps
	$(MAKE) build/newsd $(ASN)/newsd
	$(MAKE) unit
	$(MAKE) fuzz-replay
	$(MAKE) api-test
	$(MAKE) api-test-asan

# ---- demo -------------------------------------------------------------------
DEMO_STORE ?= $(CURDIR)/build/demo-store
demo: deps
	$(MAKE) build/newsd
	@scripts/demo.sh build/newsd "$(DEMO_STORE)"

# ---- bench ------------------------------------------------------------------
N ?= 1000000
bench: deps build/newsd
	@bench/run.sh $(N)
bench-smoke: deps build/newsd
	@bench/run.sh 20000

format:
	clang-format -i $$(find src tests/unit fuzz bench -name '*.[ch]')
format-check:
	clang-format --dry-run --Werror $$(find src tests/unit fuzz bench -name '*.[ch]')

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)
