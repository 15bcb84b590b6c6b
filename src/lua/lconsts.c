/* nd.h's lists for the Lua layer (lua/), which never retypes a C number
 * (issue 22): reordering an enum or adding a dtype or an op changes what
 * Lua reads here, nothing else. Both are internal (lua/nd.lua):
 *   C.optable(): one row per op of ND_OPS, ND_MATH_OPS and ND_REDUCE_OPS,
 *     { name =, id = (its enum value), family = "op" | "math" | "reduce",
 *       arity = 1 | 2, result = "same" | "float" | "bool",
 *       integers = true (integer and bool operands only) or nil };
 *   C.consts: { dtypes = { { name =, id =, size =, ctype =, kind = }, ...
 *     in ND_DTYPES order }, NEW =, OUT =, INPLACE =, SHAPE = (the modes),
X(bytes of nd_err's message), status = { OK =,
 *     EINVAL =, ENOMEM =, EOVERFLOW =, EIO = } }. */
#include "lnd.h"

/* Classes as nd.h's ND_OPS comment gives them. */
static void op_row(lua_State *L, int i, const char *name, int id,
                   const char *family, int arity, char cls) {
  lua_createtable(L, 0, 6);
  ndL_setstr(L, "name", name);
  ndL_setint(L, "id", id);
  ndL_setstr(L, "family", family);
  ndL_setint(L, "arity", arity);
  ndL_setstr(L, "result", cls == 'F' ? "float" : cls == 'B' ? "bool" : "same");
  if (cls == 'I') {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "integers");
  }
  lua_rawseti(L, -2, i);
}

/* A function, not a table: the rows are read once, while lua/ops.lua
 * installs the fast paths (and by nd.internal); a table kept in C would
 * cost every collection 18 KB of heap to traverse. */
static int l_optable(lua_State *L) {
  int i = 0;
  lua_createtable(L, ND_NOPS + ND_NMATH + ND_NREDUCE, 0);
#define ROW(E, name, ar, cls, family)                                       \
  op_row(L, ++i, #name, ND_##E, family, ar, #cls[0]);
  ND_OPS(ROW, "op")
  ND_MATH_OPS(ROW, "math")
#undef ROW
#define ROW(E, name, ar, cls, family)                                       \
  op_row(L, ++i, #name, ND_R_##E, family, ar, #cls[0]);
  ND_REDUCE_OPS(ROW, "reduce")
#undef ROW
  return 1;
}

/* C.allocations(f, ...): f(...) called with nd_count_allocations on;
 * returns the tensors allocated and their bytes (nd.testing's
 * allocations). An error in f stops counting and is raised again. */
static int l_allocations(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  nd_count_allocations(1);
  int st = lua_pcall(L, lua_gettop(L) - 1, 0, 0);
  int64_t n, bytes;
  nd_allocations(&n, &bytes);
  nd_count_allocations(0);
  if (st) return lua_error(L);
  ndL_pushint(L, n);
  ndL_pushint(L, bytes);
  return 2;
}

void ndL_open_consts(lua_State *L) {
  int i = 0;
  lua_pushcfunction(L, l_optable);
  lua_setfield(L, -2, "optable");
  lua_pushcfunction(L, l_allocations);
  lua_setfield(L, -2, "allocations");

  lua_createtable(L, 0, 8);
  lua_createtable(L, ND_NDTYPES, 0);
  i = 0;
#define DTYPE(E, name, T, kind)                                             \
  lua_createtable(L, 0, 5);                                                 \
  ndL_setstr(L, "name", #name);                                                 \
  ndL_setint(L, "id", ND_##E);                                                  \
  ndL_setint(L, "size", (int64_t)sizeof(T));                                    \
  ndL_setstr(L, "ctype", #T);                                                   \
  ndL_setstr(L, "kind", (const char[]){kind, 0});                              \
  lua_rawseti(L, -2, ++i);
  ND_DTYPES(DTYPE)
#undef DTYPE
  lua_setfield(L, -2, "dtypes");
  ndL_setint(L, "NEW", ND_NEW);
  ndL_setint(L, "OUT", ND_OUT);
  ndL_setint(L, "INPLACE", ND_INPLACE);
  ndL_setint(L, "SHAPE", ND_SHAPE);
  ndL_setint(L, "MAX_DIMS", ND_MAX_DIMS);
  ndL_setint(L, "ERR_MSG", (int64_t)sizeof(((nd_err *)0)->msg));
  lua_createtable(L, 0, 5);
  ndL_setint(L, "OK", ND_OK);
  ndL_setint(L, "EINVAL", ND_EINVAL);
  ndL_setint(L, "ENOMEM", ND_ENOMEM);
  ndL_setint(L, "EOVERFLOW", ND_EOVERFLOW);
  ndL_setint(L, "EIO", ND_EIO);
  lua_setfield(L, -2, "status");
  lua_setfield(L, -2, "consts");
}
