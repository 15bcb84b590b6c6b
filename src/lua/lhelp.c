/* Small argument and result helpers shared by the area bindings (declared
 * at the end of lnd.h): the (t, dim, index) head of the indexing family's
 * arguments, and several fresh results made and returned together. */
#include "lnd.h"

nd_tensor *ndL_dim_index(lua_State *L, const char *fn, int *dim,
                         nd_tensor **index) {
  nd_tensor *t = ndL_check(L, 1, fn);
  *dim = ndL_dim(L, 2, t->ndim, fn);
  *index = ndL_check(L, 3, fn);
  return t;
}

void ndL_new_n(lua_State *L, int n, nd_tensor **r) {
  for (int i = 0; i < n; i++) r[i] = ndL_new(L);
}

int ndL_return(lua_State *L, int n, nd_tensor *const *r, int numbers) {
  if (numbers && r[0]->ndim == 0) {
    int64_t none[1] = {0};
    for (int i = 0; i < n; i++) ndL_push_elem(L, r[i], none);
  } else {
    for (int i = 0; i < n; i++) ndL_charge(L, r[i]);
  }
  return n;
}
