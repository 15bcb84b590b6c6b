/* safetensors files: an 8-byte little-endian header length N, N bytes of
 * JSON {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__":
 * {str: str}}, then the data, every byte of it some tensor's. The header
 * is parsed with cJSON (its allocations are malloc's: cJSON's hooks are
 * process-wide, not nd's to take from a host; the tree lives only inside
 * a call). dtypes are mapped to nd dtype names and looked up by name, so
 * a dtype nd gains is read without a change here. */
#include "mapped.h"
#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define HEADER_MAX ((int64_t)100 << 20) /* the format's own limit */
#define EXACT ((double)((int64_t)1 << 53))

static const struct {
  const char *st, *nd; /* the file's name, nd's */
  int size;
} kinds[] = {{"F64", "float64", 8},  {"F32", "float32", 4},
             {"F16", "float16", 2},  {"BF16", "bfloat16", 2},
             {"I64", "int64", 8},    {"I32", "int32", 4},
             {"I16", "int16", 2},    {"I8", "int8", 1},
             {"U64", "uint64", 8},   {"U32", "uint32", 4},
             {"U16", "uint16", 2},   {"U8", "uint8", 1},
             {"BOOL", "bool", 1},    {"F8_E4M3", "float8_e4m3fn", 1},
             {"F8_E5M2", "float8_e5m2", 1}};
#define NKINDS ((int)(sizeof kinds / sizeof *kinds))

static int kind_of(const char *st) {
  for (int k = 0; k < NKINDS; k++)
    if (!strcmp(kinds[k].st, st)) return k;
  return -1;
}

const char *nd_safetensors_dtype_name(int dtype) {
  for (int k = 0; k < NKINDS; k++)
    if (nd_dtype_from_name(kinds[k].nd) == dtype) return kinds[k].st;
  return NULL;
}

void nd_safetensors_free(nd_safetensors *f) {
  if (!f) return;
  if (f->tensors)
    for (int i = 0; i < f->n; i++) nd_release(&f->tensors[i]);
  nd_scratch_free(f->tensors);
  nd_scratch_free(f->entries);
  nd_scratch_free(f->meta);
  nd_scratch_free(f->text);
  memset(f, 0, sizeof *f);
}

/* Strict UTF-8: no overlong forms, surrogates or code points past 10FFFF. */
static int utf8_ok(const unsigned char *s) {
  while (*s) {
    unsigned c = *s++;
    int n = c < 0x80 ? 0 : c >= 0xC2 && c <= 0xDF ? 1
          : c >= 0xE0 && c <= 0xEF ? 2 : c >= 0xF0 && c <= 0xF4 ? 3 : -1;
    if (n < 0) return 0;
    for (int k = 0; k < n; k++, s++) {
      if ((*s & 0xC0) != 0x80) return 0;
      if (k == 0 && ((c == 0xE0 && *s < 0xA0) || (c == 0xED && *s > 0x9F) ||
                     (c == 0xF0 && *s < 0x90) || (c == 0xF4 && *s > 0x8F)))
        return 0;
    }
  }
  return 1;
}

/* A JSON number that is an integer in [0, 2^53). */
static int whole(const cJSON *j, int64_t *v) {
  if (!cJSON_IsNumber(j)) return 0;
  double d = cJSON_GetNumberValue(j);
  if (!(d >= 0 && d < EXACT) || d != (double)(int64_t)d) return 0;
  *v = (int64_t)d;
  return 1;
}

static int by_begin(const void *a, const void *b) {
  const nd_safetensors_entry *x = a, *y = b;
  if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
  if (x->end != y->end) return x->end < y->end ? -1 : 1;
  return strcmp(x->name, y->name); /* empty tensors: a fixed order */
}
static int by_name(const void *a, const void *b) {
  return strcmp(((const nd_safetensors_entry *)a)->name,
                ((const nd_safetensors_entry *)b)->name);
}

/* Copies s into the text block at *at. */
static const char *keep(char *text, size_t *at, const char *s) {
  size_t n = strlen(s) + 1;
  memcpy(text + *at, s, n);
  *at += n;
  return text + *at - n;
}

