/* NumPy .npy files: load versions 1.0, 2.0 and 3.0 in either byte order,
 * C or Fortran order; save version 1.0 little-endian, in Fortran order
 * when the tensor is a transposed compact block (no copy), else C order. */
#include "mapped.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static const char MAGIC[] = "\x93NUMPY";

/* A dtype's .npy descr is its kind letter and byte size ('<i2', '|u1'):
 * every dtype so far is one NumPy has under that code. */
static int descr_dtype(char kind, int bytes) {
  for (int d = 0; d < ND_NDTYPES; d++)
    if (nd_dtype_kind(d) == kind && nd_dtype_size(d) == bytes &&
        d != ND_BFLOAT16) /* 'f2' is float16 */
      return d;
  return -1;
}

static int little_endian(void) {
  const uint16_t one = 1;
  return *(const uint8_t *)&one == 1;
}

static void swap_bytes(char *p, int64_t n, int size) {
  for (int64_t i = 0; i < n; i++, p += size)
    for (int a = 0, b = size - 1; a < b; a++, b--) {
      char t = p[a]; p[a] = p[b]; p[b] = t;
    }
}

/* ---- header parsing: a Python dict literal ----
 * NumPy evaluates the header as a literal and requires a dict of exactly
 * the keys descr (a string), fortran_order (True or False) and shape (a
 * tuple of integers); anything else is refused, as NumPy refuses it. */
typedef struct lexer {
  const char *p, *end;
} lexer;

static void skip_space(lexer *x) {
  while (x->p < x->end && (*x->p == ' ' || *x->p == '\t' || *x->p == '\n' ||
                           *x->p == '\r'))
    x->p++;
}

static int eat(lexer *x, char c) {
  skip_space(x);
  if (x->p < x->end && *x->p == c) { x->p++; return 1; }
  return 0;
}

/* A quoted string without escapes into buf (at most n - 1 bytes). */
static int string(lexer *x, char *buf, size_t n) {
  skip_space(x);
  if (x->p >= x->end || (*x->p != '\'' && *x->p != '"')) return 0;
  char q = *x->p++;
  size_t k = 0;
  while (x->p < x->end && *x->p != q) {
    if (*x->p == '\\' || *x->p == '\n' || k + 1 >= n) return 0;
    buf[k++] = *x->p++;
  }
  if (x->p >= x->end) return 0;
  x->p++;
  buf[k] = 0;
  return 1;
}

static int word(lexer *x, const char *w) {
  size_t n = strlen(w);
  skip_space(x);
  if ((size_t)(x->end - x->p) < n || strncmp(x->p, w, n)) return 0;
  x->p += n;
  return 1;
}

/* (), (n,), (n, m) or (n, m,): non-negative integers; (n) is an int in
 * Python, not a tuple. */
static int shape_tuple(lexer *x, int *ndim, int64_t *size) {
  if (!eat(x, '(')) return 0;
  *ndim = 0;
  if (eat(x, ')')) return 1;
  for (;;) {
    skip_space(x);
    int64_t v = 0;
    const char *start = x->p;
    while (x->p < x->end && *x->p >= '0' && *x->p <= '9') {
      if (nd_mul_ovf(v, 10, &v) || nd_add_ovf(v, *x->p - '0', &v)) return 0;
      x->p++;
    }
    if (x->p == start || *ndim == ND_MAX_DIMS) return 0;
    if (x->p < x->end && *x->p == 'L') x->p++; /* Python 2 longs */
    size[(*ndim)++] = v;
    if (eat(x, ',')) {
      if (eat(x, ')')) return 1;
      continue;
    }
    return eat(x, ')') && *ndim > 1;
  }
}

