/* The einsum plan: from the spec and the operands' shapes, dtypes and
 * strides, every decision -- each operand's view and sums, the order of
 * the pairwise contractions, and for each pair the views handed to the
 * batched matrix product (or the broadcast multiply), what is copied and
 * why, what is allocated. nd_einsum_plan reports it; einsum.c executes
 * exactly it. */
#include "einsum_spec.h"
#include "matmul_plan.h"
#include <stdlib.h>

static const char *const FN = "einsum";

/* ---- label sets ----------------------------------------------------------- */
typedef struct { uint64_t w[2]; } lset;
static void put(lset *s, int l) { s->w[l >> 6] |= (uint64_t)1 << (l & 63); }
static int has(lset s, int l) { return (int)(s.w[l >> 6] >> (l & 63) & 1); }
static lset uni(lset a, lset b) { return (lset){{a.w[0] | b.w[0], a.w[1] | b.w[1]}}; }
static lset cap(lset a, lset b) { return (lset){{a.w[0] & b.w[0], a.w[1] & b.w[1]}}; }

/* s appended to buf (cap bytes, *at used), always terminated. No printf:
 * einsum plans on every call. */
static void cat(char *buf, size_t cap_, size_t *at, const char *s) {
  while (*s && *at + 1 < cap_) buf[(*at)++] = *s++;
  buf[*at] = '\0';
}

/* ---- operands as the planner sees them ------------------------------------ */
/* Distinct labels, one per dim, with strides (sizes are the labels'). */
typedef struct {
  int n, dtype;
  signed char lab[ND_MAX_DIMS];
  int64_t stride[ND_MAX_DIMS];
} term;

static lset labels(const term *t) {
  lset s = {{0, 0}};
  for (int i = 0; i < t->n; i++) put(&s, t->lab[i]);
  return s;
}
static int find(const term *t, int l) {
  for (int i = 0; i < t->n; i++)
    if (t->lab[i] == l) return i;
  return -1;
}
static int64_t numel(const nd_einsum_expr *x, const term *t) {
  int64_t n = 1;
  for (int i = 0; i < t->n; i++) n *= x->size[t->lab[i]];
  return n; /* bounded: the planner checks each term's bytes */
}
/* Row-major strides for t's labels in their order. */
static void compact(const nd_einsum_expr *x, term *t) {
  int64_t s = 1;
  for (int i = t->n - 1; i >= 0; i--) {
    t->stride[i] = s;
    s *= x->size[t->lab[i]];
  }
}
static void names(const nd_einsum_expr *x, const term *t, char *buf) {
  for (int i = 0; i < t->n; i++) *buf++ = x->name[t->lab[i]];
  *buf = '\0';
}

/* A kernel's view: dims of merged label groups. */
typedef struct {
  int n;
  int64_t size[ND_MAX_DIMS], stride[ND_MAX_DIMS];
  char lab[ND_MAX_DIMS][ND_LABELS + 1];
} kview;

static nd_status add_dim(nd_err *e, kview *v, int64_t size, int64_t stride,
                         const char *lab) {
  if (v->n >= ND_MAX_DIMS)
    return nd_fail(e, ND_EINVAL, "%s: a step of this contraction needs more "
                   "than %d dims", FN, ND_MAX_DIMS);
  v->size[v->n] = size;
  v->stride[v->n] = stride;
  size_t at = 0;
  cat(v->lab[v->n++], ND_LABELS + 1, &at, lab);
  return ND_OK;
}

static void export_view(nd_einsum_view *o, const kview *v) {
  o->ndim = v->n;
  size_t at = 0;
  o->labels[0] = '\0';
  for (int i = 0; i < v->n; i++) {
    o->size[i] = v->size[i];
    o->stride[i] = v->stride[i];
    if (i) cat(o->labels, sizeof o->labels, &at, ",");
    cat(o->labels, sizeof o->labels, &at, v->lab[i]);
  }
}
static void header(nd_tensor *h, const nd_einsum_view *v, int dtype) {
  h->storage = NULL;
  h->offset = 0;
  h->dtype = dtype;
  h->ndim = v->ndim;
  for (int i = 0; i < v->ndim; i++)
    h->size[i] = v->size[i], h->stride[i] = v->stride[i];
}

