# nd — build, test, bench, install. `make help` lists the targets.
# On a bare Debian, `apt-get install make` first: `make test` and `make demo`
# install everything else (make deps) before anything reads pkg-config.
PREFIX   ?= /usr/local
DESTDIR  ?=
CC       ?= cc
SAN_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

# Which Lua the module and the host glue are for: LUA_PC is its pkg-config
# name. LuaRocks passes LUA (the interpreter) and LUA_INCDIR instead: then
# the interpreter says which Lua it is. LUA_INCDIR / LUA_LIBDIR (and LUA_LIB,
# the library's name) override pkg-config when given.
LUA_ABIS = luajit lua5.1 lua5.2 lua5.3 lua5.4
ifneq ($(and $(LUA_INCDIR),$(filter command line environment,$(origin LUA))),)
  ifeq ($(origin LUA_PC),undefined)
    LUA_PC := $(shell $(LUA) -e 'io.write(jit and "luajit" or "lua" .. _VERSION:sub(5))')
  endif
endif
LUA_PC   ?= luajit
ifeq ($(filter $(LUA_ABIS),$(LUA_PC)),)
  $(error LUA_PC=$(LUA_PC) is not a Lua nd builds for; use one of: $(LUA_ABIS) (nothing was built or installed))
endif
LUA_VER  = $(if $(filter luajit,$(LUA_PC)),5.1,$(LUA_PC:lua%=%))
LUA      ?= $(LUA_PC)
LUA_LIB  ?= $(if $(filter luajit,$(LUA_PC)),luajit-5.1,$(LUA_PC))
# One build folder per Lua (LuaJIT's is build/, where bin/nd looks).
BUILD    ?= $(if $(filter luajit,$(LUA_PC)),build,build-$(LUA_PC))
# Where the core's objects go. The core never sees lua.h, so builds for
# other Luas with the same CC and CFLAGS may take another build's core
# (check-puc, check-embed: CORE_BUILD=build) instead of compiling it again.
CORE_BUILD ?= $(BUILD)

# Asked once, when a recipe first needs them (after deps, never at parse time).
lazy = $(eval $1 := $$(shell $2))$($1)
LUA_CFLAGS = $(if $(LUA_INCDIR),-I$(LUA_INCDIR),$(call lazy,LUA_CFLAGS,pkg-config --cflags $(LUA_PC) 2>/dev/null))
BLAS_CFLAGS = $(call lazy,BLAS_CFLAGS,pkg-config --cflags openblas 2>/dev/null)
BLAS_LIBS  = $(call lazy,BLAS_LIBS,pkg-config --libs openblas 2>/dev/null || echo -lopenblas)
SLEEF_LIBS = $(call lazy,SLEEF_LIBS,pkg-config --libs sleef 2>/dev/null || echo -lsleef)
# Image files (src/core/io/image.c): libspng for PNG, TurboJPEG for JPEG;
# safetensors headers (src/core/io/safetensors.c): cJSON.
IMAGE_CFLAGS = $(call lazy,IMAGE_CFLAGS,pkg-config --cflags spng libturbojpeg libcjson 2>/dev/null)
IMAGE_LIBS = $(call lazy,IMAGE_LIBS,pkg-config --libs spng libturbojpeg libcjson 2>/dev/null || echo -lspng -lturbojpeg -lcjson)
CFLAGS   ?= -O2 -g
# Hidden by default: the shared libraries export what the public headers
# declare (they push default visibility) and what src/core/base/nd_internal.h
# marks ND_EXPORT, nothing else (make check-exports).
# -ffp-contract=off: a * b + c is never fused into one FMA, so results are
# the same whichever compiler builds nd (GCC's ISO C default; clang fuses
# within an expression unless told) and match PyTorch's unfused kernels.
ALL_CFLAGS = -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -ffp-contract=off -fPIC -fno-semantic-interposition -fvisibility=hidden -pthread \
             -Iinclude $(CORE_INC) $(LUA_CFLAGS) $(BLAS_CFLAGS) $(IMAGE_CFLAGS) $(CFLAGS) $(EXTRA_CFLAGS)
LDLIBS   = $(BLAS_LIBS) $(SLEEF_LIBS) $(IMAGE_LIBS) -lm -pthread -ldl

