# nd — build, test, bench, install. `make help` lists the targets.
LUA_PC   ?= luajit
LUA      ?= luajit
PREFIX   ?= /usr/local
DESTDIR  ?=
BUILD    ?= build
CC       ?= cc
SAN_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

PKG_CFLAGS := $(shell pkg-config --cflags $(LUA_PC) openblas 2>/dev/null)
BLAS_LIBS  := $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas)
SLEEF_LIBS := $(shell pkg-config --libs sleef 2>/dev/null || echo -lsleef)
CFLAGS   ?= -O2 -g
ALL_CFLAGS = -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -fPIC -pthread \
             -Iinclude -Isrc/core $(PKG_CFLAGS) $(CFLAGS) $(EXTRA_CFLAGS)
LDLIBS   = $(BLAS_LIBS) $(SLEEF_LIBS) -lm -pthread -ldl

CORE_SRC := $(sort $(wildcard src/core/*.c))
LUA_SRC  := $(sort $(wildcard src/lua/*.c))
LUA_MODS := $(sort $(wildcard lua/*.lua))
CORE_OBJ := $(CORE_SRC:src/%.c=$(BUILD)/%.o)
LUA_OBJ  := $(LUA_SRC:src/%.c=$(BUILD)/%.o) $(BUILD)/gen/lua_sources.o
DEPS_PKGS = gcc make pkg-config luajit libluajit-5.1-dev libopenblas-dev libsleef-dev lua-busted
PUC_VERSIONS = 5.1 5.3 5.4
PUC_PKGS = lua5.1 liblua5.1-0-dev lua5.3 liblua5.3-dev lua5.4 liblua5.4-dev

.PHONY: all deps deps-puc install-pkgs test check-asan check-joff check-puc bench demo install uninstall clean help
all: $(BUILD)/libnd.a $(BUILD)/libnd.so $(BUILD)/nd.so

help:
	@echo "make [all] | deps | test | check-asan | check-puc | bench | demo | install | uninstall | clean"

$(BUILD)/%.o: src/%.c include/nd.h $(wildcard src/core/*.h src/lua/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# The Lua layer is compiled into the module as C strings.
$(BUILD)/bin2c: tools/bin2c.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -o $@ $<
$(BUILD)/gen/lua_sources.c: $(LUA_MODS) $(BUILD)/bin2c
	@mkdir -p $(dir $@)
	$(BUILD)/bin2c $(LUA_MODS) > $@
$(BUILD)/gen/lua_sources.o: $(BUILD)/gen/lua_sources.c
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/libnd.a: $(CORE_OBJ)
	rm -f $@ && ar rcs $@ $^
$(BUILD)/libnd.so: $(CORE_OBJ)
	$(CC) -shared $(ALL_CFLAGS) -Wl,-soname,libnd.so.0 -o $@ $^ $(LDLIBS)
$(BUILD)/nd.so: $(CORE_OBJ) $(LUA_OBJ)
	$(CC) -shared $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

deps:
	@$(MAKE) --no-print-directory install-pkgs PKGS="$(DEPS_PKGS)"
deps-puc: deps
	@$(MAKE) --no-print-directory install-pkgs PKGS="$(PUC_PKGS)"
install-pkgs:
	@missing=""; for p in $(PKGS); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	cmd="apt-get update && apt-get install -y --no-install-recommends$$missing"; \
	if [ "$$(id -u)" = 0 ]; then echo "$$cmd"; \
	  DEBIAN_FRONTEND=noninteractive sh -c "$$cmd"; \
	else echo "missing packages; run as root:  $$cmd"; exit 1; fi

# The suite runs under LuaJIT (see .busted); the last line is the summary.
test: deps all
	@ND_BUILD=$(BUILD) bin/nd-busted

check-asan: deps
	@$(MAKE) --no-print-directory BUILD=build-asan CFLAGS="-O1 -g $(SAN_FLAGS)" all
	@LD_PRELOAD="$$($(CC) -print-file-name=libasan.so) $$($(CC) -print-file-name=libubsan.so)" \
	  ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1:abort_on_error=0 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/spec/support/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ND_BUILD=build-asan bin/nd-busted

# The suite under `luajit -joff`: the FFI paths must switch themselves off.
check-joff: deps all
	@ND_BUILD=$(BUILD) bin/nd-busted --lua=$(CURDIR)/bin/luajit-joff

# The suite under PUC Lua 5.1, 5.3 and 5.4 (specs of LuaJIT-only features
# are skipped); one summary line per version.
check-puc: deps-puc
	@status=0; for v in $(PUC_VERSIONS); do \
	  $(MAKE) --no-print-directory BUILD=build-lua$$v LUA_PC=lua$$v all >/dev/null || exit 1; \
	  echo "== Lua $$v"; \
	  ND_PUC=1 ND_BUILD=build-lua$$v bin/nd-busted --lua=lua$$v || status=1; \
	done; exit $$status

bench: deps all
	@$(MAKE) --no-print-directory -C bench BUILD=$(CURDIR)/$(BUILD)
	@ND_BUILD=$(BUILD) bin/nd bench/run.lua $(BENCH)

# The tour first, then every other example.
demo: deps all
	@for f in examples/tour.lua $(filter-out examples/tour.lua,$(sort $(wildcard examples/*.lua))); do \
	  echo "== bin/nd $$f"; ND_BUILD=$(BUILD) bin/nd $$f || exit 1; done

LUA_CMOD_DIR = $(PREFIX)/lib/x86_64-linux-gnu/lua/5.1
# The C library (libnd.a, libnd.so), the Lua module (lib/lua/5.1/nd.so,
# which also exports the C API and nd_lua.h's glue), headers, nd.pc.
install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include \
	  $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/lib/lua/5.1
	install -m 644 $(BUILD)/libnd.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libnd.so $(DESTDIR)$(PREFIX)/lib/libnd.so.0
	ln -sf libnd.so.0 $(DESTDIR)$(PREFIX)/lib/libnd.so
	install -m 755 $(BUILD)/nd.so $(DESTDIR)$(PREFIX)/lib/lua/5.1/nd.so
	install -m 644 include/nd.h include/nd_lua.h $(DESTDIR)$(PREFIX)/include/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(shell sed -n \
	  's/^#define ND_VERSION "\(.*\)"/\1/p' include/nd.h)|' tools/nd.pc.in \
	  > $(DESTDIR)$(PREFIX)/lib/pkgconfig/nd.pc
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/lib/libnd.a $(DESTDIR)$(PREFIX)/lib/libnd.so \
	  $(DESTDIR)$(PREFIX)/lib/libnd.so.0 $(DESTDIR)$(PREFIX)/lib/lua/5.1/nd.so \
	  $(DESTDIR)$(PREFIX)/include/nd.h $(DESTDIR)$(PREFIX)/include/nd_lua.h \
	  $(DESTDIR)$(PREFIX)/lib/pkgconfig/nd.pc

clean:
	rm -rf build build-asan build-*