/* ---- the order: least multiply-adds ---------------------------------------- */
/* need(S): the labels of the operands in S that the output or an operand
 * outside S still needs; a pair's cost is the product of the sizes of the
 * labels of both sides. */
static double cost_of(const nd_einsum_expr *x, lset s) {
  double c = 1;
  for (int l = 0; l < ND_LABELS; l++)
    if (has(s, l)) c *= (double)x->size[l];
  return c;
}

#define DP_MAX 8
/* order[s] = the pair of operand numbers step s contracts (inputs 0..n-1,
 * step s's result n + s). */
static void choose_order(const nd_einsum_expr *x, int n, const lset *ls,
                         lset out, int (*order)[2]) {
  if (n <= DP_MAX) {
    int full = (1 << n) - 1;
    lset need[1 << DP_MAX];
    double best[1 << DP_MAX];
    int split[1 << DP_MAX], id[1 << DP_MAX];
    for (int S = 1; S <= full; S++) {
      lset in = {{0, 0}}, rest = out;
      for (int k = 0; k < n; k++) {
        if (S >> k & 1) in = uni(in, ls[k]);
        else rest = uni(rest, ls[k]);
      }
      need[S] = cap(in, rest);
      best[S] = (S & (S - 1)) ? -1 : 0;
    }
    for (int S = 1; S <= full; S++) {
      if (!(S & (S - 1))) continue;
      /* each split once: the part with S's lowest operand first */
      int low = S & -S;
      for (int A = (S - 1) & S; A > 0; A = (A - 1) & S) {
        if (!(A & low)) continue;
        int B = S ^ A;
        double c = best[A] + best[B] + cost_of(x, uni(need[A], need[B]));
        if (best[S] < 0 || c < best[S]) best[S] = c, split[S] = A;
      }
    }
    /* post-order: the steps of each part, then the pair */
    int stack[2 * (1 << DP_MAX)], sp = 0, steps = 0;
    int done[1 << DP_MAX];
    for (int S = 0; S <= full; S++) done[S] = 0;
    for (int k = 0; k < n; k++) id[1 << k] = k, done[1 << k] = 1;
    stack[sp++] = full;
    while (sp) {
      int S = stack[sp - 1], A = split[S], B = S ^ A;
      if (!done[A]) { stack[sp++] = A; continue; }
      if (!done[B]) { stack[sp++] = B; continue; }
      sp--;
      order[steps][0] = id[A];
      order[steps][1] = id[B];
      id[S] = n + steps++;
      done[S] = 1;
    }
    return;
  }
  /* greedy: the cheapest pair first, ties to the lowest numbers */
  int live[2 * ND_EINSUM_MAX_OPERANDS], nl = n;
  lset cur[2 * ND_EINSUM_MAX_OPERANDS];
  for (int k = 0; k < n; k++) live[k] = k, cur[k] = ls[k];
  for (int s = 0; nl > 1; s++) {
    int bi = 0, bj = 1;
    double bc = -1;
    for (int i = 0; i < nl; i++)
      for (int j = i + 1; j < nl; j++) {
        double c = cost_of(x, uni(cur[live[i]], cur[live[j]]));
        if (bc < 0 || c < bc) bc = c, bi = i, bj = j;
      }
    lset rest = out;
    for (int k = 0; k < nl; k++)
      if (k != bi && k != bj) rest = uni(rest, cur[live[k]]);
    int r = n + s;
    cur[r] = cap(uni(cur[live[bi]], cur[live[bj]]), rest);
    order[s][0] = live[bi];
    order[s][1] = live[bj];
    live[bi] = r;
    live[bj] = live[--nl];
  }
}

/* ---- chains: labels that merge into one dim -------------------------------- */
/* Labels ls[0..n) (outermost first) merge into one dim of t when each
 * stride is the next one's times its size. */
static int chains(const nd_einsum_expr *x, const term *t, const signed char *ls,
                  int n) {
  for (int i = 0; i + 1 < n; i++) {
    int64_t want;
    int a = find(t, ls[i]), b = find(t, ls[i + 1]);
    if (nd_mul_ovf(t->stride[b], x->size[ls[i + 1]], &want) ||
        t->stride[a] != want)
      return 0;
  }
  return 1;
}
/* ls sorted by t's strides, largest first (stable: insertion). */
static void sort_by(const term *t, signed char *ls, int n) {
  for (int i = 1; i < n; i++) {
    signed char l = ls[i];
    int64_t s = llabs(t->stride[find(t, l)]);
    int j = i;
    for (; j > 0 && llabs(t->stride[find(t, ls[j - 1])]) < s; j--)
      ls[j] = ls[j - 1];
    ls[j] = l;
  }
}

