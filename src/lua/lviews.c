/* Views and table indexing: argument parsing over the core's view rules. */
#include "lnd.h"
#include <string.h>

/* The receiving userdata is made before the core call, so a failure
 * leaves an unset header and nothing leaks. A view borrows the storage
 * reference of its owner's anchor (lobject.c): the core's own is dropped. */
#define VIEW_AS(L, fn, call)                                                \
  do {                                                                      \
    nd_tensor *r = ndL_new_view(L, 1);                                      \
    nd_err e = ndL_err();                                                   \
    NDL_CALL_AS(L, fn, e, call);                                            \
    ndL_borrow(r);                                                          \
    return 1;                                                               \
  } while (0)
#define VIEW(L, call) VIEW_AS(L, NULL, call)
/* reshape and flatten copy when no view can express the result: those
 * results own their storage (a tensor with a finalizer). */
#define OWNED(L, call)                                                      \
  do {                                                                      \
    ndL_arm(L, 1); /* the result may be a view after all */                \
    nd_tensor *r = ndL_new(L);                                              \
    nd_err e = ndL_err();                                                   \
    NDL_CALL(L, e, call);                                                   \
    ndL_charge(L, r);                                                       \
    return 1;                                                               \
  } while (0)

static int l_select(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "select");
  int d = ndL_dim(L, 2, t->ndim, "select");
  int64_t i = ndL_index(L, 3, t->size[d], "select", "index");
  VIEW(L, nd_select(&e, r, t, d, i));
}

static int l_narrow(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "narrow");
  int d = ndL_dim(L, 2, t->ndim, "narrow");
  int64_t s = ndL_int(L, 3, "narrow", "start");
  int64_t len = ndL_int(L, 4, "narrow", "length");
  if (s == 0) return ndL_error(L, "narrow: start 0 is invalid (positions "
                                "start at 1)");
  if (s < 0 && s + t->size[d] + 1 < 1)
    return ndL_error(L, "narrow: start %lld out of range for dim %d of size "
                      "%lld", (long long)s, d + 1, (long long)t->size[d]);
  if (s < 0) s += t->size[d] + 1;
  VIEW(L, nd_narrow(&e, r, t, d, s - 1, len));
}

static int l_transpose(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "transpose");
  int a = ndL_dim_of(L, 2, t, "transpose");
  int b = ndL_dim_of(L, 3, t, "transpose");
  VIEW(L, nd_transpose(&e, r, t, a, b));
}

static int l_t(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "t");
  if (t->ndim > 2)
    return ndL_error(L, "t: expects a tensor of at most 2 dims, got %d "
                      "(use transpose or permute)", t->ndim);
  if (t->ndim < 2) { /* a new header on the same elements */
    *ndL_new_view(L, 1) = *t;
    return 1;
  }
  VIEW(L, nd_transpose(&e, r, t, 0, 1));
}

static int l_permute(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "permute");
  int perm[ND_MAX_DIMS], n;
  if (lua_istable(L, 2)) {
    n = ndL_dimlist(L, 2, t->ndim, "permute", perm);
  } else {
    n = lua_gettop(L) - 1;
    if (n > ND_MAX_DIMS) n = ND_MAX_DIMS + 1;
    for (int i = 0; i < n && i < ND_MAX_DIMS; i++)
      perm[i] = ndL_dim(L, i + 2, t->ndim, "permute");
  }
  if (n != t->ndim)
    return ndL_error(L, "permute: %d dims given for a tensor of %d dims", n,
                      t->ndim);
  VIEW(L, nd_permute(&e, r, t, perm));
}

static int l_expand(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "expand");
  int64_t size[ND_MAX_DIMS];
  int next, n = ndL_shape(L, 2, "expand", size, &next);
  VIEW(L, nd_expand(&e, r, t, n, size));
}

