/* An einsum spec read against its operands: NumPy's notation, checked
 * character by character so that an error can point at the part. */
#include "einsum_spec.h"
#include <stdarg.h>
#include <stdio.h>

static const char *const FN = "einsum";

/* "einsum: "ij,jk->iz": <what> (at character pos)", pos 1-based; 0: no
 * position. */
static nd_status bad(nd_err *e, const char *spec, int pos, const char *fmt,
                     ...) {
  char what[300];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (pos > 0)
    return nd_fail(e, ND_EINVAL, "%s: \"%.120s\": %s (at character %d)", FN,
                   spec, what, pos);
  return nd_fail(e, ND_EINVAL, "%s: \"%.120s\": %s", FN, spec, what);
}

static int label_of(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + c - 'a';
  return -1;
}
static char letter(int l) { return (char)(l < 26 ? 'A' + l : 'a' + l - 26); }

/* One term: its labels (ND_ELL - 1 marks where "..." stands) into lab,
 * their count into *n; p advanced past the term. */
#define ELL_MARK (-2)
static nd_status term(nd_err *e, const char *spec, const char **p,
                      signed char *lab, int *n, int *pos_of, const char *what,
                      int k) {
  int ell = 0;
  *n = 0;
  for (const char *s = *p;; s++) {
    char c = *s;
    int pos = (int)(s - spec) + 1;
    if (c == ' ') continue;
    if (c == '\0' || c == ',' || c == '-') {
      *p = s;
      return ND_OK;
    }
    if (*n >= ND_MAX_DIMS)
      return bad(e, spec, pos, "%s %d names more than %d dims", what, k,
                 ND_MAX_DIMS);
    if (c == '.') {
      if (s[1] != '.' || s[2] != '.')
        return bad(e, spec, pos, "a '.' that is not part of '...'");
      if (ell++)
        return bad(e, spec, pos, "a second '...' in %s %d", what, k);
      pos_of[*n] = pos;
      lab[(*n)++] = ELL_MARK;
      s += 2;
      continue;
    }
    int l = label_of(c);
    if (l < 0)
      return bad(e, spec, pos, "unknown character '%c' (labels are letters "
                 "a-z, A-Z)", c);
    pos_of[*n] = pos;
    lab[(*n)++] = (signed char)l;
  }
}

/* A label's size seen again: equal, or 1 on either side (broadcast). */
static nd_status see(nd_err *e, const char *spec, nd_einsum_expr *x,
                     int64_t *where, int l, int64_t s, int k) {
  if (x->size[l] < 0 || x->size[l] == 1) {
    if (x->size[l] < 0 || s != 1) x->size[l] = s, where[l] = k;
    return ND_OK;
  }
  if (s == 1 || s == x->size[l]) return ND_OK;
  if (l >= ND_ELL)
    return bad(e, spec, 0, "the dims under '...' do not broadcast: size "
               "%lld in operand %lld and %lld in operand %d",
               (long long)x->size[l], (long long)where[l] + 1, (long long)s,
               k + 1);
  return bad(e, spec, 0, "label %c has size %lld in operand %lld and %lld "
             "in operand %d", letter(l), (long long)x->size[l],
             (long long)where[l] + 1, (long long)s, k + 1);
}