/* One tensor's entry from its JSON object. */
static nd_status entry(nd_err *e, const char *fn, const char *path,
                       const cJSON *j, nd_safetensors_entry *t) {
  const char *name = t->name;
  if (!cJSON_IsObject(j))
    return nd_fail(e, ND_EIO, "%s: %s: tensor '%s' is not an object", fn,
                   path, name);
  const cJSON *dt = NULL, *shape = NULL, *offs = NULL, *c;
  cJSON_ArrayForEach(c, j) {
    if (!strcmp(c->string, "dtype") && !dt) dt = c;
    else if (!strcmp(c->string, "shape") && !shape) shape = c;
    else if (!strcmp(c->string, "data_offsets") && !offs) offs = c;
    else
      return nd_fail(e, ND_EIO, "%s: %s: tensor '%s' has an unexpected or "
                     "repeated key '%s'", fn, path, name, c->string);
  }
  if (!dt || !shape || !offs)
    return nd_fail(e, ND_EIO, "%s: %s: tensor '%s' has no %s", fn, path,
                   name, !dt ? "dtype" : !shape ? "shape" : "data_offsets");
  if (!cJSON_IsString(dt) || (t->kind = kind_of(dt->valuestring)) < 0)
    return nd_fail(e, ND_EIO, "%s: %s: tensor '%s' has an unknown dtype %s%.20s%s",
                   fn, path, name, cJSON_IsString(dt) ? "'" : "(not a string)",
                   cJSON_IsString(dt) ? dt->valuestring : "",
                   cJSON_IsString(dt) ? "'" : "");
  t->st_dtype = kinds[t->kind].st;
  t->dtype = nd_dtype_from_name(kinds[t->kind].nd);
  int n = cJSON_IsArray(shape) ? cJSON_GetArraySize(shape) : -1;
  if (n < 0 || n > ND_MAX_DIMS)
    return nd_fail(e, ND_EIO, "%s: %s: tensor '%s': shape is not a list of "
                   "at most %d integers", fn, path, name, ND_MAX_DIMS);
  t->ndim = n;
  int64_t numel = 1, bytes;
  int k = 0;
  cJSON_ArrayForEach(c, shape) {
    if (!whole(c, &t->size[k]))
      return nd_fail(e, ND_EIO, "%s: %s: tensor '%s': shape entries must be "
                     "non-negative integers below 2^53", fn, path, name);
    if (nd_mul_ovf(numel, t->size[k], &numel)) numel = -1;
    k++;
  }
  char b[ND_SIZES_BUF];
  if (numel < 0 || nd_mul_ovf(numel, kinds[t->kind].size, &bytes))
    return nd_fail(e, ND_EOVERFLOW, "%s: %s: tensor '%s': shape %s has more "
                   "bytes than an int64 can count", fn, path, name,
                   nd_fmt_sizes(b, sizeof b, t->ndim, t->size));
  if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2 ||
      !whole(cJSON_GetArrayItem(offs, 0), &t->begin) ||
      !whole(cJSON_GetArrayItem(offs, 1), &t->end) || t->end < t->begin)
    return nd_fail(e, ND_EIO, "%s: %s: tensor '%s': data_offsets must be "
                   "[begin, end], integers with 0 <= begin <= end < 2^53",
                   fn, path, name);
  if (t->end - t->begin != bytes)
    return nd_fail(e, ND_EIO, "%s: %s: tensor '%s': %s of shape %s is %lld "
                   "bytes, its data_offsets [%lld, %lld] hold %lld", fn, path,
                   name, t->st_dtype,
                   nd_fmt_sizes(b, sizeof b, t->ndim, t->size),
                   (long long)bytes, (long long)t->begin, (long long)t->end,
                   (long long)(t->end - t->begin));
  return ND_OK;
}

/* Where the JSON text at h has a number written with a fraction or an
 * exponent, -1 if none. cJSON hands 1.0 and 1e3 over as the doubles 1 and
 * 1000; safetensors' own reader takes shapes and offsets as integers and
 * refuses them, so nd does too. Strings are skipped, escapes included. */
static int64_t fraction_at(const char *h, int64_t len) {
  for (int64_t i = 0; i < len; i++) {
    if (h[i] == '"') {
      for (i++; i < len && h[i] != '"'; i++)
        if (h[i] == '\\') i++;
    } else if (h[i] == '-' || (h[i] >= '0' && h[i] <= '9')) {
      int64_t at = i;
      for (; i < len && strchr("+-0123456789.eE", h[i]); i++)
        if (h[i] == '.' || h[i] == 'e' || h[i] == 'E') return at;
      i--;
    }
  }
  return -1;
}