static int l_broadcast_to(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "broadcast_to");
  int64_t size[ND_MAX_DIMS];
  int next, n = ndL_shape(L, 2, "broadcast_to", size, &next);
  VIEW_AS(L, "broadcast_to", nd_expand(&e, r, t, n, size));
}

static int l_expand_as(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "expand_as");
  nd_tensor *u = ndL_check(L, 2, "expand_as");
  VIEW_AS(L, "expand_as", nd_expand(&e, r, t, u->ndim, u->size));
}

static int l_view(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "view");
  int64_t size[ND_MAX_DIMS];
  int next, n = ndL_shape(L, 2, "view", size, &next);
  VIEW(L, nd_view(&e, r, t, n, size));
}

static int l_view_as(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "view_as");
  nd_tensor *u = ndL_check(L, 2, "view_as");
  VIEW(L, nd_view(&e, r, t, u->ndim, u->size));
}

static int l_reshape(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "reshape");
  int64_t size[ND_MAX_DIMS];
  int next, n = ndL_shape(L, 2, "reshape", size, &next);
  OWNED(L, nd_reshape(&e, r, t, n, size));
}

static int l_squeeze(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "squeeze");
  if (lua_isnoneornil(L, 2)) VIEW(L, nd_squeeze_all(&e, r, t));
  if (t->ndim == 0) {
    int64_t p = ndL_int(L, 2, "squeeze", "dim");
    if (p != 1 && p != -1)
      return ndL_error(L, "squeeze: dim %lld out of range for a 0-d tensor",
                        (long long)p);
    VIEW(L, nd_squeeze_all(&e, r, t));
  }
  int d = ndL_dim(L, 2, t->ndim, "squeeze");
  VIEW(L, nd_squeeze(&e, r, t, d));
}

static int l_unsqueeze(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "unsqueeze");
  int d = ndL_dim(L, 2, t->ndim + 1, "unsqueeze");
  VIEW(L, nd_unsqueeze(&e, r, t, d));
}

static int l_flatten(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "flatten");
  if (t->ndim == 0) OWNED(L, nd_flatten(&e, r, t, 0, 0));
  int a = lua_isnoneornil(L, 2) ? 0 : ndL_dim(L, 2, t->ndim, "flatten");
  int b = lua_isnoneornil(L, 3) ? t->ndim - 1 : ndL_dim(L, 3, t->ndim, "flatten");
  OWNED(L, nd_flatten(&e, r, t, a, b));
}

static int l_unfold(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "unfold");
  int d = ndL_dim(L, 2, t->ndim ? t->ndim : 1, "unfold");
  int64_t size = ndL_int(L, 3, "unfold", "size");
  int64_t step = ndL_int(L, 4, "unfold", "step");
  VIEW(L, nd_unfold(&e, r, t, d, size, step));
}

static int l_diagonal(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "diagonal");
  int64_t off = ndL_optint(L, 2, "diagonal", "offset", 0);
  if (t->ndim < 2)
    return ndL_error(L, "diagonal: expects at least 2 dims, got %d", t->ndim);
  int a = lua_isnoneornil(L, 3) ? 0 : ndL_dim(L, 3, t->ndim, "diagonal");
  int b = lua_isnoneornil(L, 4) ? 1 : ndL_dim(L, 4, t->ndim, "diagonal");
  VIEW(L, nd_diagonal(&e, r, t, off, a, b));
}

static int l_movedim(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "movedim");
  int a = ndL_dim_of(L, 2, t, "movedim");
  int b = ndL_dim_of(L, 3, t, "movedim");
  VIEW(L, nd_movedim(&e, r, t, a, b));
}

static int l_flip(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "flip");
  int dims[ND_MAX_DIMS], n = 0;
  if (lua_isnoneornil(L, 2)) { /* NumPy: no dims flips them all */
    for (n = 0; n < t->ndim; n++) dims[n] = n;
  } else if (lua_istable(L, 2)) {
    n = ndL_dimlist(L, 2, t->ndim, "flip", dims);
  } else {
    for (int i = 2; i <= lua_gettop(L); i++) {
      if (n == ND_MAX_DIMS) return ndL_error(L, "flip: too many dims");
      dims[n++] = ndL_dim_of(L, i, t, "flip");
    }
  }
  VIEW(L, nd_flip(&e, r, t, n, dims));
}

