/* DLPack exchange (include/nd_dlpack.h): export, import, round trips,
 * strided and negative-stride layouts, deleters run exactly once, refusals
 * leave ownership with the caller. Prints "N passed, N failed". */
#include "nd_dlpack.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

static nd_err fresh(void) {
  nd_err e;
  memset(&e, 0, sizeof e);
  return e;
}

/* A producer as another framework would be: its own buffer, shape and
 * strides, and a deleter that counts. */
typedef struct producer {
  DLManagedTensor m;
  int64_t shape[3], strides[3];
  double buf[24];
  int deleted;
} producer;

static void producer_deleter(DLManagedTensor *m) {
  ((producer *)m->manager_ctx)->deleted++;
}

static void producer_init(producer *p) {
  memset(p, 0, sizeof *p);
  for (int i = 0; i < 24; i++) p->buf[i] = i;
  p->shape[0] = 2, p->shape[1] = 3, p->shape[2] = 4;
  p->strides[0] = 12, p->strides[1] = 4, p->strides[2] = 1;
  p->m.dl_tensor = (DLTensor){p->buf, {kDLCPU, 0}, 3, {kDLFloat, 64, 1},
                              p->shape, p->strides, 0};
  p->m.manager_ctx = p;
  p->m.deleter = producer_deleter;
}

static double at(const nd_tensor *t, int64_t i, int64_t j, int64_t k) {
  nd_err e = fresh();
  int64_t idx[3] = {i, j, k};
  double v = -1;
  nd_get(&e, t, idx, &v);
  return v;
}

static void test_export(void) {
  nd_err e = fresh();
  nd_tensor a = ND_UNSET, v = ND_UNSET;
  int64_t sz[2] = {3, 4};
  OK(nd_arange(&e, &a, ND_INT32, 0, 12, 1));
  OK(nd_view(&e, &v, &a, 2, sz));
  nd_tensor t = ND_UNSET;
  OK(nd_transpose(&e, &t, &v, 0, 1)); /* 4x3, strides {1, 4} */
  DLManagedTensor *m = NULL;
  OK(nd_to_dlpack(&e, &t, &m));
  CHECK(m && m->deleter);
  if (!m) return;
  DLTensor *d = &m->dl_tensor;
  CHECK(d->ndim == 2 && d->shape[0] == 4 && d->shape[1] == 3);
  CHECK(d->strides[0] == 1 && d->strides[1] == 4);
  CHECK(d->dtype.code == kDLInt && d->dtype.bits == 32 && d->dtype.lanes == 1);
  CHECK(d->device.device_type == kDLCPU);
  CHECK((char *)d->data + d->byte_offset == (char *)nd_data(&t)); /* no copy */
  /* The export holds the storage: every nd header can go first. */
  nd_release(&t);
  nd_release(&v);
  nd_release(&a);
  CHECK(((int32_t *)d->data)[5] == 5);
  m->deleter(m);

  nd_tensor b = ND_UNSET;
  int64_t bs[1] = {2};
  OK(nd_zeros(&e, &b, ND_BOOL, 1, bs));
  OK(nd_to_dlpack(&e, &b, &m));
  CHECK(m->dl_tensor.dtype.code == kDLBool && m->dl_tensor.dtype.bits == 8);
  m->deleter(m);
  nd_release(&b);

  /* The integer dtypes as kDLInt / kDLUInt of their bits, both ways;
   * float16 as kDLFloat 16, bfloat16 as kDLBfloat 16. */
  const struct { int dt; uint8_t code, bits; } ints[] = {
      {ND_INT8, kDLInt, 8},    {ND_INT16, kDLInt, 16},  {ND_INT32, kDLInt, 32},
      {ND_INT64, kDLInt, 64},  {ND_UINT8, kDLUInt, 8},  {ND_UINT16, kDLUInt, 16},
      {ND_UINT32, kDLUInt, 32}, {ND_UINT64, kDLUInt, 64},
      {ND_FLOAT16, kDLFloat, 16}, {ND_BFLOAT16, kDLBfloat, 16}};
  for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
    nd_tensor x = ND_UNSET, y = ND_UNSET;
    OK(nd_zeros(&e, &x, ints[i].dt, 1, bs));
    OK(nd_to_dlpack(&e, &x, &m));
    CHECK(m->dl_tensor.dtype.code == ints[i].code &&
          m->dl_tensor.dtype.bits == ints[i].bits);
    OK(nd_from_dlpack(&e, &y, m)); /* takes m */
    CHECK(y.dtype == ints[i].dt && nd_data(&y) == nd_data(&x));
    nd_release(&y);
    nd_release(&x);
  }

  nd_tensor unset = ND_UNSET;
  CHECK(nd_to_dlpack(&e, &unset, &m) == ND_EINVAL && m == NULL);

  /* A read-only tensor is refused: the consumer could write through it. */
  OK(nd_zeros(&e, &b, ND_FLOAT32, 1, bs));
  CHECK(!nd_is_readonly(&b));
  nd_set_readonly(&b, 1);
  CHECK(nd_is_readonly(&b));
  m = NULL;
  CHECK(nd_to_dlpack(&e, &b, &m) == ND_EINVAL && m == NULL);
  CHECK(strstr(e.msg, "read-only") != NULL);
  CHECK(nd_set_readonly(&b, 0) == 0 && !nd_is_readonly(&b));
  OK(nd_to_dlpack(&e, &b, &m));
  if (m) m->deleter(m);
  nd_release(&b);

  /* A file mapped "r" is PROT_READ: its flag cannot be cleared, or the
   * next write would fault instead of raising. */
  char path[64];
  snprintf(path, sizeof path, "/tmp/nd-dlpack-test-%d.npy", (int)getpid());
  OK(nd_zeros(&e, &b, ND_FLOAT32, 1, bs));
  OK(nd_save_npy(&e, path, &b));
  nd_release(&b);
  OK(nd_load_npy_mapped(&e, &b, path, "r"));
  CHECK(nd_set_readonly(&b, 0) == -1 && nd_is_readonly(&b));
  CHECK(nd_set_readonly(&b, 1) == 0 && nd_is_readonly(&b));
  CHECK(nd_fill(&e, &b, 1) == ND_EINVAL);
  nd_release(&b);
  OK(nd_load_npy_mapped(&e, &b, path, "c"));
  CHECK(!nd_is_readonly(&b) && nd_set_readonly(&b, 1) == 0);
  CHECK(nd_set_readonly(&b, 0) == 0 && !nd_is_readonly(&b));
  nd_release(&b);
  remove(path);
}

