# newsd — plain GNU Makefile.
#   make            build/newsd (release)
#   make check      install build + test deps, build release + ASan/UBSan, run every test
#   make demo       install build deps, build, load the sample, serve on 127.0.0.1:8080
#                   (FEEDS=1: also load the bundled feed catalogue and crawl it)
#   make fuzz       libFuzzer runs (SECONDS=60 per harness)
#   make fuzz-merge NAME=x  merge a run's new corpus entries into fuzz/corpus/x
#   make bench      benchmark (N=1000000, PROFILE=newsapi)
#   make bench-pages  page extraction quality and speed (docs/extraction.md)
# Knobs: SANITIZER=address,undefined CC=gcc V=1 TEST_JOBS=cores PYTEST_JOBS=2*cores

CC      ?= gcc
ifeq ($(V),1)
Q :=
else
Q := @
endif
PYTHON  ?= $(shell test -x /usr/bin/python3 && echo /usr/bin/python3 || echo python3)
PKGS    := libmicrohttpd sqlite3 jansson libutf8proc libexttextcat libcurl libxml-2.0 zlib nettle libpq libzstd liblz4 libxxhash
LIBS_EXTRA := -lstemmer -lpthread -lm

PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN   := -Wall -Wextra -Werror -Wpedantic -Wstrict-prototypes -Wmissing-prototypes \
          -Wold-style-definition -Wvla -Wwrite-strings -Wformat=2 -fno-common
STD    := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
GEN    := build/gen
CFLAGS_COMMON = $(STD) $(WARN) -Isrc -I$(GEN) $(PKG_CFLAGS) -MMD -MP -g

SRCS      := $(shell find src -name '*.c' ! -name main.c | sort)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
FUZZ_SRCS := $(filter-out fuzz/standalone.c,$(wildcard fuzz/fuzz_*.c))

REL := build/release
ASN := build/asan
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

# Tests on every core: make check builds with -j$(TEST_JOBS), make
# fuzz-replay runs TEST_JOBS binaries at a time, make unit PYTEST_JOBS
# binaries, and the pytest suites (api, cluster, reliability) spread their
# modules over PYTEST_JOBS pytest-xdist workers (python3-pytest-xdist;
# --dist loadfile: a module stays whole in one worker, with its fixtures and
# in its order, as in a serial run). The unit binaries and the suites wait
# more than they compute (servers, timeouts, polls), hence twice the cores
# (make unit: 135 s against 187 s with TEST_JOBS on two cores).
# TEST_JOBS=1 PYTEST_JOBS=1 runs everything one at a time, as before.
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
PYTEST_JOBS ?= $(shell expr 2 \* $(TEST_JOBS))
XDIST = $(shell test "$(PYTEST_JOBS)" -gt 1 2>/dev/null && $(PYTHON) -c 'import xdist' 2>/dev/null && \
           echo "-n $(PYTEST_JOBS) --dist loadfile")

export ASAN_OPTIONS ?= detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS ?= print_stacktrace=1:halt_on_error=1

.PHONY: all deps deps-test release asan check unit unit-asan fuzz-replay fuzz-merge api-test api-test-asan \
        unit-engine api-test-fts5 \
        web-test install uninstall cluster-test docs-check structure-check \
        demo fuzz bench bench-smoke bench-sizing bench-pages bench-stories format format-check clean reliability-test

all: build/newsd

# What building and running newsd needs; deps-test adds the test tools.
deps:
	@scripts/install-deps.sh
deps-test:
	@scripts/install-deps.sh --test
deps-bench:
	@scripts/install-deps.sh --bench

# ---- files embedded in the binary (issue 10) ------------------------------
# docs/openapi.json (served at /v2/openapi.json) and the search page web/*
# become C arrays in build/gen/, included by src/api/openapi.c and web.c.
WEB_FILES := web/index.html web/app.js web/style.css
$(GEN)/openapi_json.h: docs/openapi.json scripts/embed.py
	$(Q)$(PYTHON) scripts/embed.py $@ openapi_json=docs/openapi.json:json