/* The descr as NumPy spells it and the dtype it names, then what nd reads. */
static nd_status unsupported_descr(nd_err *e, const char *path, const char *p) {
  static const struct { char kind; const char *name; } kinds[] = {
      {'f', "float"}, {'i', "int"}, {'u', "uint"}, {'c', "complex"},
      {'b', "bool"}, {'U', "str"}, {'S', "bytes"}, {'O', "object"},
      {'M', "datetime64"}, {'m', "timedelta64"}, {'V', "void"}};
  int n = 0;
  while (n < 16 && p[n] && p[n] != '\'' && p[n] != '"') n++;
  const char *name = "unknown";
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
    if (n > 1 && kinds[i].kind == p[1]) name = kinds[i].name;
  long long bytes = 0; /* at most 14 digits (n <= 16): no overflow */
  for (int i = 2; i < n && p[i] >= '0' && p[i] <= '9'; i++)
    bytes = bytes * 10 + (p[i] - '0');
  long long bits = n > 2 && strchr("fiuc", p[1]) ? 8 * bytes : 0;
  char dt[40], all[400] = "";
  snprintf(dt, sizeof dt, bits ? "%s%lld" : "%s", name, bits);
  size_t k = 0; /* what nd reads, from the dtype list: "float32 ('<f4'), ..." */
  int last = ND_NDTYPES - 1; /* the dtypes with a descr (not bfloat16) */
  while (descr_dtype(nd_dtype_kind(last), (int)nd_dtype_size(last)) != last)
    last--;
  for (int d = 0; d <= last && k < sizeof all; d++) {
    int64_t size = nd_dtype_size(d);
    if (descr_dtype(nd_dtype_kind(d), (int)size) != d) continue;
    k += (size_t)snprintf(all + k, sizeof all - k, "%s%s ('%c%c%lld')",
                          d == 0 ? "" : d < last ? ", " : " and ",
                          nd_dtype_name(d), size == 1 ? '|' : '<',
                          nd_dtype_kind(d), (long long)size);
  }
  return nd_fail(e, ND_EIO, "load: %s: unsupported dtype '%.*s' (%s); nd reads "
                 "%s, either byte order", path, n, p, dt, all);
}

static nd_status parse_header(nd_err *e, const char *path, const char *h,
                              int64_t hlen, int *dtype, int *swap,
                              int *fortran, int *ndim, int64_t *size) {
  lexer x = {h, h + hlen};
  char key[32], descr[32];
  int seen = 0; /* bits: descr, fortran_order, shape */
  if (!eat(&x, '{'))
    return nd_fail(e, ND_EIO, "load: %s: header is not a dictionary", path);
  while (!eat(&x, '}')) {
    if (!string(&x, key, sizeof key) || !eat(&x, ':'))
      return nd_fail(e, ND_EIO, "load: %s: malformed header dictionary",
                     path);
    if (!strcmp(key, "descr")) {
      if (!string(&x, descr, sizeof descr))
        return nd_fail(e, ND_EIO, "load: %s: descr is not a string", path);
      seen |= 1;
    } else if (!strcmp(key, "fortran_order")) {
      if (word(&x, "True")) *fortran = 1;
      else if (word(&x, "False")) *fortran = 0;
      else
        return nd_fail(e, ND_EIO, "load: %s: fortran_order is not True or "
                       "False", path);
      seen |= 2;
    } else if (!strcmp(key, "shape")) {
      if (!shape_tuple(&x, ndim, size))
        return nd_fail(e, ND_EIO, "load: %s: shape is not a tuple of at "
                       "most %d non-negative integers", path, ND_MAX_DIMS);
      seen |= 4;
    } else {
      return nd_fail(e, ND_EIO, "load: %s: unexpected key '%s' in header",
                     path, key);
    }
    if (!eat(&x, ',')) {
      if (eat(&x, '}')) break;
      return nd_fail(e, ND_EIO, "load: %s: malformed header dictionary "
                     "(missing ',' or '}')", path);
    }
  }
  skip_space(&x);
  if (x.p != x.end)
    return nd_fail(e, ND_EIO, "load: %s: unexpected bytes after the header "
                   "dictionary", path);
  if (seen != 7)
    return nd_fail(e, ND_EIO, "load: %s: header has no %s", path,
                   !(seen & 1) ? "descr" : !(seen & 2) ? "fortran_order"
                                                       : "shape");
  const char *p = descr;
  char order = p[0], kind = p[1];
  int bytes = 0, found = -1;
  for (const char *q = p + 2; *q && bytes < 100; q++)
    bytes = *q >= '0' && *q <= '9' ? bytes * 10 + (*q - '0') : 1000;
  found = descr_dtype(kind, bytes);
  if (strlen(p) < 3 || found < 0 ||
      !(order == '<' || order == '>' || order == '|' || order == '='))
    return unsupported_descr(e, path, p);
  *dtype = found;
  *swap = bytes > 1 && order != '|' && order != '=' &&
          (order == '<') != little_endian();
  return ND_OK;
}