/* The header (len bytes at h) of a file of file_size bytes. */
static nd_status parse(nd_err *e, const char *fn, const char *path,
                       const char *h, int64_t len, int64_t file_size,
                       nd_safetensors *f) {
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(h, (size_t)len, &end, 0);
  nd_status st = ND_OK;
  if (!root)
    return nd_fail(e, ND_EIO, "%s: %s: the header is not valid JSON (at "
                   "byte %lld of %lld)", fn, path,
                   (long long)(cJSON_GetErrorPtr() && cJSON_GetErrorPtr() >= h
                                   ? cJSON_GetErrorPtr() - h : 0),
                   (long long)len);
  for (const char *p = end; p < h + len; p++)
    if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
      st = nd_fail(e, ND_EIO, "%s: %s: bytes after the header's JSON object "
                   "(only spaces may pad it)", fn, path);
      goto done;
    }
  if (!cJSON_IsObject(root)) {
    st = nd_fail(e, ND_EIO, "%s: %s: the header is not a JSON object", fn,
                 path);
    goto done;
  }
  int64_t frac = fraction_at(h, len);
  if (frac >= 0) {
    st = nd_fail(e, ND_EIO, "%s: %s: the number at byte %lld of the header "
                 "has a fraction or an exponent (shapes and data_offsets "
                 "are integers)", fn, path, (long long)frac);
    goto done;
  }
  /* One block for every string kept: names, metadata keys and values. */
  size_t text = 1;
  int n = 0, nmeta = 0;
  const cJSON *c, *meta = NULL;
  cJSON_ArrayForEach(c, root) {
    if (!utf8_ok((const unsigned char *)c->string)) {
      st = nd_fail(e, ND_EIO, "%s: %s: a tensor name is not valid UTF-8",
                   fn, path);
      goto done;
    }
    if (!strcmp(c->string, "__metadata__")) {
      if (meta || !cJSON_IsObject(c)) {
        st = nd_fail(e, ND_EIO, "%s: %s: __metadata__ must be one object of "
                     "strings", fn, path);
        goto done;
      }
      meta = c;
      const cJSON *m;
      cJSON_ArrayForEach(m, c) {
        if (!cJSON_IsString(m) || !utf8_ok((const unsigned char *)m->string) ||
            !utf8_ok((const unsigned char *)m->valuestring)) {
          st = nd_fail(e, ND_EIO, "%s: %s: __metadata__ must map strings to "
                       "strings (valid UTF-8)", fn, path);
          goto done;
        }
        text += strlen(m->string) + strlen(m->valuestring) + 2;
        nmeta++;
      }
    } else {
      text += strlen(c->string) + 1;
      n++;
    }
  }
  f->entries = nd_scratch_alloc(e, fn, n ? n : 1, sizeof *f->entries, true);
  f->meta = nd_scratch_alloc(e, fn, 2 * nmeta + 1, sizeof *f->meta, true);
  f->text = nd_scratch_alloc(e, fn, (int64_t)text, 1, false);
  if (!f->entries || !f->meta || !f->text) {
    st = e->code;
    goto done;
  }
  size_t at = 0;
  int i = 0;
  cJSON_ArrayForEach(c, root) {
    if (c == meta) continue;
    f->entries[i].name = keep(f->text, &at, c->string);
    if ((st = entry(e, fn, path, c, &f->entries[i]))) goto done;
    i++;
  }
  f->n = n;
  if (meta) {
    const cJSON *m;
    cJSON_ArrayForEach(m, meta) {
      f->meta[2 * f->nmeta] = keep(f->text, &at, m->string);
      f->meta[2 * f->nmeta + 1] = keep(f->text, &at, m->valuestring);
      f->nmeta++;
    }
  }
  /* Names once each; the data tiled by the tensors: from 0, no holes, no
   * overlaps, to the end of the file. */
  qsort(f->entries, (size_t)n, sizeof *f->entries, by_name);
  for (i = 1; i < n; i++)
    if (!strcmp(f->entries[i - 1].name, f->entries[i].name)) {
      st = nd_fail(e, ND_EIO, "%s: %s: tensor name '%s' appears twice", fn,
                   path, f->entries[i].name);
      goto done;
    }
  qsort(f->entries, (size_t)n, sizeof *f->entries, by_begin);
  int64_t next = 0, data = file_size - 8 - len;
  for (i = 0; i < n; i++) {
    const nd_safetensors_entry *t = &f->entries[i];
    if (t->begin != next) {
      st = nd_fail(e, ND_EIO, "%s: %s: tensor '%s' starts at byte %lld of "
                   "the data where %lld was expected (%s)", fn, path, t->name,
                   (long long)t->begin, (long long)next,
                   t->begin > next ? "a hole" : "an overlap");
      goto done;
    }
    next = t->end;
  }
  if (next != data)
    st = nd_fail(e, ND_EIO, "%s: %s: the tensors hold %lld bytes of data, "
                 "the file has %lld after its header", fn, path,
                 (long long)next, (long long)data);