# The layers, bottom first (src/core/README says what each holds); folders
# joined by a comma are one layer and may not use each other. Declared here
# only: each core folder's sources see the headers of their own folder and
# of the layers below (an upward #include does not compile), and
# tools/layers.lua, run by make test, checks the objects' symbols against
# the same order (gen/ and lua/, the binding, sit on top and see nd.h only).
CORE_LAYERS := base shape kernels linalg,random,io,contract,conv
comma := ,
LAYERS := $(foreach l,$(CORE_LAYERS),core/$(subst $(comma),$(comma)core/,$l)) gen lua
# $(call core_inc,LAYERS,BELOW): CORE_INC for the first layer's folders,
# then the next layers' with this one added below them.
core_inc = $(foreach f,$(subst $(comma), ,$(firstword $1)),$(eval \
  $(CORE_BUILD)/core/$f/%.o: CORE_INC := -Isrc/core/$f$2))$(if $(word 2,$1),$(call \
  core_inc,$(wordlist 2,99,$1),$2 $(foreach f,$(subst $(comma), ,$(firstword $1)),-Isrc/core/$f)))
CORE_INC :=
$(call core_inc,$(CORE_LAYERS),)
CORE_DIRS := $(patsubst %/,%,$(sort $(wildcard src/core/*/)))
CORE_SRC := $(sort $(wildcard src/core/*/*.c))
CORE_HDR := $(wildcard src/core/*/*.h)
LUA_SRC  := $(sort $(wildcard src/lua/*.c))
LUA_MODS := $(sort $(wildcard lua/*.lua))
CORE_OBJ := $(CORE_SRC:src/%.c=$(CORE_BUILD)/%.o)
LUA_OBJ  := $(LUA_SRC:src/%.c=$(BUILD)/%.o) $(BUILD)/gen/lua_sources.o
# Debian packages, one list per purpose: add yours to the list that needs it.
# build-essential brings libc6-dev (stdint.h), which gcc alone does not.
DEPS_PKGS = build-essential make pkg-config luajit libluajit-5.1-dev \
            libopenblas-dev libsleef-dev lua-busted \
            lua5.4 liblua5.4-dev libspng-dev libturbojpeg0-dev libcjson-dev
PUC_VERSIONS = 5.1 5.2 5.3 5.4
PUC_PKGS = lua5.1 liblua5.1-0-dev lua5.2 liblua5.2-dev lua5.3 liblua5.3-dev \
           lua5.4 liblua5.4-dev
FRESH_PKGS = debootstrap git
ROCK_PKGS = luarocks lua5.4 liblua5.4-dev
CLANG_PKGS = clang
# The glue a C host links to embed nd in this Lua (nd_lua.h), on top of libnd.
GLUE = libnd_$(LUA_PC)

.PHONY: all deps deps-puc install-pkgs test check-exports check-layers check-asan check-joff check-puc check-clang check-install check-embed check-tsan check-rock check-fresh bench demo install install-module uninstall clean help
all: $(BUILD)/libnd.a $(BUILD)/libnd.so $(BUILD)/nd.so $(BUILD)/$(GLUE).a $(BUILD)/$(GLUE).so

help:
	@echo "make [all] | deps | test | demo | check-exports | check-layers | check-asan | check-joff | check-puc | check-clang | check-install | check-embed | check-tsan | check-rock | check-fresh | bench | install [LUA_PC=luajit|lua5.1..lua5.4] | uninstall | clean"

$(BUILD)/%.o: src/%.c $(wildcard include/*.h) $(CORE_HDR) $(wildcard src/lua/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@
$(CORE_BUILD)/core/%.o: src/core/%.c $(wildcard include/*.h) $(CORE_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@
# sqrt vectorises only when it need not set errno, which nd never reads
# (sqrt(-1) is NaN either way); GCC's optimize pragma does not reach the
# target_clones kernels, so the flag is given to the files.
$(CORE_BUILD)/core/kernels/elementwise_kernels.o $(CORE_BUILD)/core/kernels/elementwise_math.o: ALL_CFLAGS += -fno-math-errno

# The Lua layer is compiled into the module as C strings.
$(BUILD)/bin2c: tools/bin2c.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -o $@ $<
$(BUILD)/gen/lua_sources.c: $(LUA_MODS) $(BUILD)/bin2c
	@mkdir -p $(dir $@)
	$(BUILD)/bin2c $(LUA_MODS) > $@
# It includes no header of nd's, so the flags (visibility) are its rebuild
# trigger.
$(BUILD)/gen/lua_sources.o: $(BUILD)/gen/lua_sources.c Makefile
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/libnd.a: $(CORE_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(BUILD)/libnd.so: $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -shared $(ALL_CFLAGS) -Wl,-Bsymbolic-functions -Wl,-soname,libnd.so.0 -o $@ $^ $(LDLIBS)
# The Lua module is self-contained (core + glue + Lua layer): it loads from a
# LuaRocks tree with no libnd.so on the loader path.
$(BUILD)/nd.so: $(CORE_OBJ) $(LUA_OBJ)
	$(CC) -shared $(ALL_CFLAGS) -Wl,-Bsymbolic-functions -o $@ $^ $(LDLIBS)
# A host's link target: the glue alone, taking the core from libnd (one copy:
# one allocator hook, block cache and thread pool per process, whichever
# library a call comes from). So the glue may call in libnd.so only what
# libnd.so exports: the public API, and the few internal functions marked
# ND_EXPORT for it (src/core/base/nd_internal.h: nd_hook_alloc); stateless
# internal helpers it needs are inline functions there instead.
$(BUILD)/$(GLUE).a: $(LUA_OBJ)
	rm -f $@ && ar rcs $@ $^
$(BUILD)/$(GLUE).so: $(LUA_OBJ) $(BUILD)/libnd.so
	$(CC) -shared $(ALL_CFLAGS) -Wl,-soname,$(GLUE).so.0 -o $@ $(LUA_OBJ) -L$(BUILD) -lnd $(LDLIBS)

deps:
	@$(MAKE) --no-print-directory install-pkgs PKGS="$(DEPS_PKGS)"
deps-puc: deps
	@$(MAKE) --no-print-directory install-pkgs PKGS="$(PUC_PKGS)"
install-pkgs:
	@missing=""; for p in $(PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q ' installed$$' \
	    || missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	cmd="apt-get update && apt-get install -y --no-install-recommends$$missing"; \
	if [ "$$(id -u)" = 0 ]; then echo "$$cmd"; \
	  DEBIAN_FRONTEND=noninteractive sh -c "$$cmd"; \
	else echo "missing packages; run as root:  $$cmd"; exit 1; fi

# The layer check first (it prints one line), then the suite under LuaJIT
# (see .busted); the last line is the summary.
# deps first, then a sub-make builds: it sees what deps installed.
# A plain `make test` (the README's first command) builds on every core;
# a -j the caller gave is kept.
test: deps
	@case " $$MAKEFLAGS" in *" -j"*) jobs= ;; *) jobs=-j$$(nproc 2>/dev/null || echo 1) ;; esac; \
	  $(MAKE) --no-print-directory $$jobs all
	@$(MAKE) --no-print-directory check-exports
	@$(MAKE) --no-print-directory check-layers
	@ND_BUILD=$(BUILD) bin/nd-busted

# Each shared library exports its public API, all of it and nothing else
# (tools/check-exports.sh: the public headers against nm -D).
check-exports: all
	@sh tools/check-exports.sh $(BUILD)/libnd.so=include/nd.h,include/nd_dlpack.h \
	  $(BUILD)/nd.so=include/nd.h,include/nd_dlpack.h,include/nd_lua.h \
	  $(BUILD)/$(GLUE).so=include/nd_lua.h

# The layers hold (tools/layers.lua over the objects' symbols): no call into
# a higher layer or across one, no cycle between files or folders.
check-layers: $(CORE_OBJ) $(LUA_OBJ)
	@$(LUA) tools/layers.lua "$(LAYERS)" $(BUILD) $(CORE_OBJ) $(LUA_OBJ)

check-asan: deps
	@$(MAKE) --no-print-directory BUILD=build-asan CFLAGS="-O1 -g $(SAN_FLAGS)" all
	@LD_PRELOAD="$$($(CC) -print-file-name=libasan.so) $$($(CC) -print-file-name=libubsan.so)" \
	  ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1:abort_on_error=0 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/spec/support/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ND_BUILD=build-asan bin/nd-busted

# The suite under `luajit -joff`: the FFI paths must switch themselves off.
check-joff: deps
	@$(MAKE) --no-print-directory all
	@ND_BUILD=$(BUILD) bin/nd-busted --lua=$(CURDIR)/bin/luajit-joff

# The suite under PUC Lua 5.1, 5.2, 5.3 and 5.4 (specs of LuaJIT-only
# features are skipped); one summary line per version. The four builds
# first (the core compiled once, in build/), then two suites at a time (2
# cores), each shown when it ends.
check-puc: deps-puc
	@$(MAKE) --no-print-directory all >/dev/null
	@for v in $(PUC_VERSIONS); do \
	  $(MAKE) --no-print-directory BUILD=build-lua$$v CORE_BUILD=build LUA_PC=lua$$v all >/dev/null || exit 1; \
	done
	@for v in $(PUC_VERSIONS); do echo $$v; done | xargs -P 2 -I{} sh -c \
	  'ND_PUC=1 ND_BUILD=build-lua{} bin/nd-busted --lua=lua{} >build-lua{}/suite.txt 2>&1; \
	   rc=$$?; printf "== Lua {}\n%s\n" "$$(cat build-lua{}/suite.txt)"; exit $$rc'

# The suite against a clang build (nd builds with gcc and clang).
check-clang: deps
	@$(MAKE) --no-print-directory install-pkgs PKGS="$(CLANG_PKGS)"
	@$(MAKE) --no-print-directory CC=clang BUILD=build-clang EXTRA_CFLAGS=-Werror all >/dev/null
	@ND_BUILD=build-clang bin/nd-busted

# LuaJIT and Lua 5.4 installed side by side into one temporary prefix; C and
# C++ hosts built through pkg-config against it (tools/check-install.sh).
check-install: deps-puc
	@sh tools/check-install.sh

# The host examples (examples/embed/) built through pkg-config against an
# installed nd and run, the C one under valgrind too (tools/check-embed.sh).
check-embed: deps
	@$(MAKE) --no-print-directory install-pkgs PKGS="valgrind"
	@sh tools/check-embed.sh --valgrind

# Two lua_States on two threads (tests/threads_test.c) against nd built with
# ThreadSanitizer: per-state generators, atomic reference counts, a shared
# read-only buffer. Sanitizer builds skip target_clones (core.h ND_IFUNC).
check-tsan: deps
	@$(MAKE) --no-print-directory BUILD=build-tsan CFLAGS="-O1 -g -fsanitize=thread" all >/dev/null
	@$(CC) -std=c11 -O1 -g -fsanitize=thread -Iinclude $(LUA_CFLAGS) tests/threads_test.c \
	  build-tsan/nd.so $(call lazy,LUA_LIBS,pkg-config --libs $(LUA_PC)) -lm -pthread \
	  -Wl,-rpath,$(CURDIR)/build-tsan -o build-tsan/threads_test
	@TSAN_OPTIONS=halt_on_error=1:exitcode=66 build-tsan/threads_test

# luarocks make for LuaJIT and Lua 5.4 into temporary trees; require "nd"
# from plain luajit / lua5.4 outside the source tree (tools/check-rock.sh).
check-rock: deps
	@$(MAKE) --no-print-directory install-pkgs PKGS="$(ROCK_PKGS)"
	@sh tools/check-rock.sh

# The two commands on a throwaway minimal Debian bookworm (root; debootstrap;
# the tarball is cached in ND_FRESH_CACHE, default /var/cache/nd-check-fresh).
check-fresh:
	@$(MAKE) --no-print-directory install-pkgs PKGS="$(FRESH_PKGS)"
	@sh tools/check-fresh.sh

bench: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory -C bench BUILD=$(CURDIR)/$(BUILD)
	@ND_BUILD=$(BUILD) bin/nd bench/run.lua $(BENCH)

# The tour first, then every other example.
demo: deps
	@$(MAKE) --no-print-directory all
	@ND_BUILD=$(BUILD) bin/nd examples/image_filters.lua --make-input $(BUILD)/demo.png
	@for f in examples/tour.lua $(filter-out examples/tour.lua,$(sort $(wildcard examples/*.lua))); do \
	  echo "== bin/nd $$f"; ND_BUILD=$(BUILD) bin/nd $$f || exit 1; done

# Install layout: the core (libnd.a, libnd.so.0, nd.h, nd_lua.h, nd.pc) is
# shared by every Lua; per Lua: the module lib/lua/<5.x>/nd.so and the host
# glue libnd_<LUA_PC>.{a,so.0} with nd-<LUA_PC>.pc. Several Lua versions
# install side by side: make install LUA_PC=luajit; make install LUA_PC=lua5.4.
LIBDIR   = $(PREFIX)/lib
LUA_CMOD_DIR ?= $(LIBDIR)/lua/$(LUA_VER)
ND_VERSION = $(shell sed -n 's/^\#define ND_VERSION "\(.*\)"/\1/p' include/nd.h)
D = $(DESTDIR)
install: all
	install -d $(D)$(LIBDIR)/pkgconfig $(D)$(PREFIX)/include $(D)$(LUA_CMOD_DIR)
	install -m 644 $(BUILD)/libnd.a $(BUILD)/$(GLUE).a $(D)$(LIBDIR)/
	install -m 755 $(BUILD)/libnd.so $(D)$(LIBDIR)/libnd.so.0
	ln -sf libnd.so.0 $(D)$(LIBDIR)/libnd.so
	install -m 755 $(BUILD)/$(GLUE).so $(D)$(LIBDIR)/$(GLUE).so.0
	ln -sf $(GLUE).so.0 $(D)$(LIBDIR)/$(GLUE).so
	install -m 755 $(BUILD)/nd.so $(D)$(LUA_CMOD_DIR)/nd.so
	install -m 644 include/nd.h include/nd_lua.h include/nd_dlpack.h $(D)$(PREFIX)/include/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(ND_VERSION)|' tools/nd.pc.in \
	  > $(D)$(LIBDIR)/pkgconfig/nd.pc
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(ND_VERSION)|' -e 's|@ABI@|$(LUA_PC)|g' \
	  -e 's|@LUA_REQUIRES@|$(if $(LUA_INCDIR),,$(LUA_PC))|' \
	  -e 's|@LUA_CFLAGS@|$(if $(LUA_INCDIR),-I$(LUA_INCDIR))|' \
	  -e 's|@LUA_LIBS@|$(if $(LUA_INCDIR),$(if $(LUA_LIBDIR),-L$(LUA_LIBDIR)) -l$(LUA_LIB))|' \
	  tools/nd-lua.pc.in > $(D)$(LIBDIR)/pkgconfig/nd-$(LUA_PC).pc
# LuaRocks installs the module only (the rock's lib dir: INST_LIBDIR).
install-module: all
	install -d $(INST_LIBDIR)
	install -m 755 $(BUILD)/nd.so $(INST_LIBDIR)/nd.so
# Removes this Lua's files; the core goes with the last Lua's.
uninstall:
	rm -f $(D)$(LIBDIR)/$(GLUE).a $(D)$(LIBDIR)/$(GLUE).so $(D)$(LIBDIR)/$(GLUE).so.0 \
	  $(D)$(LUA_CMOD_DIR)/nd.so $(D)$(LIBDIR)/pkgconfig/nd-$(LUA_PC).pc
	@if ! ls $(D)$(LIBDIR)/pkgconfig/nd-*.pc >/dev/null 2>&1; then \
	  echo "rm -f (the core: libnd, nd.h, nd_lua.h, nd_dlpack.h, nd.pc)"; \
	  rm -f $(D)$(LIBDIR)/libnd.a $(D)$(LIBDIR)/libnd.so $(D)$(LIBDIR)/libnd.so.0 \
	    $(D)$(PREFIX)/include/nd.h $(D)$(PREFIX)/include/nd_lua.h $(D)$(PREFIX)/include/nd_dlpack.h $(D)$(LIBDIR)/pkgconfig/nd.pc; fi

clean:
	rm -rf build build-asan build-*

# ---- reliability (issue 14): make fuzz, check-alloc, check-valgrind ------
# The differential fuzzer checks nd against the committed NumPy/PyTorch
# corpus, then FUZZ_COUNT random programs from FUZZ_SEED against the plain-
# Lua model; then the libFuzzer target (FUZZ_TIME seconds); then the
# allocation-failure sweep. fuzz-asan: the first two under ASan+UBSan.
FUZZ_SEED  ?= 1
FUZZ_COUNT ?= 2000
FUZZ_TIME  ?= 60
# libFuzzer stops after FUZZ_RUNS inputs (or FUZZ_TIME seconds): a fixed seed
# and count replay the same inputs, so a CI run does not depend on speed.
FUZZ_RUNS  ?= -1
ASAN_ENV = LD_PRELOAD="$$($(CC) -print-file-name=libasan.so) $$($(CC) -print-file-name=libubsan.so)" \
  ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1:abort_on_error=0 \
  LSAN_OPTIONS=suppressions=$(CURDIR)/spec/support/lsan.supp:print_suppressions=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
.PHONY: fuzz fuzz-run fuzz-asan fuzz-corpus fuzz-deps fuzz-libfuzzer fuzz-files fuzz-image check-alloc check-valgrind
fuzz: fuzz-run fuzz-libfuzzer fuzz-files fuzz-image check-alloc
fuzz-run: deps all
	@ND_BUILD=$(BUILD) bin/nd spec/fuzz/run.lua --corpus spec/fuzz/corpus.lua
	@ND_BUILD=$(BUILD) bin/nd spec/fuzz/run.lua --seed $(FUZZ_SEED) --count $(FUZZ_COUNT)
fuzz-asan: deps
	@$(MAKE) --no-print-directory BUILD=build-asan CFLAGS="-O1 -g $(SAN_FLAGS)" all
	@$(ASAN_ENV) ND_BUILD=build-asan bin/nd spec/fuzz/run.lua --corpus spec/fuzz/corpus.lua
	@$(ASAN_ENV) ND_BUILD=build-asan bin/nd spec/fuzz/run.lua --seed $(FUZZ_SEED) --count $(FUZZ_COUNT)
# Regenerates the corpus (needs /usr/bin/python3 with numpy and torch).
fuzz-corpus: all
	ND_BUILD=$(BUILD) bin/nd spec/fuzz/run.lua --emit json --seed 100000 --count 400 --steps 14 \
	  | /usr/bin/python3 spec/fuzz/numpy_eval.py --seed 100000 --count 400 --steps 14 > spec/fuzz/corpus.lua
# The fuzz targets' core: one clang object per source (make -j compiles
# them in parallel, and both targets link the same ones), instrumented for
# coverage, ASan and UBSan. image.c as the image target needs it: a 1 Mpx
# cap and checksums ignored (the mutations break them).
FUZZ_FLAGS = -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -std=c11 \
  -D_DEFAULT_SOURCE -pthread -Iinclude $(addprefix -I,$(CORE_DIRS)) $(BLAS_CFLAGS) $(IMAGE_CFLAGS)
FUZZ_OBJ := $(CORE_SRC:src/%.c=build-fuzz/%.o)
build-fuzz/core/%.o: src/core/%.c include/nd.h $(CORE_HDR) | fuzz-deps
	@mkdir -p $(dir $@)
	clang $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c $< -o $@
FUZZ_IMAGE_DEFS = -DND_IMAGE_PIXEL_CAP='((int64_t)1 << 20)' -DND_IMAGE_FUZZ
build-fuzz/core/io/image.o: FUZZ_FLAGS += $(FUZZ_IMAGE_DEFS)
# libFuzzer over the core's geometry, the .npy and safetensors parsers (tests/fuzz_core.c);
# new inputs go to build-fuzz/corpus, the committed seeds are read too.
build-fuzz/fuzz_core: tests/fuzz_core.c $(FUZZ_OBJ) | fuzz-deps
	@mkdir -p build-fuzz/corpus
	clang $(FUZZ_FLAGS) -fsanitize=fuzzer tests/fuzz_core.c $(FUZZ_OBJ) $(LDLIBS) -o $@
# The same target over the .npy and safetensors parsers alone (every input
# byte 0 read as theirs: ND_FUZZ_FILES=1): FUZZ_TIME seconds of them,
# whatever the others find.
fuzz-files: build-fuzz/fuzz_core
	@mkdir -p build-fuzz/corpus_files; ND_FUZZ_FILES=1 build-fuzz/fuzz_core -timeout=30 -max_total_time=$(FUZZ_TIME) -runs=$(FUZZ_RUNS) -seed=$(FUZZ_SEED) \
	  -print_final_stats=1 -artifact_prefix=build-fuzz/files- build-fuzz/corpus_files tests/fuzz_corpus \
	  > build-fuzz/log_files 2>&1; \
	  status=$$?; grep -E "^(stat::number_of_executed_units|Done|==|SUMMARY|invariant|INFO: seed)" build-fuzz/log_files; \
	  [ $$status -eq 0 ] || tail -40 build-fuzz/log_files; exit $$status
fuzz-deps:
	@$(MAKE) --no-print-directory install-pkgs PKGS="clang libclang-rt-14-dev"
fuzz-libfuzzer: build-fuzz/fuzz_core
	@mkdir -p build-fuzz/corpus; build-fuzz/fuzz_core -timeout=30 -max_total_time=$(FUZZ_TIME) -runs=$(FUZZ_RUNS) -seed=$(FUZZ_SEED) \
	  -print_final_stats=1 -artifact_prefix=build-fuzz/ build-fuzz/corpus tests/fuzz_corpus \
	  > build-fuzz/log 2>&1; \
	  status=$$?; grep -E "^(stat::number_of_executed_units|Done|==|SUMMARY|invariant|INFO: seed)" build-fuzz/log; \
	  [ $$status -eq 0 ] || tail -40 build-fuzz/log; exit $$status
# libFuzzer over the PNG and JPEG decoders (tests/fuzz_image.c), at most
# FUZZ_IMAGE_TIME seconds (or FUZZ_IMAGE_RUNS inputs); seeds in
# tests/fuzz_corpus_image, new inputs to build-fuzz/corpus_image.
FUZZ_IMAGE_TIME ?= 45
FUZZ_IMAGE_RUNS ?= -1
build-fuzz/fuzz_image: tests/fuzz_image.c $(FUZZ_OBJ) | fuzz-deps
	@mkdir -p build-fuzz/corpus_image
	clang $(FUZZ_FLAGS) $(FUZZ_IMAGE_DEFS) -fsanitize=fuzzer tests/fuzz_image.c $(FUZZ_OBJ) $(LDLIBS) -o $@
fuzz-image: build-fuzz/fuzz_image
	@mkdir -p build-fuzz/corpus_image; build-fuzz/fuzz_image -timeout=30 -max_total_time=$(FUZZ_IMAGE_TIME) -runs=$(FUZZ_IMAGE_RUNS) -seed=$(FUZZ_SEED) \
	  -print_final_stats=1 -artifact_prefix=build-fuzz/image- build-fuzz/corpus_image tests/fuzz_corpus_image \
	  > build-fuzz/image.log 2>&1; \
	  status=$$?; grep -E "^(stat::number_of_executed_units|Done|==|SUMMARY|invariant|INFO: seed)" build-fuzz/image.log; \
	  [ $$status -eq 0 ] || tail -40 build-fuzz/image.log; exit $$status
# Allocation-failure sweep: fail the Nth allocation for every N (at most
# 2000) over a C API script and a Lua script (tests/alloc_fail.*).
ALLOC_WRAP = -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=posix_memalign,--wrap=aligned_alloc,--wrap=strdup,--wrap=free
$(BUILD)/alloc_fail: tests/alloc_fail.c $(CORE_OBJ) $(LUA_OBJ)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(ALLOC_WRAP) $$(pkg-config --libs $(LUA_PC)) $(LDLIBS)
check-alloc: deps all $(BUILD)/alloc_fail
	@$(BUILD)/alloc_fail c
	@$(BUILD)/alloc_fail lua tests/alloc_fail.lua
# The whole suite (which also builds and runs the C host examples) under
# valgrind: 0 errors, 0 definite leaks. Compilers and shells are not traced.
# One spec file a process, VG_JOBS at once (tools/each-spec.sh).
VG_SKIP = */cc,*/gcc*,*/cc1,*/as,*/ld,*/collect2,*/sh,*/bash,*/dash,*/x86_64-linux-gnu-*,*/pkg-config
VG_JOBS ?= 2
check-valgrind: deps all
	@$(MAKE) --no-print-directory install-pkgs PKGS="valgrind"
	@ND_NO_CACHE=1 ND_VALGRIND=1 ND_BUILD=$(BUILD) LUA_CPATH="$(CURDIR)/$(BUILD)/?.so;;" \
	  sh tools/each-spec.sh $(VG_JOBS) valgrind -q --trace-children=yes \
	  --trace-children-skip='$(VG_SKIP)' --error-exitcode=99 --leak-check=full \
	  --suppressions=$(CURDIR)/spec/support/valgrind.supp \
	  --errors-for-leak-kinds=definite --show-leak-kinds=definite \
	  $(LUA) $$(command -v busted) --ignore-lua