/* The longest tail of ls[0..n) that chains in both t and u: its start. */
static int tail_chain(const nd_einsum_expr *x, const term *t, const term *u,
                      const signed char *ls, int n) {
  int start = n > 0 ? n - 1 : 0;
  while (start > 0 && chains(x, t, ls + start - 1, n - start + 1) &&
         chains(x, u, ls + start - 1, n - start + 1))
    start--;
  return start;
}

/* A merged dim's labels; "1" for a dim of size 1 no label names (a
 * product's missing rows or columns). */
static void group(const nd_einsum_expr *x, const signed char *ls, int n,
                  char *buf) {
  if (n == 0) *buf++ = '1';
  for (int i = 0; i < n; i++) *buf++ = x->name[ls[i]];
  *buf = '\0';
}
static int64_t group_size(const nd_einsum_expr *x, const signed char *ls,
                          int n) {
  int64_t s = 1;
  for (int i = 0; i < n; i++) s *= x->size[ls[i]];
  return s;
}

/* The stride of a merged group in t (its innermost label's), 0 if empty. */
static int64_t group_stride(const term *t, const signed char *ls, int n) {
  return n ? t->stride[find(t, ls[n - 1])] : 0;
}

static void step_spec(const nd_einsum_expr *x, char *buf, size_t cap_,
                      const term *a, const term *b, const term *r) {
  char sa[ND_MAX_DIMS + 1], sb[ND_MAX_DIMS + 1], sr[ND_MAX_DIMS + 1];
  names(x, a, sa);
  names(x, r, sr);
  size_t at = 0;
  cat(buf, cap_, &at, sa);
  if (b) {
    names(x, b, sb);
    cat(buf, cap_, &at, ",");
    cat(buf, cap_, &at, sb);
  }
  cat(buf, cap_, &at, "->");
  cat(buf, cap_, &at, sr);
}

/* Field by field: a memset of the step (views of every dim) cost more
 * than a small product. */
static void step_init(nd_einsum_step *st, int x, int y) {
  st->kind = ND_EINSUM_MATMUL;
  st->x = x;
  st->y = y;
  st->spec[0] = '\0';
  st->ndim = st->merge = st->ncopies = st->allocations = 0;
  st->bytes = 0;
  nd_einsum_view *v[5] = {&st->a, &st->b, &st->out, &st->merge_src[0],
                          &st->merge_src[1]};
  for (int k = 0; k < 5; k++) v[k]->ndim = 0, v[k]->labels[0] = '\0';
}

static void note_copy(nd_einsum_step *st, int what, int why, int64_t bytes) {
  st->copy_what[st->ncopies] = what;
  st->copy_why[st->ncopies] = why;
  st->copy_bytes[st->ncopies++] = bytes;
  st->bytes += bytes;
  st->allocations++;
}

/* A step's result: `order` labels, compact; bytes checked. */
static nd_status result_term(nd_err *e, const nd_einsum_expr *x, term *r,
                             int dtype, nd_einsum_step *st) {
  int64_t n = 1, b;
  if (r->n > ND_MAX_DIMS)
    return nd_fail(e, ND_EINVAL, "%s: an intermediate result would have "
                   "%d dims, at most %d supported", FN, r->n, ND_MAX_DIMS);
  for (int i = 0; i < r->n; i++)
    if (nd_mul_ovf(n, x->size[r->lab[i]], &n))
      return nd_fail(e, ND_EOVERFLOW, "%s: an intermediate result has too "
                     "many elements", FN);
  if (nd_mul_ovf(n, nd_dtype_size(dtype), &b))
    return nd_fail(e, ND_EOVERFLOW, "%s: an intermediate result has too "
                   "many bytes", FN);
  r->dtype = dtype;
  compact(x, r);
  st->ndim = r->n;
  for (int i = 0; i < r->n; i++) st->size[i] = x->size[r->lab[i]];
  return ND_OK;
}

/* One pairwise step: X and Y into R (R's labels and, for the last step,
 * their order given). */