/* What a header says: the dtype, byte order, dims, and the row-major
 * layout of the data (rsize: Fortran order's dims reversed). */
typedef struct npy_info {
  int dtype, swap, fortran, ndim;
  int64_t size[ND_MAX_DIMS], rsize[ND_MAX_DIMS], stride[ND_MAX_DIMS];
  int64_t numel, es, nbytes;
} npy_info;

static nd_status truncated(nd_err *e, const char *path) {
  return nd_fail(e, ND_EIO, "load: %s is truncated", path);
}

/* The first `have` (up to 12) bytes of the file: the header's length and
 * where it starts. */
static nd_status npy_prefix(nd_err *e, const char *path,
                            const unsigned char *pre, int64_t have,
                            int64_t *hlen, int64_t *hstart) {
  if (have < 8 || memcmp(pre, MAGIC, 6))
    return nd_fail(e, ND_EIO, "load: %s is not a .npy file", path);
  if (pre[6] == 1) {
    if (have < 10) return truncated(e, path);
    *hlen = pre[8] | pre[9] << 8;
    *hstart = 10;
  } else if (pre[6] == 2 || pre[6] == 3) {
    if (have < 12) return truncated(e, path);
    *hlen = (int64_t)pre[8] | (int64_t)pre[9] << 8 |
            (int64_t)pre[10] << 16 | (int64_t)pre[11] << 24;
    *hstart = 12;
  } else {
    return nd_fail(e, ND_EIO, "load: %s: unsupported .npy version %d.%d",
                   path, pre[6], pre[7]);
  }
  if (*hlen > (1 << 20))
    return nd_fail(e, ND_EIO, "load: %s: header of %lld bytes is too long",
                   path, (long long)*hlen);
  return ND_OK;
}

/* The header's dict, then the layout it promises, which must be exactly
 * the data_bytes that follow it. */
static nd_status npy_parse(nd_err *e, const char *path, const char *header,
                           int64_t hlen, int64_t data_bytes, npy_info *i) {
  memset(i, 0, sizeof *i);
  if (parse_header(e, path, header, hlen, &i->dtype, &i->swap, &i->fortran,
                   &i->ndim, i->size))
    return e->code;
  for (int k = 0; k < i->ndim; k++)
    i->rsize[k] = i->size[i->fortran ? i->ndim - 1 - k : k];
  i->es = nd_dtype_size(i->dtype);
  char b[ND_SIZES_BUF];
  if (nd_contiguous_strides(e, i->ndim, i->rsize, i->stride, &i->numel) ||
      nd_mul_ovf(i->numel, i->es, &i->nbytes))
    return nd_fail(e, ND_EOVERFLOW, "load: %s: header shape %s has more "
                   "bytes than an int64 can count", path,
                   nd_fmt_sizes(b, sizeof b, i->ndim, i->size));
  if (data_bytes != i->nbytes)
    return nd_fail(e, ND_EIO, "load: %s: header shape %s needs %lld bytes "
                   "of data, the file has %lld", path,
                   nd_fmt_sizes(b, sizeof b, i->ndim, i->size),
                   (long long)i->nbytes, (long long)data_bytes);
  return ND_OK;
}

/* Fortran order: the row-major layout of the reversed dims, viewed with
 * the dims reversed back (a column-major tensor, no copy). */
