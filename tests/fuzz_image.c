/* libFuzzer target over the image decoders (src/core/io/image.c; make
 * fuzz-image). The input is the file's bytes, so the seeds in
 * tests/fuzz_corpus_image are plain PNG and JPEG files. Built with
 * ND_IMAGE_PIXEL_CAP = 2^20 so that a small input cannot ask for a
 * gigabyte (the limit's logic is the same at any value), and with
 * ND_IMAGE_FUZZ: PNG checksums (CRC, Adler-32) are not checked, or almost
 * every mutation would stop there.
 *
 * Each input is decoded as stored and converted to 1 + size % 4
 * channels; a failure must leave the header unset with a message; a
 * success must be (H, W, C) uint8, or uint16 for a 16-bit PNG, within the
 * cap, agree with the other decode on H, W and dtype, and survive a PNG
 * round trip unchanged (16-bit as 16-bit); a JPEG encode must succeed
 * for uint8 of 1 or 3 channels and fail with a message for uint16. A
 * broken invariant aborts. */
#include "core.h"
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "invariant broken: %s (line %d)\n", #c, __LINE__); abort(); } } while (0)

static void check_image(const nd_tensor *t, int channels) {
  CHECK((t->dtype == ND_UINT8 || t->dtype == ND_UINT16) && t->ndim == 3);
  CHECK(t->size[0] >= 1 && t->size[1] >= 1);
  CHECK(t->size[0] * t->size[1] <= ND_IMAGE_PIXEL_CAP);
  CHECK(t->size[2] >= 1 && t->size[2] <= 4);
  CHECK(!channels || t->size[2] == channels);
  CHECK(nd_is_contiguous(t));
}

static size_t nbytes(const nd_tensor *t) {
  return (size_t)nd_numel(t) * nd_dtype_size(t->dtype);
}

static void round_trip(const nd_tensor *t) {
  nd_err e = {0};
  void *bytes;
  int64_t n;
  nd_tensor back = ND_UNSET;
  CHECK(nd_image_encode(&e, &bytes, &n, t, ND_IMAGE_PNG, 0, 1) == ND_OK);
  CHECK(nd_image_decode(&e, &back, bytes, n, 0) == ND_OK);
  nd_image_free(bytes);
  CHECK(back.size[0] == t->size[0] && back.size[1] == t->size[1] &&
        back.size[2] == t->size[2] && back.dtype == t->dtype);
  CHECK(!memcmp(nd_data(&back), nd_data(t), nbytes(t)));
  nd_release(&back);
  if (t->dtype == ND_UINT16) {
    CHECK(nd_image_encode(&e, &bytes, &n, t, ND_IMAGE_JPEG, 50, -1) ==
              ND_EINVAL &&
          !bytes && strstr(e.msg, "JPEG is 8-bit: t has dtype uint16"));
  } else if (t->size[2] == 1 || t->size[2] == 3) {
    CHECK(nd_image_encode(&e, &bytes, &n, t, ND_IMAGE_JPEG, 50, -1) == ND_OK);
    CHECK(nd_image_decode(&e, &back, bytes, n, 0) == ND_OK);
    nd_image_free(bytes);
    CHECK(back.size[0] == t->size[0] && back.size[1] == t->size[1]);
    nd_release(&back);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nd_err e = {0};
  nd_tensor a = ND_UNSET, b = ND_UNSET;
  int channels = 1 + (int)(size % 4);
  nd_status sa = nd_image_decode(&e, &a, data, (int64_t)size, 0);
  if (sa) {
    CHECK(a.storage == NULL && e.msg[0] && !strncmp(e.msg, "image.decode: ", 14));
  } else {
    check_image(&a, 0);
    round_trip(&a);
  }
  nd_status sb = nd_image_decode(&e, &b, data, (int64_t)size, channels);
  CHECK((sa == ND_OK) == (sb == ND_OK));
  if (!sb) {
    check_image(&b, channels);
    CHECK(a.size[0] == b.size[0] && a.size[1] == b.size[1] &&
          a.dtype == b.dtype);
    if (a.size[2] == b.size[2])
      CHECK(!memcmp(nd_data(&a), nd_data(&b), nbytes(&a)));
  } else {
    CHECK(b.storage == NULL);
  }
  nd_release(&a);
  nd_release(&b);
  return 0;
}