static nd_status plan_pair(nd_err *e, const nd_einsum_expr *x, int dtype,
                           nd_einsum_step *st, term X, term Y, term *R,
                           int last) {
  lset lx = labels(&X), ly = labels(&Y), lr = labels(R);
  signed char bt[ND_LABELS], mx[ND_LABELS], ny[ND_LABELS], kk[ND_LABELS];
  int nbt = 0, nmx = 0, nny = 0, nk = 0;
  for (int i = 0; i < X.n; i++) {
    int l = X.lab[i];
    if (!has(ly, l)) mx[nmx++] = (signed char)l;
    else if (has(lr, l)) bt[nbt++] = (signed char)l;
    else kk[nk++] = (signed char)l;
  }
  for (int i = 0; i < Y.n; i++)
    if (!has(lx, Y.lab[i])) ny[nny++] = Y.lab[i];
  sort_by(&X, mx, nmx);
  sort_by(&Y, ny, nny);
  if (!last) { /* an intermediate: batch, then X's, then Y's labels */
    R->n = 0;
    for (int i = 0; i < nbt; i++) R->lab[R->n++] = bt[i];
    for (int i = 0; i < nmx; i++) R->lab[R->n++] = mx[i];
    for (int i = 0; i < nny; i++) R->lab[R->n++] = ny[i];
  }
  if (result_term(e, x, R, dtype, st)) return e->code;
  step_spec(x, st->spec, sizeof st->spec, &X, &Y, R);
  st->bytes = numel(x, R) * nd_dtype_size(dtype);
  st->allocations = 1;
  const int64_t es = nd_dtype_size(dtype);

  /* Size-1 labels merge with anything and batch nothing: left out. */
#define SQUEEZE(arr, cnt)                                                   \
  do {                                                                      \
    int w_ = 0;                                                             \
    for (int i_ = 0; i_ < cnt; i_++)                                        \
      if (x->size[arr[i_]] != 1) arr[w_++] = arr[i_];                       \
    cnt = w_;                                                               \
  } while (0)
  SQUEEZE(bt, nbt);
  SQUEEZE(mx, nmx);
  SQUEEZE(ny, nny);
  SQUEEZE(kk, nk);
#undef SQUEEZE
  kview a, b, o;
  a.n = b.n = o.n = 0;
  char g[ND_LABELS + 1];

  if (nk == 0) { /* nothing contracted: one broadcast multiply in R */
    st->kind = ND_EINSUM_MUL;
    for (int i = 0; i < R->n; i++) {
      int l = R->lab[i], ix = find(&X, l), iy = find(&Y, l);
      g[0] = x->name[l], g[1] = '\0';
      if (add_dim(e, &a, ix >= 0 ? x->size[l] : 1, ix >= 0 ? X.stride[ix] : 0, g) ||
          add_dim(e, &b, iy >= 0 ? x->size[l] : 1, iy >= 0 ? Y.stride[iy] : 0, g) ||
          add_dim(e, &o, x->size[l], R->stride[i], g))
        return e->code;
    }
    export_view(&st->a, &a);
    export_view(&st->b, &b);
    export_view(&st->out, &o);
    return ND_OK;
  }

  /* The contracted labels must be one stride in both: in X's order, or
   * Y's, or the operands that do not chain are copied into that order. */
  st->kind = ND_EINSUM_MATMUL;
  signed char ko[ND_LABELS];
  memcpy(ko, kk, (size_t)nk);
  sort_by(&X, ko, nk);
  if (!(chains(x, &X, ko, nk) && chains(x, &Y, ko, nk))) {
    signed char k2[ND_LABELS];
    memcpy(k2, kk, (size_t)nk);
    sort_by(&Y, k2, nk);
    if (chains(x, &X, k2, nk) && chains(x, &Y, k2, nk)) {
      memcpy(ko, k2, (size_t)nk);
    } else {
      int cx = !chains(x, &X, ko, nk);
      if (cx && chains(x, &Y, k2, nk)) memcpy(ko, k2, (size_t)nk), cx = 1;
      int cy = !chains(x, &Y, ko, nk);
      term *ts[2] = {&X, &Y};
      for (int k = 0; k < 2; k++) {
        if (!(k ? cy : cx)) continue;
        term *t = ts[k], c = *t;
        kview src;
        src.n = 0;
        /* the others in place, then the contracted in order */
        c.n = 0;
        for (int i = 0; i < t->n; i++) {
          int in_k = 0;
          for (int j = 0; j < nk; j++) in_k |= ko[j] == t->lab[i];
          if (!in_k) c.lab[c.n++] = t->lab[i];
        }
        for (int j = 0; j < nk; j++) c.lab[c.n++] = ko[j];
        for (int i = 0; i < c.n; i++) {
          g[0] = x->name[c.lab[i]], g[1] = '\0';
          if (add_dim(e, &src, x->size[c.lab[i]],
                      t->stride[find(t, c.lab[i])], g))
            return e->code;
        }
        c.dtype = dtype;
        compact(x, &c);
        export_view(&st->merge_src[k], &src);
        st->merge |= 1 << k;
        note_copy(st, k, ND_EINSUM_MERGE, numel(x, &c) * es);
        *t = c;
      }
    }
  }

  /* M: the tail of X's own labels that merges in X and in the result;
   * the rest batch (b broadcast). N likewise from Y. */
  int ms = tail_chain(x, &X, R, mx, nmx), ns = tail_chain(x, &Y, R, ny, nny);
  int nbatch = nbt + ms + ns;
  const int ha = nmx - ms > 0 || nbatch > 0, hb = nny - ns > 0 || nbatch > 0;
  /* batch dims: shared labels, then the unmerged of X, of Y */
  signed char bl[ND_LABELS];
  int nb = 0;
  for (int i = 0; i < nbt; i++) bl[nb++] = bt[i];
  for (int i = 0; i < ms; i++) bl[nb++] = mx[i];
  for (int i = 0; i < ns; i++) bl[nb++] = ny[i];
  for (int i = 0; i < nb; i++) {
    int l = bl[i], ix = find(&X, l), iy = find(&Y, l), ir = find(R, l);
    g[0] = x->name[l], g[1] = '\0';
    if (add_dim(e, &a, ix >= 0 ? x->size[l] : 1, ix >= 0 ? X.stride[ix] : 0, g) ||
        add_dim(e, &b, iy >= 0 ? x->size[l] : 1, iy >= 0 ? Y.stride[iy] : 0, g) ||
        add_dim(e, &o, x->size[l], R->stride[ir], g))
      return e->code;
  }
  const signed char *mg = mx + ms, *ng = ny + ns;
  int nm = nmx - ms, nn = nny - ns;
  if (ha) {
    group(x, mg, nm, g);
    if (add_dim(e, &a, group_size(x, mg, nm), group_stride(&X, mg, nm), g) ||
        add_dim(e, &o, group_size(x, mg, nm), group_stride(R, mg, nm), g))
      return e->code;
  }
  group(x, ko, nk, g);
  if (add_dim(e, &a, group_size(x, ko, nk), group_stride(&X, ko, nk), g) ||
      add_dim(e, &b, group_size(x, ko, nk), group_stride(&Y, ko, nk), g))
    return e->code;
  if (hb) {
    group(x, ng, nn, g);
    if (add_dim(e, &b, group_size(x, ng, nn), group_stride(&Y, ng, nn), g) ||
        add_dim(e, &o, group_size(x, ng, nn), group_stride(R, ng, nn), g))
      return e->code;
  }
  export_view(&st->a, &a);
  export_view(&st->b, &b);
  export_view(&st->out, &o);
  nd_tensor ha_, hb_, ho_;
  header(&ha_, &st->a, X.dtype);
  header(&hb_, &st->b, Y.dtype);
  header(&ho_, &st->out, dtype);
  if (nd_plan_matmul(e, FN, &st->call, &ha_, &hb_, &ho_, dtype))
    return e->code;
  const nd_tensor *hs[3] = {&ha_, &hb_, &ho_};
  for (int k = 0; k < 3; k++)
    if (st->call.copies & (1 << k))
      note_copy(st, k, k < 2 && hs[k]->dtype != dtype ? ND_EINSUM_DTYPE
                                                       : ND_EINSUM_LAYOUT,
                nd_numel(hs[k]) * es);
  return ND_OK;
}

