/* luaopen_nd, the top of the binding (as PUC Lua's linit.c is of Lua's
 * libraries): lnd.c's ndL_open over every area's functions. The list is
 * here, not in lnd.c, because every area calls lnd.c's helpers. */
#include "lnd.h"

static void open_areas(lua_State *L) {
  ndL_open_ffi(L);    /* the FFI's entries (lffi.c, lfcall.c), which call */
  ndL_open_fcalls(L); /* into the areas (lrandom.c's generators) */
  ndL_open_tensor(L);
  ndL_open_construct(L);
  ndL_open_views(L);
  ndL_open_copies(L);
  ndL_open_ops(L);
  ndL_open_consts(L);
  ndL_open_matmul(L);
  ndL_open_contract(L);
  ndL_open_conv(L);
  ndL_open_io(L);
  ndL_open_wrap(L);
  ndL_open_math(L);
  ndL_open_sort(L);
  ndL_open_count(L);
  ndL_open_pool(L);
  ndL_open_index(L);
  ndL_open_linalg(L);
  ndL_open_random(L);
  ndL_open_filter(L);
  ndL_open_image(L);
  ndL_open_safetensors(L);
}

int luaopen_nd(lua_State *L) { return ndL_open(L, open_areas); }