static void test_import(void) {
  nd_err e = fresh();
  producer p;
  producer_init(&p);
  nd_tensor t = ND_UNSET, s = ND_UNSET;
  OK(nd_from_dlpack(&e, &t, &p.m));
  CHECK(t.ndim == 3 && t.size[2] == 4 && t.dtype == ND_FLOAT64);
  CHECK(nd_data(&t) == (void *)p.buf);
  CHECK(at(&t, 1, 2, 3) == 23);
  OK(nd_select(&e, &s, &t, 0, 1)); /* a view outlives the first header */
  nd_release(&t);
  CHECK(p.deleted == 0);
  int64_t i2[2] = {0, 0};
  OK(nd_set(&e, &s, i2, -5)); /* writes reach the producer's memory */
  CHECK(p.buf[12] == -5);
  nd_release(&s);
  CHECK(p.deleted == 1);

  /* Negative strides and a byte offset: a reversed view of the buffer. */
  producer_init(&p);
  p.shape[0] = 2, p.shape[1] = 3, p.shape[2] = 4;
  p.strides[0] = -12, p.strides[1] = 4, p.strides[2] = -1;
  p.m.dl_tensor.byte_offset = 15 * sizeof(double); /* element (0,0,0) */
  OK(nd_from_dlpack(&e, &t, &p.m));
  CHECK(at(&t, 0, 0, 0) == 15 && at(&t, 1, 0, 0) == 3);
  CHECK(at(&t, 0, 2, 3) == 20 && at(&t, 1, 2, 3) == 8);
  nd_tensor c = ND_UNSET;
  OK(nd_contiguous(&e, &c, &t));
  CHECK(((double *)nd_data(&c))[0] == 15);
  nd_release(&c);
  nd_release(&t);
  CHECK(p.deleted == 1);

  /* strides NULL means compact row-major. */
  producer_init(&p);
  p.m.dl_tensor.strides = NULL;
  OK(nd_from_dlpack(&e, &t, &p.m));
  CHECK(t.stride[0] == 12 && t.stride[1] == 4 && t.stride[2] == 1);
  nd_release(&t);
  CHECK(p.deleted == 1);

  /* Empty and 0-d. */
  producer_init(&p);
  p.shape[1] = 0;
  OK(nd_from_dlpack(&e, &t, &p.m));
  CHECK(nd_numel(&t) == 0);
  nd_release(&t);
  CHECK(p.deleted == 1);
  producer_init(&p);
  p.m.dl_tensor.ndim = 0;
  p.m.dl_tensor.byte_offset = 7 * sizeof(double);
  OK(nd_from_dlpack(&e, &t, &p.m));
  CHECK(t.ndim == 0 && *(double *)nd_data(&t) == 7);
  nd_release(&t);
  CHECK(p.deleted == 1);
}