/* One operand's view: diagonals for repeated labels, size-1 dims of
 * labels that are larger elsewhere dropped (broadcast). */
static void prepare_view(const nd_einsum_expr *x, const nd_tensor *t, int k,
                         term *v) {
  v->n = 0;
  v->dtype = t->dtype;
  /* An empty operand's strides may be anything (nothing is read): 0s, so
   * no sum of them for a diagonal overflows. */
  const int empty = nd_numel(t) == 0;
  for (int d = 0; d < t->ndim; d++) {
    int l = x->lab[k][d];
    int64_t s = empty || t->size[d] == 1 ? 0 : t->stride[d];
    if (t->size[d] == 1 && x->size[l] != 1) continue;
    int at = find(v, l);
    if (at >= 0) {
      v->stride[at] += s; /* both within the storage: no overflow */
      continue;
    }
    v->lab[v->n] = (signed char)l;
    v->stride[v->n++] = s;
  }
}

static int clamp_ops(int n) {
  return n < 1 ? 1 : n > ND_EINSUM_MAX_OPERANDS ? ND_EINSUM_MAX_OPERANDS : n;
}
size_t nd_einsum_path_bytes(int n) {
  n = clamp_ops(n);
  return sizeof(nd_einsum_path) + (size_t)n * (sizeof(nd_einsum_prep) +
                                               sizeof(nd_einsum_step));
}
nd_einsum_path *nd_einsum_path_init(void *block, int n) {
  nd_einsum_path *p = block;
  n = clamp_ops(n);
  p->nops = n;
  p->prep = (nd_einsum_prep *)(void *)(p + 1);
  p->step = (nd_einsum_step *)(void *)(p->prep + n);
  return p;
}