static int l_as_strided(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "as_strided");
  int64_t size[ND_MAX_DIMS], stride[ND_MAX_DIMS];
  int next;
  if (!lua_istable(L, 2) || !lua_istable(L, 3))
    return ndL_error(L, "as_strided: sizes and strides must be tables");
  int n = ndL_sizes(L, 2, "as_strided", size, &next);
  int m = (int)lua_objlen(L, 3);
  if (m != n)
    return ndL_error(L, "as_strided: %d sizes but %d strides", n, m);
  for (int i = 0; i < n; i++) {
    lua_rawgeti(L, 3, i + 1);
    stride[i] = ndL_int(L, -1, "as_strided", "stride");
    lua_pop(L, 1);
  }
  int64_t off = ndL_optint(L, 4, "as_strided", "offset", t->offset);
  VIEW(L, nd_as_strided(&e, r, t, n, size, stride, off));
}

/* ---- table indexing: t[{...}] ---- */
/* The entries of an index or range table: those before its first nil,
 * as ipairs reads them (LuaJIT compiles that for a table it need not
 * build, where `#` makes it build m[{i, j}]'s table; lua/views.lua and
 * lua/elements.lua read the same). A nil followed by an entry at or
 * before position upto is the entry it stands for, not the end: *hole is
 * its position (else 0), which the caller names in its error. */
static int entries(lua_State *L, int idx, int upto, int *hole) {
  int n = 0;
  for (;; n++) {
    lua_rawgeti(L, idx, n + 1);
    int end = lua_isnil(L, -1);
    lua_pop(L, 1);
    if (end) break;
  }
  *hole = 0;
  for (int p = n + 2; p <= upto && !*hole; p++) {
    lua_rawgeti(L, idx, p);
    if (!lua_isnil(L, -1)) *hole = n + 1;
    lua_pop(L, 1);
  }
  return n;
}

/* Applies the index table at idx to t, writing the view into r (a view
 * userdata, which borrows: an error mid-way leaks nothing). Returns whether every dim
 * of a tensor of at least one dim was selected by a number. */
static int apply_index(lua_State *L, const nd_tensor *t, int idx,
                       nd_tensor *r, const char *fn) {
  int hole, numbers;
  int n = entries(L, idx, t->ndim + 1, &hole);
  ndL_entry x[ND_MAX_DIMS];
  nd_err e = ndL_err();
  if (hole)
    return ndL_error(L, "%s: index entry %d must be a number or a range "
                      "table, got nil", fn, hole);
  if (n > t->ndim)
    return ndL_error(L, "%s: %d index entries for a tensor of %d dims", fn,
                      n, t->ndim);
  for (int k = 1; k <= n; k++) {
    lua_rawgeti(L, idx, k);
    int top = lua_gettop(L), ty = lua_type(L, top);
    ndL_entry *en = &x[k - 1];
    if (ty == LUA_TNUMBER) {
      en->m = -1;
      en->v[0] = ndL_int(L, top, fn, "index");
    } else if (ty == LUA_TTABLE) {
      en->m = entries(L, top, 4, &hole);
      if (hole) { /* {first, nil, step}: the nil is the entry at fault */
        lua_rawgeti(L, top, hole);
        ndL_int(L, -1, fn, hole == 3 ? "step" : "range bound");
      }
      if (en->m > 3)
        return ndL_error(L, "%s: a range has at most 3 entries {first, "
                          "last, step}, entry %d has %d", fn, k, en->m);
      for (int j = 0; j < en->m; j++) {
        lua_rawgeti(L, top, j + 1);
        en->v[j] = ndL_int(L, -1, fn, j == 2 ? "step" : "range bound");
        lua_pop(L, 1);
      }
    } else {
      return ndL_error(L, "%s: index entry %d must be a number or a range "
                        "table, got %s", fn, k, luaL_typename(L, top));
    }
    lua_pop(L, 1);
  }
  if (ndL_index_entries(&e, r, t, n, x, fn, &numbers)) ndL_raise(L, &e);
  return numbers == t->ndim && t->ndim > 0;
}