/* Refusals: m stays the caller's, its deleter is not run. */
static void test_refusals(void) {
  nd_err e = fresh();
  producer p;
  nd_tensor t = ND_UNSET;
  producer_init(&p);
  p.m.dl_tensor.device.device_type = kDLCUDA;
  CHECK(nd_from_dlpack(&e, &t, &p.m) == ND_EINVAL && !t.storage);
  CHECK(strstr(e.msg, "from_dlpack: device type 2") != NULL);
  producer_init(&p);
  p.m.dl_tensor.dtype = (DLDataType){kDLFloat, 8, 1};
  CHECK(nd_from_dlpack(&e, &t, &p.m) == ND_EINVAL);
  CHECK(strstr(e.msg, "bits 8") != NULL);
  producer_init(&p);
  p.m.dl_tensor.dtype = (DLDataType){kDLBfloat, 32, 1};
  CHECK(nd_from_dlpack(&e, &t, &p.m) == ND_EINVAL);
  producer_init(&p);
  p.m.dl_tensor.dtype.lanes = 4;
  CHECK(nd_from_dlpack(&e, &t, &p.m) == ND_EINVAL);
  producer_init(&p);
  p.m.dl_tensor.ndim = ND_MAX_DIMS + 1;
  CHECK(nd_from_dlpack(&e, &t, &p.m) == ND_EINVAL);
  producer_init(&p);
  p.shape[0] = -2;
  CHECK(nd_from_dlpack(&e, &t, &p.m) == ND_EINVAL);
  producer_init(&p);
  p.strides[0] = INT64_MAX / 2;
  p.shape[0] = 4;
  CHECK(nd_from_dlpack(&e, &t, &p.m) == ND_EOVERFLOW);
  producer_init(&p);
  p.m.dl_tensor.data = NULL;
  CHECK(nd_from_dlpack(&e, &t, &p.m) == ND_EINVAL);
  CHECK(nd_from_dlpack(&e, &t, NULL) == ND_EINVAL);
  CHECK(p.deleted == 0);
}

/* nd -> DLPack -> nd: the same memory, and the export's deleter runs when
 * the re-imported tensor's last view goes. */
static void test_round_trip(void) {
  nd_err e = fresh();
  nd_tensor a = ND_UNSET, n = ND_UNSET, b = ND_UNSET;
  int64_t sz[2] = {4, 5};
  OK(nd_zeros(&e, &a, ND_FLOAT32, 2, sz));
  OK(nd_narrow(&e, &n, &a, 1, 1, 3));
  DLManagedTensor *m = NULL;
  OK(nd_to_dlpack(&e, &n, &m));
  OK(nd_from_dlpack(&e, &b, m));
  CHECK(nd_data(&b) == nd_data(&n));
  CHECK(b.size[0] == 4 && b.size[1] == 3 && b.stride[0] == 5);
  OK(nd_fill(&e, &b, 2.5));
  nd_release(&n);
  CHECK(((float *)nd_data(&a))[1] == 2.5f && ((float *)nd_data(&a))[0] == 0);
  long refs = a.storage->refs;
  nd_release(&b); /* runs the export's deleter: a's storage loses one ref */
  CHECK(a.storage->refs == refs - 1);
  nd_release(&a);
}

int main(void) {
  test_export();
  test_import();
  test_refusals();
  test_round_trip();
  return check_report();
}