static void npy_dims(nd_tensor *t, const npy_info *i) {
  if (!i->fortran) return;
  for (int k = 0; k < i->ndim; k++) {
    t->size[k] = i->size[k];
    t->stride[k] = i->stride[i->ndim - 1 - k];
  }
}

nd_status nd_load_npy(nd_err *e, nd_tensor *out, const char *path) {
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f)
    return nd_fail(e, ND_EIO, "load: cannot open %s: %s", path,
                   strerror(errno));
  unsigned char pre[12];
  char *header = NULL;
  nd_status st = ND_OK;
  int64_t hlen = 0, hstart = 0;
  npy_info in;
  size_t have = fread(pre, 1, sizeof pre, f);
  long end;
  if ((st = npy_prefix(e, path, pre, (int64_t)have, &hlen, &hstart)))
    goto done;
  if (fseek(f, 0, SEEK_END) || (end = ftell(f)) < 0 ||
      fseek(f, (long)hstart, SEEK_SET))
    goto truncated;
  if (!(header = nd_scratch_alloc(e, "load", hlen + 1, 1, false))) {
    st = e->code;
    goto done;
  }
  if (fread(header, 1, (size_t)hlen, f) != (size_t)hlen) goto truncated;
  header[hlen] = 0;
  if ((st = npy_parse(e, path, header, hlen, (int64_t)end - hstart - hlen,
                      &in)))
    goto done;
  if ((st = nd_empty(e, out, in.dtype, in.ndim, in.rsize))) {
    char msg[sizeof e->msg]; /* "empty: not enough memory ..." */
    const char *colon = strchr(e->msg, ':');
    snprintf(msg, sizeof msg, "%s", colon ? colon + 2 : e->msg);
    nd_fail(e, st, "load: %s: %s", path, msg);
    goto done;
  }
  if (in.nbytes &&
      fread(nd_data(out), 1, (size_t)in.nbytes, f) != (size_t)in.nbytes) {
    nd_release(out);
    goto truncated;
  }
  if (in.swap) swap_bytes(nd_data(out), in.numel, (int)in.es);
  if (in.dtype == ND_BOOL) {
    uint8_t *b = nd_data(out);
    for (int64_t i = 0; i < in.numel; i++) b[i] = b[i] != 0;
  }
  npy_dims(out, &in);
  goto done;
truncated:
  st = truncated(e, path);
done:
  nd_scratch_free(header);
  fclose(f);
  return st;
}

/* A view straight over the mapped file. What cannot be viewed in place
 * (bytes to swap, data misaligned for its elements, bool bytes other than
 * 0 and 1, which nd's kernels do not expect and a read-only mapping cannot
 * fix) is refused, pointing to nd.load(path), which copies. */
nd_status nd_load_npy_mapped(nd_err *e, nd_tensor *out, const char *path,
                             const char *mode) {
  memset(out, 0, sizeof *out);
  int m = nd_map_mode_of(mode);
  if (m < 0)
    return nd_fail(e, ND_EINVAL, "load: mmap mode must be \"r\", \"r+\" "
                   "or \"c\", got \"%s\"", mode ? mode : "(null)");
  nd_storage *s;
  if (nd_map_file(e, "load", path, (nd_map_mode)m, &s)) return e->code;
  const unsigned char *p = s->data;
  int64_t n = s->nbytes, hlen = 0, hstart = 0;
  npy_info in;
  const char *why = NULL;
  if (npy_prefix(e, path, p, n < 12 ? n : 12, &hlen, &hstart)) goto fail;
  if (hlen > n - hstart) {
    truncated(e, path);
    goto fail;
  }
  if (npy_parse(e, path, (const char *)p + hstart, hlen, n - hstart - hlen,
                &in))
    goto fail;
  int64_t off = hstart + hlen;
  if (in.swap)
    why = "its data is big-endian (bytes to swap)";
  else if (off % in.es)
    why = "its data's offset is not a multiple of the element size";
  for (int64_t k = 0; !why && in.dtype == ND_BOOL && k < in.nbytes; k++)
    if (p[off + k] > 1) why = "its bool data has bytes other than 0 and 1";
  if (why) {
    nd_fail(e, ND_EIO, "load: %s cannot be mapped: %s; nd.load(path) "
            "without mmap reads a copy", path, why);
    goto fail;
  }
  out->storage = s;
  out->offset = off / in.es;
  out->dtype = in.dtype;
  out->ndim = in.ndim;
  for (int k = 0; k < in.ndim; k++) {
    out->size[k] = in.rsize[k];
    out->stride[k] = in.stride[k];
  }
  npy_dims(out, &in);
  return ND_OK;
fail:
  nd_storage_release(s);
  return e->code;
}