/* t[k]: a number selects along dim 1 (0-d results come back as values);
 * a table indexes several dims. */
static int l_index(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "index");
  nd_tensor *r = ndL_new_view(L, 1);
  int scalar;
  if (lua_type(L, 2) == LUA_TNUMBER) {
    if (t->ndim == 0) return ndL_error(L, "index: a 0-d tensor cannot be "
                                        "indexed by a number");
    int64_t i = ndL_index(L, 2, t->size[0], "index", "index");
    nd_err e = ndL_err();
    NDL_CALL(L, e, nd_select(&e, r, t, 0, i));
    ndL_borrow(r);
    scalar = r->ndim == 0;
  } else if (lua_istable(L, 2)) {
    scalar = apply_index(L, t, 2, r, "index");
  } else if (ndL_test(L, 2)) {
    return ndL_tensor_key(L, 0);
  } else {
    return ndL_error(L, "index: key must be a method name, number or table, "
                      "got %s", luaL_typename(L, 2));
  }
  if (scalar) ndL_push_elem(L, r, NULL);
  return 1;
}

/* t[k] = v: fills (number, boolean) or copies (tensor, broadcast). */
static int l_newindex(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "newindex");
  /* The part written is never seen by Lua: a header on the C stack,
   * holding no reference (t, at 1, keeps the storage). */
  nd_tensor part = ND_UNSET, *r = &part;
  nd_err e = ndL_err();
  if (lua_type(L, 2) == LUA_TNUMBER) {
    if (t->ndim == 0) return ndL_error(L, "newindex: a 0-d tensor cannot be "
                                        "indexed by a number");
    int64_t i = ndL_index(L, 2, t->size[0], "newindex", "index");
    NDL_CALL(L, e, nd_select(&e, r, t, 0, i));
    ndL_borrow(r);
  } else if (lua_istable(L, 2)) {
    apply_index(L, t, 2, r, "newindex");
  } else if (ndL_test(L, 2)) {
    return ndL_tensor_key(L, 1);
  } else {
    return ndL_error(L, "newindex: key must be a number or table, got %s",
                      luaL_typename(L, 2));
  }
  nd_tensor *v = ndL_test(L, 3);
  nd_status st;
  if (nd_check_writable(&e, "newindex", r)) ndL_raise(L, &e);
  if (v)
    st = nd_copy(&e, r, v);
  else if ((e.fn = "newindex", !ndL_fill_value(L, 3, r, &e, &st)))
    return ndL_error(L, "newindex: value must be a number, boolean or "
                      "tensor, got %s", luaL_typename(L, 3));
  if (st) ndL_raise(L, &e);
  return 0;
}

void ndL_open_views(lua_State *L) {
  static const luaL_Reg fns[] = {
      {"select", l_select}, {"narrow", l_narrow}, {"transpose", l_transpose},
      {"t", l_t}, {"permute", l_permute}, {"expand", l_expand},
      {"broadcast_to", l_broadcast_to}, {"expand_as", l_expand_as},
      {"view", l_view}, {"view_as", l_view_as}, {"reshape", l_reshape},
      {"squeeze", l_squeeze}, {"unsqueeze", l_unsqueeze},
      {"flatten", l_flatten}, {"unfold", l_unfold}, {"diagonal", l_diagonal},
      {"movedim", l_movedim}, {"flip", l_flip}, {"as_strided", l_as_strided},
      {"index", l_index}, {"newindex", l_newindex}, {NULL, NULL}};
  ndL_register(L, fns);
}
