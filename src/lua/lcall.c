/* How a call enters and leaves the binding: every registered function
 * runs through dispatch, which refuses arguments past its parameter list
 * (largs.c) and knows the name errors are reported under (ndL_fname,
 * call_as for Lua composites); every error leaves through raise, which
 * prefixes the position of the user's code. */
#include "lnd.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Pushes "file:line: " of the user's code that called into nd: the first
 * Lua frame outside nd's own Lua layer (chunks "@nd/..."), as luaL_where
 * would for a direct call; "" when there is none (a tail call, C). */
/* The function the user called when a Lua composite calls nd's C
 * functions (lua/shape.lua's hstack calls cat): while call_as(name, f,
 * ...) runs f, every nd function raises under that name (ndL_fname, and
 * raise below for the messages the binding formats itself). Per thread:
 * a state's calls do not interleave with another's on one thread. */
static _Thread_local const char *alias;

static void where(lua_State *L) {
  lua_Debug ar;
  for (int level = 1; lua_getstack(L, level, &ar); level++) {
    lua_getinfo(L, "Sl", &ar);
    if (strncmp(ar.source, "@nd/", 4) == 0) continue;
    /* call_as's own frame, and Lua 5.1's mark of a tail call on the way
     * to it (nd.lua's checked wrapper tail-calls the composite) */
    if (alias && (ar.what[0] == 'C' || strcmp(ar.what, "tail") == 0)) continue;
    if (ar.currentline > 0) {
      lua_pushfstring(L, "%s:%d: ", ar.short_src, ar.currentline);
      return;
    }
    break;
  }
  lua_pushliteral(L, "");
}

/* Every error leaves through here: position, then the message. */
static int raise(lua_State *L, const char *prefix, const char *msg) {
  where(L);
  lua_pushstring(L, prefix);
  size_t n = alias ? strspn(msg, "abcdefghijklmnopqrstuvwxyz_0123456789") : 0;
  if (n && msg[n] == ':') { /* "cat: ..." as "hstack: ..." */
    lua_pushstring(L, alias);
    msg += n;
  } else {
    lua_pushliteral(L, "");
  }
  lua_pushstring(L, msg);
  lua_concat(L, 4);
  return lua_error(L);
}

int ndL_raise(lua_State *L, const nd_err *e) { return raise(L, "", e->msg); }

int ndL_error(lua_State *L, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return raise(L, "", msg);
}

/* Every registered function is called through dispatch, whose upvalue
 * says what it is: the name errors are reported under (ndL_err) and how
 * many arguments it takes (largs.c). The key tells it from any other
 * userdata upvalue. */
static const char fn_key = 0;
typedef struct ndL_fn {
  const void *key;
  lua_CFunction f;
  const char *name, *params, *hint;
  int nargs; /* -1: any number */
} ndL_fn;

static const ndL_fn *current(lua_State *L) {
  const ndL_fn *d = lua_touserdata(L, lua_upvalueindex(1));
  return d && lua_objlen(L, lua_upvalueindex(1)) == sizeof *d &&
                 d->key == &fn_key ? d : NULL;
}

const char *ndL_fname(lua_State *L) {
  if (alias) return alias;
  const ndL_fn *d = current(L);
  return d ? d->name : NULL;
}

/* call_as(name, f, ...): f(...), its errors named name. */
static int l_call_as(lua_State *L) {
  const char *name = luaL_checkstring(L, 1); /* stays at 1 while f runs */
  luaL_checktype(L, 2, LUA_TFUNCTION);
  const char *saved = alias;
  alias = name;
  int st = lua_pcall(L, lua_gettop(L) - 2, LUA_MULTRET, 0);
  alias = saved;
  if (st) return lua_error(L);
  return lua_gettop(L) - 1;
}

/* Raises when the arguments from first on are more than nargs (trailing
 * nils aside, which it drops); the one home of that rule and message. */
static void check_count(lua_State *L, int first, const char *name,
                        const char *params, const char *hint, int nargs) {
  int n = lua_gettop(L);
  while (n - first + 1 > nargs && lua_isnil(L, n)) n--;
  if (n - first + 1 > nargs)
    ndL_error(L, "%s: takes (%s), got %d argument%s%s%s", name, params,
              n - first + 1, n - first ? "s" : "", hint ? "; " : "",
              hint ? hint : "");
  lua_settop(L, n);
}

static int dispatch(lua_State *L) {
  const ndL_fn *d = lua_touserdata(L, lua_upvalueindex(1));
  if (lua_gettop(L) > d->nargs && d->nargs >= 0)
    check_count(L, 1, d->name, d->params, d->hint, d->nargs);
  return d->f(L);
}

/* nargs(name [, "linalg"]): how many arguments the Lua-layer function
 * name (of nd.linalg) takes (-1: any), from largs.c's table;
 * too_many(name, ...) raises as the dispatcher does. A name missing from
 * the table is an error here, so a Lua function cannot go unchecked. */
static int l_nargs(lua_State *L) {
  const char *params, *hint, *name = luaL_checkstring(L, 1);
  int n = ndL_params(luaL_optstring(L, 2, NULL), name, &params, &hint);
  if (n == -2) return ndL_error(L, "nd: no parameter list for %s", name);
  lua_pushinteger(L, n);
  lua_pushstring(L, params); /* for specs that enumerate the out= forms */
  return 2;
}

static int l_too_many(lua_State *L) {
  const char *params, *hint, *name = luaL_checkstring(L, 1);
  int n = ndL_params(NULL, name, &params, &hint);
  if (n >= 0) check_count(L, 2, name, params, hint, n);
  return 0;
}

void ndL_register_in(lua_State *L, const luaL_Reg *fns, const char *ns) {
  for (; fns->name; fns++) {
    const char *params, *hint;
    int nargs = ndL_params(ns, fns->name, &params, &hint);
    ndL_fn *d = lua_newuserdata(L, sizeof *d);
    d->key = &fn_key;
    d->f = fns->func;
    /* internal entry points (nargs -2) raise under the core's names */
    d->name = nargs == -2 ? NULL : fns->name;
    d->params = params;
    d->hint = hint;
    d->nargs = nargs < 0 ? -1 : nargs;
    lua_pushcclosure(L, dispatch, 1);
    lua_setfield(L, -2, fns->name);
  }
}

void ndL_register(lua_State *L, const luaL_Reg *fns) {
  ndL_register_in(L, fns, NULL);
}

/* fns, named "mod.f" (their entries in largs.c), as the table C.mod of
 * short names f: nd.image, nd.safetensors. */
void ndL_register_module(lua_State *L, const luaL_Reg *fns, const char *mod) {
  size_t skip = strlen(mod) + 1;
  lua_newtable(L); /* under the full names first, then the short ones */
  ndL_register(L, fns);
  lua_newtable(L);
  for (const luaL_Reg *f = fns; f->name; f++) {
    lua_getfield(L, -2, f->name);
    lua_setfield(L, -2, f->name + skip);
  }
  lua_remove(L, -2);
  lua_setfield(L, -2, mod);
}

/* The call functions into the table on top (C). */
void ndL_open_call(lua_State *L) {
  static const luaL_Reg fns[] = {{"nargs", l_nargs}, {"too_many", l_too_many},
                                 {"call_as", l_call_as}, {NULL, NULL}};
  ndL_register(L, fns);
}
