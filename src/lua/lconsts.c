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

static void setint(lua_State *L, const char *k, int64_t v) {
  ndL_pushint(L, v);
  lua_setfield(L, -2, k);
}
static void setstr(lua_State *L, const char *k, const char *v) {
  lua_pushstring(L, v);
  lua_setfield(L, -2, k);
}

/* Classes as nd.h's ND_OPS comment gives them. */
static void op_row(lua_State *L, int i, const char *name, int id,
                   const char *family, int arity, char cls) {
  lua_createtable(L, 0, 6);
  setstr(L, "name", name);
  setint(L, "id", id);
  setstr(L, "family", family);
  setint(L, "arity", arity);
  setstr(L, "result", cls == 'F' ? "float" : cls == 'B' ? "bool" : "same");
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

void ndL_open_consts(lua_State *L) {
  int i = 0;
  lua_pushcfunction(L, l_optable);
  lua_setfield(L, -2, "optable");

  lua_createtable(L, 0, 8);
  lua_createtable(L, ND_NDTYPES, 0);
  i = 0;
#define DTYPE(E, name, T, kind)                                             \
  lua_createtable(L, 0, 5);                                                 \
  setstr(L, "name", #name);                                                 \
  setint(L, "id", ND_##E);                                                  \
  setint(L, "size", (int64_t)sizeof(T));                                    \
  setstr(L, "ctype", #T);                                                   \
  setstr(L, "kind", (const char[]){kind, 0});                              \
  lua_rawseti(L, -2, ++i);
  ND_DTYPES(DTYPE)
#undef DTYPE
  lua_setfield(L, -2, "dtypes");
  setint(L, "NEW", ND_NEW);
  setint(L, "OUT", ND_OUT);
  setint(L, "INPLACE", ND_INPLACE);
  setint(L, "SHAPE", ND_SHAPE);
  setint(L, "MAX_DIMS", ND_MAX_DIMS);
  setint(L, "ERR_MSG", (int64_t)sizeof(((nd_err *)0)->msg));
  lua_createtable(L, 0, 5);
  setint(L, "OK", ND_OK);
  setint(L, "EINVAL", ND_EINVAL);
  setint(L, "ENOMEM", ND_ENOMEM);
  setint(L, "EOVERFLOW", ND_EOVERFLOW);
  setint(L, "EIO", ND_EIO);
  lua_setfield(L, -2, "status");
  lua_setfield(L, -2, "consts");
}
