/* The tensor object (docs/ref-embedding.md, "The tensor object"): what
 * a tensor is to Lua -- one cdata type under LuaJIT's FFI, one userdata
 * elsewhere --, how it keeps its storage alive (owners, views and their
 * anchors, small tensors and arming), how C makes one (ndL_new,
 * ndL_new_view), how it is recognised (ndL_object) and released, what
 * its elements cost the collector (ndL_charge), and the FFI's view of
 * it (struct sizes, the tags, ffi_api). */
#include "lnd.h"
#include <stddef.h>
#include <string.h>

/* A tensor userdata: a type tag, then a pointer to the header (from the
 * allocator hook: a 32-byte userdata costs LuaJIT's allocator and
 * collector a third of what a 300-byte one does). The tag is what makes
 * an object an nd tensor -- not its metatable, which debug.setmetatable can
 * put on any userdata -- and it is checked together with the userdata's
 * size, so a foreign userdata is never read past its end. A released
 * tensor keeps its block and its header (so a pointer from nd_lua_check
 * stays valid while the value lives) with the tag NDL_DEAD and the header
 * unset; __gc frees the header. The tags derive from an address inside this copy of nd,
 * so a tensor of another copy of nd in the process is foreign. lua/ffi.lua
 * declares the same struct and reads the tag before every fast path. */
static const char tag_anchor = 0;
#define NDL_TAG_MASK ((UINT64_C(1) << 52) - 1) /* exact as a Lua number */
static uint64_t tag_live(void) {
  return (((uint64_t)(uintptr_t)&tag_anchor ^ UINT64_C(0x6e6454656e736f72)) &
          NDL_TAG_MASK) | (UINT64_C(1) << 52);
}
#define NDL_LIVE tag_live()
#define NDL_DEAD (NDL_LIVE ^ 1)

/* Under LuaJIT's FFI every tensor is one cdata type, which only Lua can
 * make: lua/ffi.lua registers its maker here (registry, make_key), and
 * ndL_new and ndL_new_view call it. make(0) gives an owner (header
 * inline, a finalizer that drops its storage reference), make(1, anchor)
 * a view kept with anchor. Without the FFI (PUC Lua) tensors are
 * userdata, with one metatable for owners and views. */
static const char make_key = 0;

/* Pushes the maker and returns 1, or returns 0 when there is none. */
static int push_maker(lua_State *L) {
  lua_pushlightuserdata(L, (void *)&make_key);
  lua_rawget(L, LUA_REGISTRYINDEX);
  if (lua_isfunction(L, -1)) return 1;
  lua_pop(L, 1);
  return 0;
}

/* A call from C into Lua costs LuaJIT more than the object: the maker
 * fills a pool (registry, pool_key[kind]) with a batch of fresh owners
 * (kind 0) or views (kind 1), from which each call takes one. Pushes it
 * and returns it, or returns NULL (nothing pushed) without a maker. */
static const char pool_key[2] = {0, 0};
static ndL_obj *pop_made(lua_State *L, int kind) {
  lua_pushlightuserdata(L, (void *)&pool_key[kind]);
  lua_rawget(L, LUA_REGISTRYINDEX);
  if (!lua_istable(L, -1)) {
    lua_pop(L, 1);
    if (!push_maker(L)) return NULL;
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushlightuserdata(L, (void *)&pool_key[kind]);
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
  }
  int n = (int)lua_objlen(L, -1);
  if (n == 0) {
    if (!push_maker(L)) return lua_pop(L, 1), (ndL_obj *)NULL;
    lua_pushinteger(L, kind);
    lua_pushvalue(L, -3);
    lua_call(L, 2, 0);
    n = (int)lua_objlen(L, -1);
  }
  lua_rawgeti(L, -1, n);
  lua_pushnil(L);
  lua_rawseti(L, -3, n);
  lua_remove(L, -2);
  ndL_obj *o = ndL_object(L, -1);
  if (!o || o->tag != NDL_LIVE)
    ndL_error(L, "nd: the FFI tensor maker made %s", luaL_typename(L, -1));
  return o;
}