done:
  cJSON_Delete(root);
  return st;
}

nd_status nd_safetensors_header(nd_err *e, const char *fn, const char *path,
                                nd_safetensors *f) {
  memset(f, 0, sizeof *f);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return nd_fail(e, ND_EIO, "%s: cannot open %s: %s", fn, path,
                   strerror(errno));
  struct stat sb;
  unsigned char pre[8];
  char *h = NULL;
  nd_status st = ND_OK;
  if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
    st = nd_fail(e, ND_EIO, "%s: %s is not a regular file", fn, path);
    goto done;
  }
  if (sb.st_size < 8 || pread(fd, pre, 8, 0) != 8) {
    st = nd_fail(e, ND_EIO, "%s: %s is too short for a safetensors file (%lld "
                 "bytes)", fn, path, (long long)sb.st_size);
    goto done;
  }
  uint64_t len = 0;
  for (int k = 7; k >= 0; k--) len = len << 8 | pre[k];
  if (len > (uint64_t)HEADER_MAX) {
    st = nd_fail(e, ND_EIO, "%s: %s: header length %llu is over the format's "
                 "limit of 100 MB", fn, path, (unsigned long long)len);
    goto done;
  }
  if ((int64_t)len > (int64_t)sb.st_size - 8) {
    st = nd_fail(e, ND_EIO, "%s: %s: header length %llu runs past the end of "
                 "the file (%lld bytes)", fn, path, (unsigned long long)len,
                 (long long)sb.st_size);
    goto done;
  }
  if (!(h = nd_scratch_alloc(e, fn, (int64_t)len + 1, 1, false))) {
    st = e->code;
    goto done;
  }
  if (pread(fd, h, len, 8) != (ssize_t)len) {
    st = nd_fail(e, ND_EIO, "%s: reading %s failed", fn, path);
    goto done;
  }
  h[len] = 0;
  f->header_len = (int64_t)len;
  f->file_size = (int64_t)sb.st_size;
  st = parse(e, fn, path, h, (int64_t)len, (int64_t)sb.st_size, f);
done:
  nd_scratch_free(h);
  close(fd);
  if (st) nd_safetensors_free(f);
  return st;
}

/* A bool tensor's bytes other than 0 and 1 (nd's kernels expect those). */
static int odd_bools(const unsigned char *p, int64_t n) {
  for (int64_t k = 0; k < n; k++)
    if (p[k] > 1) return 1;
  return 0;
}