$(GEN)/web_assets.h: $(WEB_FILES) scripts/embed.py
	$(Q)$(PYTHON) scripts/embed.py $@ web_index_html=web/index.html web_app_js=web/app.js \
	    web_style_css=web/style.css
$(REL)/src/api/openapi.o $(ASN)/src/api/openapi.o build/fuzz/src/api/openapi.o: $(GEN)/openapi_json.h
# The version (VERSION and the git commit): checked at every make, rewritten
# only when it changed.
.PHONY: FORCE
FORCE:
$(GEN)/newsd_version.h: FORCE
	$(Q)scripts/version.sh $@
$(REL)/src/util/version.o $(ASN)/src/util/version.o build/fuzz/src/util/version.o: $(GEN)/newsd_version.h
$(REL)/src/api/web.o $(ASN)/src/api/web.o build/fuzz/src/api/web.o: $(GEN)/web_assets.h

# ---- release ------------------------------------------------------------
# RELEASE_OPT: tests/api/test_demo.py's fresh clone builds at -O0 (a
# quarter of the time; the -O2 build of the same files is make check's own).
RELEASE_OPT ?= -O2
# Functions on 64 bytes and loops on 32: the same engine code built twice
# with its functions at other offsets ran the 10 M query mix 10-15 % apart
# (the set evaluator's popcount and decode loops straddling a boundary or
# not); aligned, the builds ran within the noise of each other and 2-5 %
# faster than the unaligned ones (docs/performance.md "Code alignment and
# a docid block's tail").
RELEASE_ALIGN = -falign-functions=64 -falign-loops=32
REL_OBJS := $(SRCS:%.c=$(REL)/%.o)
$(REL)/%.o: %.c
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS_COMMON) $(RELEASE_OPT) $(RELEASE_ALIGN) -c $< -o $@

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

# scripts/run-unit.sh lists every skip at the end (tests/unit/test_skip.h).
# It starts the runs in this order, PYTEST_JOBS at once: test_index_engine's
# three groups first and apart (PATH:N runs one; 180 s together under ASan,
# as long as all the other binaries), then every other binary.
ENGINE_UNIT := $(ASN)/tests/test_index_engine
UNIT_RUNS := $(ENGINE_UNIT):1 $(ENGINE_UNIT):2 $(ENGINE_UNIT):3 $(filter-out $(ENGINE_UNIT),$(UNIT_BINS))
unit: $(UNIT_BINS)
	@UNIT_JOBS=$(PYTEST_JOBS) scripts/run-unit.sh $(UNIT_RUNS)

# ---- fuzz corpora replayed under gcc + ASan -------------------------------
FUZZ_REPLAY := $(FUZZ_SRCS:fuzz/%.c=$(ASN)/fuzz/%)
$(ASN)/fuzz/%: fuzz/%.c fuzz/standalone.c $(ASN)/libnewsd.a
	@mkdir -p $(@D)
	@echo "  LINK    $@"
	$(Q)$(CC) $(CFLAGS_COMMON) -Wno-missing-prototypes -O1 $(ASAN_FLAGS) -o $@ $< fuzz/standalone.c \
	    $(ASN)/libnewsd.a $(PKG_LIBS) $(LIBS_EXTRA)

# One harness a job, TEST_JOBS at once; -O prints each one's lines together.
# The engine's corpus takes most of the time under ASan (76 s a half of 83
# here, every input checked against brute force): its files are replayed in
# two halves, first, so that on two cores it does not outlast the rest alone.
FUZZ_REPLAY_RUNS := fuzz-replay-engine-half-0 fuzz-replay-engine-half-1 \
    $(filter-out fuzz-replay-engine,$(FUZZ_REPLAY:$(ASN)/fuzz/fuzz_%=fuzz-replay-%))
fuzz-replay: $(FUZZ_REPLAY)
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) -O $(FUZZ_REPLAY_RUNS)
fuzz-replay-%: $(ASN)/fuzz/fuzz_%
	@echo "== replay $*"; $< fuzz/corpus/$*