nd_tensor *ndL_new(lua_State *L) {
  ndL_obj *made = pop_made(L, 0);
  if (made) return made->t; /* zero-filled by ffi.new: unset */
  ndL_obj *o = lua_newuserdata(L, sizeof *o);
  o->tag = NDL_DEAD; /* not a tensor until the header is there */
  o->t = NULL;
  o->kind = 0;
  /* The metatable under a light userdata key: no string interning. */
  lua_pushlightuserdata(L, (void *)&tag_anchor);
  lua_rawget(L, LUA_REGISTRYINDEX);
  lua_setmetatable(L, -2);
  nd_tensor *h = nd_hook_alloc(sizeof *h, &o->free, &o->ud);
  if (!h) {
    lua_gc(L, LUA_GCCOLLECT, 0);
    h = nd_hook_alloc(sizeof *h, &o->free, &o->ud);
    if (!h) ndL_error(L, "not enough memory for a tensor header");
  }
  h->storage = NULL; /* unset; the core writes the dims it uses */
  h->offset = 0;
  h->dtype = 0;
  h->ndim = 0;
  o->t = h;
  o->tag = NDL_LIVE;
  return h;
}

/* Views: a view has its header inline and holds no reference count of
 * its own, so it needs no finalizer. Its anchor is the anchor table
 * {anchor} of the tensor it was taken from, made once per owner and
 * shared by every view of it and of its views; the anchor is a small
 * userdata holding one reference to the storage, released by the
 * anchor's finalizer. A userdata keeps its anchor as its environment
 * (uservalue); a cdata, which has none, in the registry's keep table
 * (weak keys). So a view costs one allocation that the sweep frees, and
 * its elements stay while any view reaches them, whatever happens to the
 * owner (release(), __gc by hand). The debug library can replace a
 * userdata's environment; like debug.setmetatable, that is outside what
 * nd protects. */
static const char anchor_key = 0; /* registry: the anchor metatable */
static const char keep_key = 0;   /* registry: the keep table */
#if LUA_VERSION_NUM >= 502
#define get_env lua_getuservalue
#define set_env lua_setuservalue
#else
#define get_env lua_getfenv
#define set_env lua_setfenv
#endif
#if LUA_VERSION_NUM >= 504
#define new_plain_udata(L, n) lua_newuserdatauv(L, n, 0)
#else
#define new_plain_udata(L, n) lua_newuserdata(L, n)
#endif
/* lua_type's value for cdata under LuaJIT (lua.h does not name it). */
#define NDL_TCDATA 10

static void push_keep(lua_State *L) {
  lua_pushlightuserdata(L, (void *)&keep_key);
  lua_rawget(L, LUA_REGISTRYINDEX);
}
/* The anchor of the tensor at idx (absolute), pushed; nil when none. */
static void get_anchor(lua_State *L, int idx) {
  if (lua_type(L, idx) != NDL_TCDATA) return (void)get_env(L, idx);
  push_keep(L);
  lua_pushvalue(L, idx);
  lua_rawget(L, -2);
  lua_remove(L, -2);
}
/* Pops a value and makes it the anchor of the tensor at idx (absolute). */
static void set_anchor(lua_State *L, int idx) {
  if (lua_type(L, idx) != NDL_TCDATA) return (void)set_env(L, idx);
  push_keep(L);
  lua_pushvalue(L, idx);
  lua_pushvalue(L, -3);
  lua_rawset(L, -3);
  lua_pop(L, 2);
}

static int anchor_gc(lua_State *L) {
  nd_storage **a = lua_touserdata(L, 1);
  if (a && *a) {
    nd_storage *s = *a;
    *a = NULL;
    nd_storage_release(s);
  }
  return 0;
}

/* Pushes the anchor table of the live tensor b at bidx, making it (and
 * the anchor's storage reference) on the first view of an owner. */