/* Column-major compact: the reversed dims are contiguous. */
static int fortran_contiguous(const nd_tensor *t) {
  nd_tensor r = *t;
  for (int i = 0; i < t->ndim; i++) {
    r.size[i] = t->size[t->ndim - 1 - i];
    r.stride[i] = t->stride[t->ndim - 1 - i];
  }
  return nd_is_contiguous(&r);
}

nd_status nd_save_npy(nd_err *e, const char *path, const nd_tensor *t) {
  if (t->dtype == ND_BFLOAT16) /* '<f2' is float16; bfloat16 has no code */
    return nd_fail(e, ND_EINVAL, "save: .npy has no bfloat16 dtype (save "
                   "it with nd.safetensors.save, or convert with "
                   ":to(\"float32\") first)");
  const int64_t size = nd_dtype_size(t->dtype);
  const char descr[4] = {size == 1 ? '|' : '<', nd_dtype_kind(t->dtype),
                         (char)('0' + size), 0};
  int fortran = !nd_is_contiguous(t) && fortran_contiguous(t);
  nd_tensor c = ND_UNSET;
  if (!fortran && nd_contiguous(e, &c, t)) return nd_err_name(e, "save");
  const nd_tensor *src = fortran ? t : &c;
  char dict[ND_SIZES_BUF + 128], shape[ND_SIZES_BUF] = "";
  int k = 0;
  for (int i = 0; i < t->ndim; i++)
    k += snprintf(shape + k, sizeof shape - (size_t)k, "%lld,%s",
                  (long long)t->size[i], i + 1 < t->ndim ? " " : "");
  if (t->ndim > 1) shape[k - 1] = 0; /* (2, 3) but (4,) */
  int n = snprintf(dict, sizeof dict,
                   "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }",
                   descr, fortran ? "True" : "False", shape);
  int total = 10 + n + 1, pad = (64 - total % 64) % 64; /* align to 64 */
  char head[10 + sizeof dict + 64];
  memcpy(head, MAGIC, 6);
  head[6] = 1; head[7] = 0;
  head[8] = (char)((n + pad + 1) & 0xff); head[9] = (char)((n + pad + 1) >> 8);
  memcpy(head + 10, dict, (size_t)n);
  memset(head + 10 + n, ' ', (size_t)pad);
  head[10 + n + pad] = '\n';
  FILE *f = fopen(path, "wb");
  if (!f) {
    nd_release(&c);
    return nd_fail(e, ND_EIO, "save: cannot open %s: %s", path,
                   strerror(errno));
  }
  int64_t numel = nd_numel(t), es = nd_dtype_size(t->dtype);
  size_t nbytes = (size_t)(numel * es);
  int ok = fwrite(head, 1, (size_t)total + (size_t)pad, f) ==
           (size_t)total + (size_t)pad;
  if (ok && nbytes) {
    if (little_endian() || es == 1) {
      /* Fortran-contiguous data starts at the lowest address. */
      int64_t lo, hi;
      nd_span(src, &lo, &hi);
      const char *p = (const char *)src->storage->data + lo * es;
      ok = fwrite(p, 1, nbytes, f) == nbytes;
    } else {
      ok = 0; /* big-endian hosts: not supported yet */
    }
  }
  ok = fclose(f) == 0 && ok;
  nd_release(&c);
  if (!ok) return nd_fail(e, ND_EIO, "save: writing %s failed", path);
  return ND_OK;
}