fuzz-replay-engine-half-%: $(ASN)/fuzz/fuzz_engine
	@echo "== replay engine, half $*"; $< $$(ls -d fuzz/corpus/engine/* | awk 'NR % 2 == $*')

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

fuzz: deps-test $(FUZZ_SRCS:fuzz/%.c=$(FZ)/bin/%)
	@set -e; for f in $(FUZZ_SRCS:fuzz/%.c=$(FZ)/bin/%); do n=$$(basename $$f); n=$${n#fuzz_}; \
	    mkdir -p $(FZ)/corpus/$$n; d=""; test -f fuzz/$$n.dict && d="-dict=fuzz/$$n.dict"; \
	    echo "== fuzz $$n for $(SECONDS)s"; \
	    $$f $$d -max_total_time=$(SECONDS) -print_final_stats=1 $(FZ)/corpus/$$n fuzz/corpus/$$n; done

# Grow the committed corpora: the entries a libFuzzer run left in
# build/fuzz/corpus/NAME (make fuzz, or build/fuzz/bin/fuzz_NAME run by hand
# on build/fuzz/corpus/NAME fuzz/corpus/NAME) that add coverage are merged
# into fuzz/corpus/NAME (libFuzzer -merge=1: only inputs that reach
# something the committed corpus does not), ready to commit. NAME: one or
# more harnesses; MERGE_FLAGS: more libFuzzer flags (-max_len=2048 keeps a
# corpus small).
#   make fuzz-merge NAME="request headers" MERGE_FLAGS=-max_len=2048
fuzz-merge:
	@test -n "$(NAME)" || { echo "fuzz-merge: say which harnesses: NAME=\"request ...\""; exit 2; }
	$(MAKE) $(patsubst %,$(FZ)/bin/fuzz_%,$(NAME))
	@set -e; for n in $(NAME); do mkdir -p $(FZ)/corpus/$$n; \
	    echo "== merge $(FZ)/corpus/$$n into fuzz/corpus/$$n"; \
	    $(FZ)/bin/fuzz_$$n -merge=1 $(MERGE_FLAGS) fuzz/corpus/$$n $(FZ)/corpus/$$n >$(FZ)/merge-$$n.log 2>&1 || \
	        { tail -20 $(FZ)/merge-$$n.log; exit 1; }; \
	    grep -E '^MERGE-OUTER: [0-9]+ new files' $(FZ)/merge-$$n.log || true; \
	    done

# ---- API tests against a real server --------------------------------------
api-test: build/newsd
	NEWSD_BIN=$(CURDIR)/build/newsd $(PYTHON) -m pytest -q $(XDIST) tests/api

# Cluster mode (issue 7): nodes on one throwaway PostgreSQL
# (scripts/pg-test-server.sh) checked against embedded mode (tests/cluster).
# test_store_pg (tests/unit) skips without a database; here it gets one.
cluster-test: build/newsd $(ASN)/tests/test_store_pg
	NEWSD_BIN=$(CURDIR)/build/newsd NEWSD_TEST_STORE_PG=$(CURDIR)/$(ASN)/tests/test_store_pg \
	    $(PYTHON) -m pytest -q $(XDIST) tests/cluster

api-test-asan: $(ASN)/newsd
	NEWSD_BIN=$(CURDIR)/$(ASN)/newsd NEWSD_ASAN=1 $(PYTHON) -m pytest -q $(XDIST) tests/api

# ---- the purpose-built index (issue 9, docs/engine.md) -----------------------
# test_index_engine and test_index_match also link bench/common.c: their
# differential tests run the bench query mix, decoded as bench_index decodes
# it, against both backends (and the single-article matcher).
$(ASN)/tests/test_index_engine $(ASN)/tests/test_index_match: $(ASN)/tests/%: tests/unit/%.c \
        bench/common.c bench/common.h tests/unit/test_requests.h tests/unit/test_oracle.h \
        $(ASN)/libnewsd.a
	@mkdir -p $(@D)
	@echo "  LINK    $@"
	$(Q)$(CC) $(CFLAGS_COMMON) -Wno-missing-prototypes -O1 $(ASAN_FLAGS) -Itests/unit -Ibench -o $@ $< \
	    bench/common.c $(ASN)/libnewsd.a $(PKG_LIBS) $(LIBS_EXTRA) -lcmocka

unit-engine: $(ASN)/tests/test_index_engine
	cd tests/unit && ../../$(ASN)/tests/test_index_engine

# The whole API suite with SQLite FTS5 as the search backend (the default
# is the engine; FTS5 stays a supported backend and the tests' oracle).
api-test-fts5: build/newsd
	NEWSD_INDEX=fts5 NEWSD_BIN=$(CURDIR)/build/newsd $(PYTHON) -m pytest -q $(XDIST) tests/api

# Every binary first, on TEST_JOBS cores (the steps after would otherwise
# link theirs one at a time); then the steps, each spread over the cores.
# Each step says how long it took (scripts/timed-step.sh). bench-smoke and
# web-test run side by side (-O: each one's lines together): neither times
# anything it asserts, and the browser leaves most of a core idle.
STEP = scripts/timed-step.sh
check: deps-test
	$(STEP) build $(MAKE) -j$(TEST_JOBS) build/newsd $(ASN)/newsd $(UNIT_BINS) $(FUZZ_REPLAY) \
	    $(RELY_TOOLS) $(BENCH_BINS)
	$(STEP) docs-check $(MAKE) docs-check
	$(STEP) unit $(MAKE) unit
	$(STEP) fuzz-replay $(MAKE) fuzz-replay
	$(STEP) api-test $(MAKE) api-test
	$(STEP) api-test-asan $(MAKE) api-test-asan
	$(STEP) api-test-fts5 $(MAKE) api-test-fts5
	$(STEP) cluster-test $(MAKE) cluster-test
	$(STEP) reliability-test $(MAKE) reliability-test
	$(STEP) "bench-smoke and web-test" $(MAKE) -j2 -O bench-smoke web-test

# ---- the docs agree with the program --------------------------------------
# Every option of every command's --help is in docs/newsd.1 and docs/api.md
# §7, and they name no other; docs/openapi.yaml renders docs/openapi.json;
# the source keeps the structure docs/architecture.md draws (structure-check),
# the rooms of ingest/ and fetch/ keep their shape (scripts/check-rooms.py:
# includes, one header per room, name prefixes, no call circles), and one
# copy of each helper (scripts/check-helpers.py).
docs-check: build/newsd structure-check
	$(PYTHON) scripts/check-options.py build/newsd
	$(PYTHON) scripts/openapi-yaml.py --check
	$(PYTHON) scripts/check-rooms.py $(REL)
	$(PYTHON) scripts/check-helpers.py

# The mechanical rules of docs/architecture.md (scripts/check-structure.py:
# one function per rule), e.g. no store backend header outside its backend.
structure-check:
	$(PYTHON) scripts/check-structure.py

# ---- reliability: crash safety, disk full, load, security (tests/reliability)
# Helpers built from tests/reliability/*.c against the release objects;
# *_preload.c are LD_PRELOAD shims for the load generators.
RELY_PRELOAD := $(wildcard tests/reliability/*_preload.c)
RELY_TOOLS := $(patsubst tests/reliability/%.c,$(REL)/tests/reliability/%,\
                $(filter-out $(RELY_PRELOAD),$(wildcard tests/reliability/*.c))) \
              $(patsubst tests/reliability/%.c,$(REL)/tests/reliability/%.so,$(RELY_PRELOAD))
$(REL)/tests/reliability/%.so: tests/reliability/%.c
	@mkdir -p $(@D)
	@echo "  LINK    $@"
	$(Q)$(CC) $(STD) $(filter-out -Wpedantic,$(WARN)) -Wno-missing-prototypes -O2 -fPIC -shared \
	    -o $@ $< -ldl
$(REL)/tests/reliability/%: tests/reliability/%.c $(REL)/libnewsd.a
	@mkdir -p $(@D)
	@echo "  LINK    $@"
	$(Q)$(CC) $(CFLAGS_COMMON) -Wno-missing-prototypes -O2 -o $@ $< $(REL)/libnewsd.a \
	    $(PKG_LIBS) $(LIBS_EXTRA)

reliability-test: build/newsd $(RELY_TOOLS) $(REL)/bench/gen
	NEWSD_BIN=$(CURDIR)/build/newsd NEWSD_TOOLS=$(CURDIR)/$(REL)/tests/reliability \
	    $(PYTHON) -m pytest -q $(XDIST) tests/reliability

# ---- the search page in headless Chromium (issue 10) -----------------------
# playwright-core from tests/web/package-lock.json drives Debian's chromium;
# npm ci runs only when the lock file is newer than what is installed.
web-test: build/newsd
	@cd tests/web && if [ ! -f node_modules/.package-lock.json ] || \
	    [ package-lock.json -nt node_modules/.package-lock.json ]; then \
	    npm ci --no-audit --no-fund --loglevel=error; fi
	cd tests/web && NEWSD_BIN=$(CURDIR)/build/newsd node --test --test-reporter=spec search.test.mjs

# ---- install (issue 10) -----------------------------------------------------
# make install [PREFIX=/usr/local] [DESTDIR=/tmp/stage]: the binary, the man
# page, the systemd unit, a default config (kept if one is there) and the
# sample data. Paths inside the unit and the config follow PREFIX.
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
DATADIR    ?= $(PREFIX)/share/newsd
SYSCONFDIR ?= /etc
STATEDIR   ?= /var/lib/newsd
UNITDIR    ?= $(PREFIX)/lib/systemd/system
INSTALL    ?= install
SUBST = sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
            -e 's|@DATADIR@|$(DATADIR)|g' -e 's|@STATEDIR@|$(STATEDIR)|g'

install: build/newsd
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(UNITDIR) \
	    $(DESTDIR)$(SYSCONFDIR)/newsd $(DESTDIR)$(DATADIR)/sample
	$(INSTALL) -m 755 build/newsd $(DESTDIR)$(BINDIR)/newsd
	$(INSTALL) -m 644 docs/newsd.1 $(DESTDIR)$(MANDIR)/man1/newsd.1
	$(SUBST) dist/newsd.service.in > $(DESTDIR)$(UNITDIR)/newsd.service
	chmod 644 $(DESTDIR)$(UNITDIR)/newsd.service
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/newsd/newsd.conf ]; then \
	    echo "install: keeping $(DESTDIR)$(SYSCONFDIR)/newsd/newsd.conf"; \
	else \
	    $(SUBST) dist/newsd.conf.in > $(DESTDIR)$(SYSCONFDIR)/newsd/newsd.conf && \
	    chmod 644 $(DESTDIR)$(SYSCONFDIR)/newsd/newsd.conf; fi
	$(INSTALL) -m 644 data/sample/articles.jsonl data/sample/sources.json \
	    $(DESTDIR)$(DATADIR)/sample/
	$(INSTALL) -m 644 docs/openapi.yaml docs/openapi.json $(DESTDIR)$(DATADIR)/

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/newsd $(DESTDIR)$(MANDIR)/man1/newsd.1 \
	    $(DESTDIR)$(UNITDIR)/newsd.service $(DESTDIR)$(DATADIR)/openapi.yaml \
	    $(DESTDIR)$(DATADIR)/openapi.json
	rm -rf $(DESTDIR)$(DATADIR)/sample
	@echo "uninstall: $(DESTDIR)$(SYSCONFDIR)/newsd and $(STATEDIR) are left in place"

# ---- demo -------------------------------------------------------------------
DEMO_STORE ?= $(CURDIR)/build/demo-store
demo: deps
	$(MAKE) build/newsd
	@FEEDS="$(FEEDS)" scripts/demo.sh build/newsd "$(DEMO_STORE)"

# ---- bench ------------------------------------------------------------------
N ?= 1000000
BENCH_BINS := $(REL)/bench/gen $(REL)/bench/bench_index $(REL)/bench/bench_http \
              $(REL)/bench/fts5_baseline $(REL)/bench/bench_page $(REL)/bench/bench_percolate \
              $(REL)/bench/bench_counts $(REL)/bench/groonga_baseline
$(REL)/bench/gen: bench/gen.c $(REL)/libnewsd.a
	@mkdir -p $(@D)
	@echo "  LINK    $@"
	$(Q)$(CC) $(CFLAGS_COMMON) -O2 -o $@ $< $(REL)/libnewsd.a $(PKG_LIBS) $(LIBS_EXTRA)
$(REL)/bench/%: bench/%.c bench/common.c bench/common.h $(REL)/libnewsd.a
	@mkdir -p $(@D)
	@echo "  LINK    $@"
	$(Q)$(CC) $(CFLAGS_COMMON) -O2 -o $@ $< bench/common.c $(REL)/libnewsd.a $(PKG_LIBS) $(LIBS_EXTRA)
# PROFILE=newsapi (NewsAPI-sized articles, the headline runs) or full (the
# heavier corpus of the earlier runs); bench/README.md has the other knobs.
PROFILE ?= newsapi
bench: deps-bench build/newsd $(BENCH_BINS)
	@PROFILE=$(PROFILE) bench/run.sh $(N)
	$(PYTHON) bench/stories_quality.py --percent 40 --baseline 0.4 --halves
# Disk, memory and build time per million articles, NewsAPI-sized and full
# page text (docs/operations.md "Sizing"); N articles per profile.
bench-sizing: deps build/newsd $(REL)/bench/gen
	$(PYTHON) bench/sizing.py $(if $(filter command line,$(origin N)),$(N),200000)
# Story grouping quality on the labelled real articles of bench/data/stories
# against plain MinHash, per similarity threshold, over each fixed half of
# the labelled stories and the whole (docs/stories.md "Quality").
bench-stories: deps build/newsd
	$(PYTHON) bench/stories_quality.py --halves --baseline 0.4,0.5,0.6
bench-smoke: deps build/newsd $(BENCH_BINS)
	@PROFILE=$(PROFILE) bench/run.sh --smoke 10000

# Page extraction quality and speed on tests/data/pages, with Debian's
# readability-lxml run on the same pages as the baseline (docs/extraction.md).
$(REL)/bench/bench_pages: bench/bench_pages.c $(REL)/libnewsd.a
	@mkdir -p $(@D)
	@echo "  LINK    $@"
	$(Q)$(CC) $(CFLAGS_COMMON) -O2 -o $@ $< $(REL)/libnewsd.a $(PKG_LIBS) $(LIBS_EXTRA)
$(REL)/bench/pages_extract: bench/pages_extract.c $(REL)/libnewsd.a
	@mkdir -p $(@D)
	@echo "  LINK    $@"
	$(Q)$(CC) $(CFLAGS_COMMON) -O2 -o $@ $< $(REL)/libnewsd.a $(PKG_LIBS) $(LIBS_EXTRA)
# The development set of issue 28 (docs/extraction.md); the table leaves it
# out, with a note, where it is missing. Readability.js goes into build/.
EXTRACTION_DEV ?= ../shared/data/extraction-dev
bench-pages: deps build/newsd $(REL)/bench/bench_pages $(REL)/bench/pages_extract
	@mkdir -p build
	$(PYTHON) bench/pages_readability.py tests/data/pages > build/pages-readability.jsonl
	$(REL)/bench/bench_pages tests/data/pages build/pages-readability.jsonl
	@test -d build/readability-js/node_modules/@mozilla/readability || \
	    (mkdir -p build/readability-js && cd build/readability-js && \
	     npm install --no-audit --no-fund --silent @mozilla/readability jsdom) || \
	    echo "npm install of Readability.js failed: the table leaves it out"
	$(PYTHON) bench/pages_table.py $(EXTRACTION_DEV) tests/data/pages build/pages-table
	@if [ -d $(EXTRACTION_DEV) ]; then $(PYTHON) bench/pages_warc.py $(EXTRACTION_DEV) build/pages-table; fi

format:
	clang-format -i $$(find src tests/unit fuzz bench -name '*.[ch]')
format-check:
	clang-format --dry-run --Werror $$(find src tests/unit fuzz bench -name '*.[ch]')

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)