static void push_anchor(lua_State *L, int bidx, ndL_obj *b) {
  if (b->kind & NDL_INLINE) { /* its elements live as long as it does */
    lua_createtable(L, 1, 0);
    lua_pushvalue(L, bidx);
    lua_rawseti(L, -2, 1);
  } else if (b->kind & (NDL_VIEW | NDL_ANCHORED)) {
    get_anchor(L, bidx);
    if (!lua_istable(L, -1)) ndL_error(L, "view: a view without its anchor");
  } else {
    lua_createtable(L, 1, 0);
    nd_storage **a = new_plain_udata(L, sizeof *a);
    *a = NULL;
    lua_pushlightuserdata(L, (void *)&anchor_key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    lua_setmetatable(L, -2);
    nd_storage_retain(b->t->storage);
    *a = b->t->storage;
    lua_rawseti(L, -2, 1);
    lua_pushvalue(L, -1);
    set_anchor(L, bidx);
    b->kind |= NDL_ANCHORED;
  }
}

static ndL_obj *live_base(lua_State *L, int bidx) {
  ndL_obj *b = ndL_object(L, bidx);
  if (!b || b->tag != NDL_LIVE || !b->t->storage)
    ndL_check(L, bidx, "view"); /* raises */
  return b;
}

nd_tensor *ndL_new_view(lua_State *L, int bidx) {
  if (bidx < 0) bidx = lua_gettop(L) + bidx + 1;
  ndL_obj *b = live_base(L, bidx);
  ndL_obj *made = pop_made(L, 1);
  if (made) {
    push_anchor(L, bidx, b);
    set_anchor(L, lua_gettop(L) - 1);
    return made->t;
  }
  ndL_obj *o = lua_newuserdata(L, sizeof *o + sizeof(nd_tensor));
  nd_tensor *h = (nd_tensor *)(o + 1);
  h->storage = NULL;
  h->ndim = 0;
  o->tag = NDL_LIVE;
  o->t = h;
  o->free = NULL;
  o->ud = NULL;
  o->kind = NDL_VIEW;
  lua_pushlightuserdata(L, (void *)&tag_anchor);
  lua_rawget(L, LUA_REGISTRYINDEX);
  lua_setmetatable(L, -2);
  push_anchor(L, bidx, b);
  set_anchor(L, lua_gettop(L) - 1);
  return h;
}

/* anchor(t): the anchor table an FFI view of t keeps (lua/views.lua). */
static int l_anchor(lua_State *L) {
  push_anchor(L, 1, live_base(L, 1));
  return 1;
}

ndL_obj *ndL_object(lua_State *L, int idx) {
  int ty = lua_type(L, idx);
  ndL_obj *o;
  if (ty == LUA_TUSERDATA) {
    if (lua_objlen(L, idx) < sizeof(ndL_obj)) return NULL;
    o = lua_touserdata(L, idx);
    if (o->kind & NDL_CDATA) return NULL; /* only FFI views carry it */
  } else if (LUA_VERSION_NUM == 501 && ty == NDL_TCDATA) {
    /* LuaJIT's lua_topointer gives a cdata's payload. The tag comes first
     * and is read before anything else: a foreign cdata of fewer bytes
     * still spans 8 (LuaJIT's allocation unit); only one that carries
     * this copy's tag, forged through the FFI, gets further. */
    o = (ndL_obj *)lua_topointer(L, idx);
    if (!o || (o->tag != NDL_LIVE && o->tag != NDL_DEAD) ||
        (o->kind != (NDL_VIEW | NDL_CDATA) &&
         o->kind != (NDL_INLINE | NDL_CDATA) && o->kind != NDL_CDATA &&
         o->kind != (NDL_ANCHORED | NDL_CDATA)) ||
        o->t != (nd_tensor *)(o + 1))
      return NULL;
    return o;
  } else {
    return NULL;
  }
  return o->tag == NDL_LIVE || o->tag == NDL_DEAD ? o : NULL;
}

/* Small tensors made by the FFI (lua/small.lua) keep their elements in
 * the cdata -- object, header, storage, elements, as ndL_small says --
 * which the collector frees with no finalizer (the storage's ctx is the
 * address of inline_key). Views of one borrow and anchor it, as any view.
 * Only a host's nd_share after nd_lua_check (kept, maybe, past lua_close)
 * and results that share the storage (reshape, flatten) keep a reference
 * past the call: before those, ndL_arm moves the elements to a storage of
 * the allocator's, which the small tensor's header then holds (one
 * reference, dropped by an FFI finalizer that lua/ffi.lua sets), and
 * points the inline storage's data there too, so views made before still
 * see every write. Every other use costs nothing. */
typedef struct ndL_small {
  ndL_obj o; /* o.ud: the moved-to storage, once armed */
  nd_tensor h;
  nd_storage s;
} ndL_small;
static const char inline_key = 0;

int ndL_inline(const nd_storage *s) { return s && s->ctx == &inline_key; }

void ndL_arm(lua_State *L, int idx) {
  ndL_obj *o = ndL_object(L, idx);
  if (!o || !o->t || !o->t->storage ||
      o->t->storage->ctx != (void *)&inline_key)
    return;
  if (idx < 0 && idx > LUA_REGISTRYINDEX) idx = lua_gettop(L) + idx + 1;
  luaL_checkstack(L, 4, "nd: arming a small tensor");
  if (o->kind == (NDL_INLINE | NDL_CDATA)) {
    lua_pushvalue(L, idx);
  } else if (o->kind & NDL_VIEW) { /* a view: the small tensor anchors it */
    push_anchor(L, idx, o);
    lua_rawgeti(L, -1, 1);
    lua_remove(L, -2);
  } else {
    return; /* never: only views and the cdata itself hold it */
  }
  ndL_small *sm = (ndL_small *)ndL_object(L, -1);
  if (!sm || sm->o.kind != (NDL_INLINE | NDL_CDATA))
    ndL_error(L, "nd: a small tensor's view without its tensor"); /* never */
  nd_storage *heap = sm->o.ud;
  if (!heap) {
    if (!push_maker(L)) ndL_error(L, "nd: a small tensor without the FFI"); /* never */
    lua_pushinteger(L, 2);
    lua_pushvalue(L, -3);
    lua_call(L, 2, 0); /* the finalizer first (it releases o.ud, NULL so far) */
    nd_err e = ndL_err();
    nd_tensor bytes = ND_UNSET; /* its storage reference becomes sm's */
    int64_t n = sm->s.nbytes;
    NDL_CALL(L, e, nd_empty(&e, &bytes, ND_UINT8, 1, &n));
    heap = bytes.storage;
    memcpy(heap->data, sm->s.data, (size_t)n);
    sm->o.ud = heap;
    sm->s.data = heap->data;
    sm->h.storage = heap;
  }
  if (o->t->storage == &sm->s) o->t->storage = heap; /* a view borrows it */
  lua_pop(L, 1);
}

/* The bytes of a new small tensor (lua/ffi.lua's new_small: its elements
 * inside the object) of dtype and n sizes at size, row-major, or of the
 * layout of plan (an elementwise result's, from the core's ND_SHAPE: its
 * dims dense in some order); 0 when it would be empty, too big, or (plan)
 * not dense. With r, r's dims and strides are set too. */
static int small_bytes(int dtype, int n, const int64_t *size) {
  int64_t numel = 1;
  if (n < 0 || n > ND_MAX_DIMS || dtype < 0 || dtype >= ND_NDTYPES) return 0;
  for (int i = 0; i < n; i++) {
    if (size[i] < 1 || size[i] > NDL_SMALL) return 0;
    numel *= size[i];
    if (numel > NDL_SMALL) return 0;
  }
  int64_t bytes = numel * nd_dtype_size(dtype);
  return bytes > NDL_SMALL ? 0 : (int)bytes;
}
int ndL_small_sized(nd_tensor *r, int dtype, int n, const int64_t *size) {
  int bytes = small_bytes(dtype, n, size);
  if (r && bytes) {
    r->ndim = n;
    int64_t st = 1;
    for (int i = n - 1; i >= 0; st *= size[i], i--) {
      r->size[i] = size[i];
      r->stride[i] = st;
    }
  }
  return bytes;
}
int ndL_small_of(nd_tensor *r, const nd_tensor *plan) {
  int n = plan->ndim, bytes = small_bytes(plan->dtype, n, plan->size);
  if (!bytes) return 0;
  /* dense: the dims of more than one element (any stride for the others)
   * have strides 1, s1, s1 s2, ... in some order (row-major first) */
  if (!nd_is_contiguous(plan)) {
    int done[ND_MAX_DIMS] = {0}, m = 0;
    for (int i = 0; i < n; i++) m += plan->size[i] > 1;
    for (int64_t want = 1, k = 0; k < m; k++) {
      int d = -1;
      for (int i = 0; i < n && d < 0; i++)
        if (!done[i] && plan->size[i] > 1 && plan->stride[i] == want) d = i;
      if (d < 0) return 0;
      done[d] = 1;
      want *= plan->size[d];
    }
  }
  if (r) {
    r->ndim = n;
    for (int i = 0; i < n; i++) { /* a few dims: no memcpy call */
      r->size[i] = plan->size[i];
      r->stride[i] = plan->stride[i];
    }
  }
  return bytes;
}

/* arm(t): the same for lua/ffi.lua's t:cdata() (an address for keeps). */
static int l_arm(lua_State *L) {
  ndL_check(L, 1, "cdata");
  ndL_arm(L, 1);
  return 0;
}

/* set_maker(f): lua/ffi.lua's maker of cdata tensors (see make_key). */
static int l_set_maker(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_pushlightuserdata(L, (void *)&make_key);
  lua_pushvalue(L, 1);
  lua_rawset(L, LUA_REGISTRYINDEX);
  return 0;
}

nd_tensor *ndL_test(lua_State *L, int idx) {
  ndL_obj *o = ndL_object(L, idx);
  return o && o->tag == NDL_LIVE && o->t->storage ? o->t : NULL;
}

const char *ndL_typename(lua_State *L, int idx) {
  ndL_obj *o = ndL_object(L, idx);
  if (o && o->tag == NDL_DEAD) return "released tensor";
  if (o && ndL_test(L, idx)) return "tensor"; /* userdata or cdata */
  int ty = lua_type(L, idx);
  return lua_typename(L, ty == LUA_TNONE ? LUA_TNIL : ty);
}

nd_tensor *ndL_check(lua_State *L, int idx, const char *fn) {
  nd_tensor *t = ndL_test(L, idx);
  if (t) return t;
  if (ndL_object(L, idx))
    ndL_error(L, "%s: argument %d is a released tensor (t:release() was "
               "called on it)", fn, idx);
  else
    ndL_error(L, "%s: argument %d must be a tensor, got %s", fn, idx,
               luaL_typename(L, idx));
  return NULL;
}

/* Drops the object's reference now; later uses raise. Idempotent, and a
 * no-op on anything that is not an nd tensor (__gc may be called by hand). */
static void drop(ndL_obj *o) {
  if (!o || o->tag != NDL_LIVE) return;
  o->tag = NDL_DEAD;
  if (NDL_OWNS(o))
    nd_release(o->t); /* a view only borrows; a small tensor's is inline */
}

static const char debt_key = 0;

/* The bytes charged to the collector so far in this state (see below);
 * NULL before the first charge unless make is set. */
static int64_t *debt_of(lua_State *L, int make) {
  lua_pushlightuserdata(L, (void *)&debt_key);
  lua_rawget(L, LUA_REGISTRYINDEX);
  int64_t *debt = lua_touserdata(L, -1);
  lua_pop(L, 1);
  if (!debt && make) {
    lua_pushlightuserdata(L, (void *)&debt_key);
    debt = lua_newuserdata(L, sizeof *debt);
    *debt = 0;
    lua_rawset(L, LUA_REGISTRYINDEX);
  }
  return debt;
}

/* Elements smaller than their header are paced with the headers (by the
 * userdata count); so are shared ones, which a collection would not free. */
static int charged(const nd_tensor *t) {
  return t->storage && t->storage->nbytes >= (int64_t)sizeof(nd_tensor) &&
         __atomic_load_n(&t->storage->refs, __ATOMIC_ACQUIRE) == 1;
}

/* The collector paces itself by the Lua heap, which holds only tensor
 * headers. Fresh element bytes are added to a per-state debt (a userdata
 * in the registry under a static address, so no global state); when the
 * debt exceeds the Lua heap (and 2 MiB), the collector is stepped by the
 * debt, which finishes the cycle, and the debt restarts. Cost per tensor:
 * a registry lookup; one GC cycle per heap's worth (at least 2 MiB) of
 * tensor bytes, so dropped tensors wait for at most that much more;
 * release() takes its tensor's bytes back. The floor is small so that
 * mid-size temporaries (s + s on 18,000 doubles) come back while still
 * in cache (storage.c's block cache reuses them):
 * at 16 MiB each new result was cold memory, 8x slower than with out=.
 * A cycle costs 35-90 us whatever it frees, so results under 1 MiB wait for
 * eight of their size: at one per two or three 800 KB results, x^2 on
 * 100k doubles spent more on collecting than on computing. Not above: an
 * 8 MB exp result waiting for a second one went from 0.99x to 1.45x
 * NumPy (make bench BENCH=cases). */
int ndL_charge_add(int64_t *debt, const nd_tensor *t) {
  if (!charged(t)) return 0;
  *debt += t->storage->nbytes;
  /* Results under 1 MiB: a cycle per eight of them at least. */
  int64_t batch = t->storage->nbytes < (int64_t)1 << 20 ? 8 * t->storage->nbytes : 0;
  return *debt >= (int64_t)2 << 20 && *debt >= batch;
}

/* The step, once the debt is also past the Lua heap. */
static void charge_step(lua_State *L, int64_t *debt) {
  int64_t heap = (int64_t)lua_gc(L, LUA_GCCOUNT, 0) << 10;
  if (*debt < heap) return;
  int64_t kb = *debt >> 10;
  *debt = 0;
#if LUA_VERSION_NUM >= 504
  /* Lua 5.4's lua.c runs the collector in generational mode, where a step
   * is a minor collection: a tensor that lived through two of them is old
   * and waits for a major one, which the heap of headers alone seldom
   * reaches (3 GB of 1 MB results kept 1 GB). A full collection is what a
   * step by the debt amounts to in incremental mode too. */
  (void)kb;
  lua_gc(L, LUA_GCCOLLECT, 0);
#else
  lua_gc(L, LUA_GCSTEP, (int)(kb > 1 << 30 ? 1 << 30 : kb));
#endif
  ndL_sweep_owners(L);
}

void ndL_charge(lua_State *L, const nd_tensor *t) {
  if (!charged(t)) return; /* no registry lookup for small tensors */
  int64_t *debt = debt_of(L, 1);
  if (ndL_charge_add(debt, t)) charge_step(L, debt);
}

/* debt(): the address of this state's debt, for lua/ffi.lua's adopted
 * results (ndL_charge_add through the FFI); charge_step(): the step when
 * that says one may be due. */
static int l_debt(lua_State *L) {
  lua_pushlightuserdata(L, debt_of(L, 1));
  return 1;
}
static int l_charge_step(lua_State *L) {
  charge_step(L, debt_of(L, 1));
  return 0;
}

static int l_gc(lua_State *L) {
  ndL_obj *o = ndL_object(L, 1);
  drop(o);
  if (o && o->t && !(o->kind & (NDL_VIEW | NDL_CDATA))) { /* the header goes with the userdata, never before */
    nd_tensor *h = o->t;
    o->t = NULL;
    o->free(h, sizeof *h, o->ud);
  }
  return 0;
}

/* t:release() (and __close): the storage goes when no other view holds it. */
static int l_release(lua_State *L) {
  ndL_obj *o = ndL_object(L, 1);
  if (!o) ndL_check(L, 1, "release");
  if (o->tag == NDL_LIVE && NDL_OWNS(o) &&
      charged(o->t)) { /* freed now: no collection owes it */
    int64_t *debt = debt_of(L, 0), n = o->t->storage->nbytes;
    if (debt) *debt = *debt > n ? *debt - n : 0;
  }
  drop(o);
  return 0;
}

/* "live", "released", or nil for anything else (printing, nd.layout). */
static int l_state(lua_State *L) {
  ndL_obj *o = ndL_object(L, 1);
  if (!o) return 0;
  lua_pushstring(L, o->tag == NDL_LIVE ? "live" : "released");
  return 1;
}

/* check(t, fn): t, or the error ndL_check raises naming fn (Lua layer). */
static int l_check(lua_State *L) {
  ndL_check(L, 1, luaL_checkstring(L, 2));
  lua_settop(L, 1);
  return 1;
}
/* typename(v): ndL_typename's, for the Lua modules' messages. */
static int l_typename(lua_State *L) {
  lua_pushstring(L, ndL_typename(L, 1));
  return 1;
}

/* sizeof the structs lua/ffi.lua declares again for LuaJIT's FFI: a layout
 * that drifted from nd.h turns the FFI paths off instead of corrupting. */
static int l_struct_sizes(lua_State *L) {
  lua_createtable(L, 0, 3);
  lua_pushinteger(L, (lua_Integer)sizeof(nd_tensor));
  lua_setfield(L, -2, "nd_tensor");
  lua_pushinteger(L, (lua_Integer)sizeof(nd_err));
  lua_setfield(L, -2, "nd_err");
  lua_pushinteger(L, (lua_Integer)sizeof(nd_blas_plan));
  lua_setfield(L, -2, "nd_blas_plan");
  lua_pushinteger(L, (lua_Integer)sizeof(ndL_obj));
  lua_setfield(L, -2, "nd_lobj");
  lua_pushinteger(L, (lua_Integer)sizeof(nd_storage));
  lua_setfield(L, -2, "nd_storage");
  lua_pushinteger(L, (lua_Integer)offsetof(ndL_small, s));
  lua_setfield(L, -2, "nd_small_s");
  lua_pushinteger(L, (lua_Integer)sizeof(ndL_small));
  lua_setfield(L, -2, "nd_small");
  return 1;
}

/* The finalizer lua/ffi.lua gives a cdata owner (its storage reference)
 * and an armed small tensor (the storage its elements moved to). */
void ndL_obj_gc(void *p) {
  ndL_obj *o = p;
  if (o->kind & NDL_INLINE) {
    nd_storage *s = o->ud;
    o->ud = NULL;
    if (s) nd_storage_release(s);
  } else {
    drop(o);
  }
}

/* The tags lua/ffi.lua compares (below 2^53: exact as numbers), the
 * kinds of a cdata owner, view and small tensor, and the mark of the
 * latter's storage (its ctx). */
static int l_tags(lua_State *L) {
  lua_pushnumber(L, (lua_Number)NDL_LIVE);
  lua_pushnumber(L, (lua_Number)NDL_DEAD);
  lua_pushnumber(L, NDL_CDATA);
  lua_pushnumber(L, NDL_VIEW | NDL_CDATA);
  lua_pushnumber(L, NDL_INLINE | NDL_CDATA);
  lua_pushlightuserdata(L, (void *)&inline_key);
  return 6;
}

/* The tensor metatable (registry "nd.Tensor"), the anchors' metatable
 * and the keep table, and the object functions into the table on top
 * (C): made once per state (a second luaopen_nd, a hot reload, keeps
 * them, as luaL_newmetatable does). */
void ndL_open_object(lua_State *L) {
  static const luaL_Reg mt[] = {{"__gc", l_gc}, {"__close", l_release},
                                {NULL, NULL}};
  static const luaL_Reg fns[] = {{"release", l_release}, {"state", l_state},
                                 {"check", l_check}, {"tags", l_tags},
                                 {"typename", l_typename},
                                 {"anchor", l_anchor},
                                 {"set_maker", l_set_maker}, {"arm", l_arm},
                                 {"debt", l_debt},
                                 {"charge_step", l_charge_step},
                                 {NULL, NULL}};
  ndL_register(L, fns);
  luaL_newmetatable(L, NDL_TENSOR);
  ndL_register(L, mt);
  lua_pushlightuserdata(L, (void *)&tag_anchor); /* ndL_new's key */
  lua_pushvalue(L, -2);
  lua_rawset(L, LUA_REGISTRYINDEX);
  lua_setfield(L, -2, "metatable");
  lua_pushlightuserdata(L, (void *)&anchor_key);
  lua_rawget(L, LUA_REGISTRYINDEX);
  int fresh = lua_isnil(L, -1);
  lua_pop(L, 1);
  if (fresh) {
    lua_pushlightuserdata(L, (void *)&anchor_key);
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, anchor_gc);
    lua_setfield(L, -2, "__gc");
    lua_rawset(L, LUA_REGISTRYINDEX);
    lua_pushlightuserdata(L, (void *)&keep_key);
    lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
  }
  push_keep(L);
  lua_setfield(L, -2, "view_keep");
  lua_pushcfunction(L, l_struct_sizes);
  lua_setfield(L, -2, "struct_sizes");
}