nd_status nd_einsum_parse(nd_err *e, nd_einsum_expr *x, const char *spec,
                          int n, const nd_tensor *const *ops) {
  if (!spec) return nd_fail(e, ND_EINVAL, "%s: the spec is NULL", FN);
  if (n < 1 || n > ND_EINSUM_MAX_OPERANDS)
    return nd_fail(e, ND_EINVAL, "%s: %d operands given, 1 to %d supported",
                   FN, n, ND_EINSUM_MAX_OPERANDS);
  signed char raw[ND_EINSUM_MAX_OPERANDS + 1][ND_MAX_DIMS];
  int nraw[ND_EINSUM_MAX_OPERANDS + 1], pos[ND_EINSUM_MAX_OPERANDS + 1][ND_MAX_DIMS];
  const char *p = spec;
  int k = 0, arrow = 0;
  for (;;) {
    if (k >= n) { /* count them all for the message */
      int terms = k + 1;
      for (const char *q = p; *q && *q != '-'; q++) terms += *q == ',';
      return bad(e, spec, 0, "%d operands in the spec, %d tensor%s given",
                 terms, n, n == 1 ? "" : "s");
    }
    if (term(e, spec, &p, raw[k], &nraw[k], pos[k], "operand", k + 1))
      return e->code;
    k++;
    if (*p == ',') { p++; continue; }
    if (*p == '-') {
      if (p[1] != '>')
        return bad(e, spec, (int)(p - spec) + 1, "a '-' not followed by '>'");
      p += 2, arrow = 1;
      if (term(e, spec, &p, raw[n], &nraw[n], pos[n], "the output", 0))
        return e->code;
      if (*p)
        return bad(e, spec, (int)(p - spec) + 1, "'%c' after the output",
                   *p);
    }
    break;
  }
  if (k != n)
    return bad(e, spec, 0, "%d operand%s in the spec, %d tensor%s given", k,
               k == 1 ? "" : "s", n, n == 1 ? "" : "s");

  x->nops = n;
  x->nell = 0;
  for (int l = 0; l < ND_LABELS; l++) x->size[l] = -1;
  int64_t where[ND_LABELS];
  /* Every operand's labels per dim: "..." expands to its extra dims. */
  for (k = 0; k < n; k++) {
    const nd_tensor *t = ops[k];
    int has_ell = 0;
    for (int i = 0; i < nraw[k]; i++) has_ell |= raw[k][i] == ELL_MARK;
    int named = nraw[k] - has_ell;
    if (t->ndim < named || (!has_ell && t->ndim != named))
      return bad(e, spec, 0, "operand %d has %d dim%s, its term names %d", k + 1,
                 t->ndim, t->ndim == 1 ? "" : "s", named);
    int ne = t->ndim - named, d = 0;
    if (ne > x->nell) x->nell = ne;
    for (int i = 0; i < nraw[k]; i++) {
      if (raw[k][i] != ELL_MARK) {
        x->lab[k][d++] = raw[k][i];
        continue;
      }
      for (int j = 0; j < ne; j++) x->lab[k][d++] = (signed char)(-1 - j - 1);
    }
    x->nlab[k] = d;
  }
  /* ... dims right-aligned: operand k's j-th of ne is label ELL + nell -
   * ne + j. */
  for (k = 0; k < n; k++) {
    int ne = 0;
    for (int d = 0; d < x->nlab[k]; d++) ne += x->lab[k][d] < 0;
    for (int d = 0; d < x->nlab[k]; d++)
      if (x->lab[k][d] < 0)
        x->lab[k][d] = (signed char)(ND_ELL + x->nell - ne + (-x->lab[k][d] - 2));
    for (int d = 0; d < x->nlab[k]; d++) {
      int l = x->lab[k][d];
      for (int d2 = 0; d2 < d; d2++)
        if (x->lab[k][d2] == l && ops[k]->size[d2] != ops[k]->size[d])
          return bad(e, spec, 0, "label %c repeats in operand "
                     "%d over dims of sizes %lld and %lld", letter(l), k + 1,
                     (long long)ops[k]->size[d2], (long long)ops[k]->size[d]);
      if (see(e, spec, x, where, l, ops[k]->size[d], k)) return e->code;
    }
  }
  /* The output: given, or the labels seen once in ASCII order after the
   * ... dims (NumPy's implicit mode). */
  int count[ND_LABELS] = {0};
  for (k = 0; k < n; k++)
    for (int d = 0; d < x->nlab[k]; d++) count[x->lab[k][d]]++;
  x->nout = 0;
  if (arrow) {
    int seen[ND_LABELS] = {0}, ell = 0;
    for (int i = 0; i < nraw[n]; i++) {
      int l = raw[n][i];
      if (l == ELL_MARK) {
        ell = 1;
        if (x->nout + x->nell > ND_MAX_DIMS)
          return bad(e, spec, pos[n][i], "the output would have more than %d "
                     "dims", ND_MAX_DIMS);
        for (int j = 0; j < x->nell; j++)
          x->out[x->nout++] = (signed char)(ND_ELL + j);
        continue;
      }
      if (!count[l])
        return bad(e, spec, pos[n][i], "output label %c is in no operand",
                   letter(l));
      if (seen[l]++)
        return bad(e, spec, pos[n][i], "output label %c repeats", letter(l));
      if (x->nout >= ND_MAX_DIMS)
        return bad(e, spec, pos[n][i], "the output would have more than %d "
                   "dims", ND_MAX_DIMS);
      x->out[x->nout++] = (signed char)l;
    }
    if (x->nell && !ell)
      return bad(e, spec, 0, "the operands' '...' dims must appear in the "
                 "output: add '...' to it");
  } else {
    for (int j = 0; j < x->nell; j++)
      x->out[x->nout++] = (signed char)(ND_ELL + j);
    for (int l = 0; l < ND_ELL; l++)
      if (count[l] == 1) {
        if (x->nout >= ND_MAX_DIMS)
          return bad(e, spec, 0, "the output would have more than %d dims",
                     ND_MAX_DIMS);
        x->out[x->nout++] = (signed char)l;
      }
  }
  /* Names for plans: letters as given, ... dims under unused letters. */
  for (int l = 0; l < ND_ELL; l++) x->name[l] = letter(l);
  int next = ND_ELL - 1;
  for (int j = 0; j < x->nell; j++) {
    while (next >= 0 && count[next]) next--;
    x->name[ND_ELL + j] = next >= 0 ? letter(next--) : '?';
  }
  return ND_OK;
}