nd_status nd_safetensors_load(nd_err *e, const char *path, const char *mmap,
                              nd_safetensors *f) {
  const char *fn = "safetensors.load";
  int mode = -1;
  if (mmap && ((mode = nd_map_mode_of(mmap)) < 0 || mode == ND_MAP_WRITE)) {
    memset(f, 0, sizeof *f);
    return nd_fail(e, ND_EINVAL, "%s: mmap must be true (read-only) or \"c\" "
                   "(copy-on-write), got \"%s\"", fn, mmap);
  }
  if (nd_safetensors_header(e, fn, path, f)) return e->code;
  nd_status st = ND_OK;
  nd_storage *map = NULL;
  int fd = -1;
  for (int i = 0; i < f->n; i++)
    if (f->entries[i].dtype < 0) {
      st = nd_fail(e, ND_EINVAL, "%s: %s: tensor '%s': dtype %s (%s) is not "
                   "supported by this build", fn, path, f->entries[i].name,
                   f->entries[i].st_dtype, kinds[f->entries[i].kind].nd);
      goto done;
    }
  if (!(f->tensors = nd_scratch_alloc(e, fn, f->n ? f->n : 1,
                                      sizeof *f->tensors, true))) {
    st = e->code;
    goto done;
  }
  if (mode >= 0 ? (st = nd_map_file(e, fn, path, (nd_map_mode)mode, &map))
                : (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
    if (!st) st = nd_fail(e, ND_EIO, "%s: cannot open %s: %s", fn, path,
                          strerror(errno));
    goto done;
  }
  if (map && map->nbytes != f->file_size) {
    st = nd_fail(e, ND_EIO, "%s: %s changed while it was read", fn, path);
    goto done;
  }
  int64_t base = 8 + f->header_len;
  for (int i = 0; i < f->n; i++) {
    const nd_safetensors_entry *t = &f->entries[i];
    nd_tensor *r = &f->tensors[i];
    int64_t es = nd_dtype_size(t->dtype), at = base + t->begin,
            nb = t->end - t->begin;
    const unsigned char *p = map ? (const unsigned char *)map->data + at : NULL;
    if (map && at % es == 0 && !(t->dtype == ND_BOOL && odd_bools(p, nb))) {
      /* in place: a view of the one mapping */
      nd_storage_retain(map);
      r->storage = map;
      r->offset = at / es;
      r->dtype = t->dtype;
      r->ndim = t->ndim;
      memcpy(r->size, t->size, sizeof(int64_t) * (size_t)t->ndim);
      nd_contiguous_strides(e, t->ndim, r->size, r->stride, NULL);
      continue;
    }
    /* a copy: no mapping, or misaligned for its elements, or bool bytes
     * to normalise; a copy from a read-only mapping is read-only too */
    if (nd_empty(e, r, t->dtype, t->ndim, t->size)) {
      st = nd_err_name(e, fn);
      goto done;
    }
    if (map) {
      memcpy(nd_data(r), p, (size_t)nb);
    } else if (nb && pread(fd, nd_data(r), (size_t)nb, at) != (ssize_t)nb) {
      st = nd_fail(e, ND_EIO, "%s: reading %s failed (is it truncated?)", fn,
                   path);
      goto done;
    }
    if (t->dtype == ND_BOOL) {
      unsigned char *b = nd_data(r);
      for (int64_t k = 0; k < nb; k++) b[k] = b[k] != 0;
    }
    if (map && map->readonly) nd_set_readonly(r, 1);
  }
done:
  if (map) nd_storage_release(map);
  if (fd >= 0) close(fd);
  if (st) nd_safetensors_free(f);
  return st;
}

/* ---- save ---- */
typedef struct order {
  int i;
  int64_t es;
  const char *name;
} order;
static int by_layout(const void *a, const void *b) {
  const order *x = a, *y = b;
  if (x->es != y->es) return x->es > y->es ? -1 : 1;
  return strcmp(x->name, y->name);
}

static int by_key(const void *a, const void *b) {
  return strcmp(**(const char *const *const *)a, **(const char *const *const *)b);
}

static int little_endian(void) {
  const uint16_t one = 1;
  return *(const uint8_t *)&one == 1;
}

nd_status nd_safetensors_save(nd_err *e, const char *path, int n,
                              const char *const *names,
                              const nd_tensor *const *ts, int nmeta,
                              const char *const *meta) {
  const char *fn = "safetensors.save";
  if (!little_endian())
    return nd_fail(e, ND_EINVAL, "%s: big-endian hosts are not supported",
                   fn);
  order *o = nd_scratch_alloc(e, fn, n ? n : 1, sizeof *o, false);
  if (!o) return e->code;
  nd_status st = ND_OK;
  cJSON *root = NULL;
  char *json = NULL;
  const char *const **keys = NULL;
  FILE *out = NULL;
  for (int i = 0; i < n; i++) {
    if (!utf8_ok((const unsigned char *)names[i]) ||
        !strcmp(names[i], "__metadata__")) {
      st = nd_fail(e, ND_EINVAL, "%s: tensor name '%s' is %s", fn, names[i],
                   utf8_ok((const unsigned char *)names[i])
                       ? "reserved" : "not valid UTF-8");
      goto done;
    }
    if (!nd_safetensors_dtype_name(ts[i]->dtype)) {
      st = nd_fail(e, ND_EINVAL, "%s: tensor '%s': dtype %s has no "
                   "safetensors name", fn, names[i],
                   nd_dtype_name(ts[i]->dtype));
      goto done;
    }
    o[i] = (order){i, nd_dtype_size(ts[i]->dtype), names[i]};
  }
  qsort(o, (size_t)n, sizeof *o, by_layout);
  for (int i = 1; i < n; i++)
    if (!strcmp(o[i - 1].name, o[i].name)) {
      st = nd_fail(e, ND_EINVAL, "%s: tensor name '%s' appears twice", fn,
                   o[i].name);
      goto done;
    }
  if (!(root = cJSON_CreateObject())) goto nomem;
  if (nmeta) { /* by key: the same bytes whatever order the caller has */
    cJSON *m = cJSON_AddObjectToObject(root, "__metadata__");
    if (!m || !(keys = nd_scratch_alloc(e, fn, nmeta, sizeof *keys, false)))
      goto nomem;
    for (int k = 0; k < nmeta; k++) keys[k] = &meta[2 * k];
    qsort(keys, (size_t)nmeta, sizeof *keys, by_key);
    for (int k = 0; k < nmeta; k++) {
      if (!utf8_ok((const unsigned char *)keys[k][0]) ||
          !utf8_ok((const unsigned char *)keys[k][1])) {
        st = nd_fail(e, ND_EINVAL, "%s: metadata must be valid UTF-8", fn);
        goto done;
      }
      if (k && !strcmp(keys[k - 1][0], keys[k][0])) {
        st = nd_fail(e, ND_EINVAL, "%s: metadata key '%s' appears twice", fn,
                     keys[k][0]);
        goto done;
      }
      if (!cJSON_AddStringToObject(m, keys[k][0], keys[k][1])) goto nomem;
    }
  }
  int64_t at = 0;
  for (int k = 0; k < n; k++) {
    const nd_tensor *t = ts[o[k].i];
    int64_t nb = nd_numel(t) * o[k].es;
    cJSON *j = cJSON_AddObjectToObject(root, o[k].name), *s, *d;
    if (!j || !cJSON_AddStringToObject(j, "dtype",
                                       nd_safetensors_dtype_name(t->dtype)) ||
        !(s = cJSON_AddArrayToObject(j, "shape")))
      goto nomem;
    for (int q = 0; q < t->ndim; q++) {
      cJSON *v = cJSON_CreateNumber((double)t->size[q]);
      if (!v || !cJSON_AddItemToArray(s, v)) { cJSON_Delete(v); goto nomem; }
    }
    if (!(d = cJSON_AddArrayToObject(j, "data_offsets"))) goto nomem;
    for (int q = 0; q < 2; q++) {
      cJSON *v = cJSON_CreateNumber((double)(q ? at + nb : at));
      if (!v || !cJSON_AddItemToArray(d, v)) { cJSON_Delete(v); goto nomem; }
    }
    at += nb;
  }
  if (!(json = cJSON_PrintUnformatted(root))) goto nomem;
  size_t len = strlen(json), padded = (len + 7) / 8 * 8;
  if (!(out = fopen(path, "wb"))) {
    st = nd_fail(e, ND_EIO, "%s: cannot open %s: %s", fn, path,
                 strerror(errno));
    goto done;
  }
  unsigned char pre[8];
  for (int k = 0; k < 8; k++) pre[k] = (unsigned char)((uint64_t)padded >> (8 * k));
  int ok = fwrite(pre, 1, 8, out) == 8 && fwrite(json, 1, len, out) == len;
  for (size_t k = len; ok && k < padded; k++) ok = fputc(' ', out) != EOF;
  for (int k = 0; ok && k < n; k++) {
    nd_tensor c = ND_UNSET;
    const nd_tensor *t = ts[o[k].i];
    size_t nb = (size_t)(nd_numel(t) * o[k].es);
    if (!nb) continue;
    if (nd_contiguous(e, &c, t)) {
      st = nd_err_name(e, fn);
      goto done;
    }
    ok = fwrite(nd_data(&c), 1, nb, out) == nb;
    nd_release(&c);
  }
  int closed = fclose(out) == 0;
  out = NULL;
  if (!ok || !closed)
    st = nd_fail(e, ND_EIO, "%s: writing %s failed", fn, path);
  goto done;
nomem:
  st = nd_fail(e, ND_ENOMEM, "%s: not enough memory", fn);
done:
  if (out) fclose(out);
  if (json) cJSON_free(json);
  cJSON_Delete(root);
  nd_scratch_free(keys);
  nd_scratch_free(o);
  return st;
}