nd_status nd_einsum_plan(nd_err *e, nd_einsum_path *p, const char *spec,
                         int n, const nd_tensor *const *ops) {
  if (n > p->nops && n <= ND_EINSUM_MAX_OPERANDS)
    return nd_fail(e, ND_EINVAL, "%s: a path made for %d operands, %d given",
                   FN, p->nops, n);
  nd_einsum_expr x;
  if (nd_einsum_parse(e, &x, spec, n, ops)) return e->code;
  int dtype = ops[0]->dtype;
  for (int k = 1; k < n; k++) dtype = nd_promote_types(dtype, ops[k]->dtype);
  const int64_t es = nd_dtype_size(dtype);
  p->nops = n;
  p->nsteps = 0;
  p->dtype = dtype;
  p->ndim = x.nout;
  p->bytes = 0;
  p->allocations = 0;
  lset out = {{0, 0}};
  for (int i = 0; i < x.nout; i++) {
    p->size[i] = x.size[x.out[i]];
    put(&out, x.out[i]);
  }
  { /* the full spec, explicit */
    size_t at = 0;
    for (int k = 0; k <= n; k++) {
      int m = k < n ? x.nlab[k] : x.nout;
      const signed char *ls = k < n ? x.lab[k] : x.out;
      if (k) cat(p->spec, sizeof p->spec, &at, k < n ? "," : "->");
      for (int i = 0; i < m && at + 1 < sizeof p->spec; i++)
        p->spec[at++] = x.name[ls[i]];
      p->spec[at] = '\0';
    }
  }

  /* Each operand: its view, then the labels only it has summed. */
  term t[2 * ND_EINSUM_MAX_OPERANDS];
  lset ls[ND_EINSUM_MAX_OPERANDS];
  for (int k = 0; k < n; k++) {
    prepare_view(&x, ops[k], k, &t[k]);
    ls[k] = labels(&t[k]);
  }
  for (int k = 0; k < n; k++) {
    nd_einsum_prep *pr = &p->prep[k];
    lset others = out;
    for (int j = 0; j < n; j++)
      if (j != k) others = uni(others, ls[j]);
    term v = t[k], kept = v;
    kview kv;
    kv.n = 0;
    char g[2] = {0, 0};
    int nsum = 0;
    kept.n = 0;
    size_t at = 0;
    for (int i = 0; i < v.n; i++) {
      g[0] = x.name[v.lab[i]];
      add_dim(e, &kv, x.size[v.lab[i]], v.stride[i], g);
      if (has(others, v.lab[i])) {
        kept.lab[kept.n++] = v.lab[i];
      } else {
        pr->sum_dims[nsum++] = i;
        pr->summed[at++] = x.name[v.lab[i]];
      }
    }
    pr->summed[at] = '\0';
    pr->nsum = nsum;
    export_view(&pr->view, &kv);
    {
      int reps = 0;
      for (int d = 0; d < x.nlab[k]; d++)
        for (int d2 = 0; d2 < d; d2++) reps |= x.lab[k][d] == x.lab[k][d2];
      pr->diagonal = reps;
    }
    char si[ND_MAX_DIMS + 1], so[ND_MAX_DIMS + 1];
    for (int d = 0; d < x.nlab[k]; d++) si[d] = x.name[x.lab[k][d]];
    si[x.nlab[k]] = '\0';
    names(&x, nsum ? &kept : &v, so);
    size_t at2 = 0;
    cat(pr->spec, sizeof pr->spec, &at2, si);
    cat(pr->spec, sizeof pr->spec, &at2, "->");
    cat(pr->spec, sizeof pr->spec, &at2, so);
    pr->bytes = 0;
    pr->allocations = 0;
    if (nsum) {
      nd_tensor h;
      header(&h, &pr->view, ops[k]->dtype);
      int64_t acc = nd_reduce_acc_bytes(ND_R_SUM, &h, nsum, pr->sum_dims);
      int sdt = nd_dtype_kind(h.dtype) == 'f' ? h.dtype : ND_INT64;
      pr->bytes = numel(&x, &kept) * nd_dtype_size(sdt) + acc;
      pr->allocations = 1 + (acc > 0);
      if (sdt != dtype) {
        pr->bytes += numel(&x, &kept) * es;
        pr->allocations++;
      }
      kept.dtype = dtype;
      compact(&x, &kept);
      t[k] = kept;
      ls[k] = labels(&kept);
    }
    p->bytes += pr->bytes;
    p->allocations += pr->allocations;
  }

  term R;
  R.n = x.nout;
  memcpy(R.lab, x.out, (size_t)x.nout);
  if (n == 1) { /* the prepared operand is the result, or is copied there */
    int same = t[0].dtype == dtype && p->prep[0].allocations > 0 &&
               t[0].n == R.n && !memcmp(t[0].lab, R.lab, (size_t)R.n);
    if (same) return ND_OK;
    nd_einsum_step *st = &p->step[p->nsteps++];
    step_init(st, 0, -1);
    st->kind = ND_EINSUM_COPY;
    if (result_term(e, &x, &R, dtype, st)) return e->code;
    step_spec(&x, st->spec, sizeof st->spec, &t[0], NULL, &R);
    kview a, o;
    a.n = o.n = 0;
    char g[2] = {0, 0};
    for (int i = 0; i < R.n; i++) {
      int l = R.lab[i], ix = find(&t[0], l);
      g[0] = x.name[l];
      if (add_dim(e, &a, x.size[l], ix >= 0 ? t[0].stride[ix] : 0, g) ||
          add_dim(e, &o, x.size[l], R.stride[i], g))
        return e->code;
    }
    export_view(&st->a, &a);
    export_view(&st->out, &o);
    st->bytes = numel(&x, &R) * es;
    st->allocations = 1;
    p->bytes += st->bytes;
    p->allocations += st->allocations;
    return ND_OK;
  }

  int order[ND_EINSUM_MAX_OPERANDS][2];
  choose_order(&x, n, ls, out, order);
  lset cur[2 * ND_EINSUM_MAX_OPERANDS];
  int live[2 * ND_EINSUM_MAX_OPERANDS] = {0};
  for (int k = 0; k < n; k++) cur[k] = ls[k], live[k] = 1;
  for (int s = 0; s < n - 1; s++) {
    int i = order[s][0], j = order[s][1], r = n + s;
    nd_einsum_step *st = &p->step[p->nsteps++];
    step_init(st, i, j);
    live[i] = live[j] = 0;
    lset rest = out;
    for (int k = 0; k < r; k++)
      if (live[k]) rest = uni(rest, cur[k]);
    cur[r] = cap(uni(cur[i], cur[j]), rest);
    const int last = s == n - 2;
    if (!last) {
      R.n = 0;
      for (int l = 0; l < ND_LABELS; l++)
        if (has(cur[r], l)) R.lab[R.n++] = (signed char)l;
    } else {
      R.n = x.nout;
      memcpy(R.lab, x.out, (size_t)x.nout);
    }
    if (plan_pair(e, &x, dtype, st, t[i], t[j], &R, last)) return e->code;
    t[r] = R;
    live[r] = 1;
    p->bytes += st->bytes;
    p->allocations += st->allocations;
  }
  return ND_OK;
}
