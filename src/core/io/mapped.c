/* Files mapped into memory: one storage per mapping, released (unmapped,
 * its file closed) with its last view. The file stays open while mapped,
 * as NumPy's memmap keeps it. A mapped file truncated by another process
 * raises SIGBUS on access: the OS's rule, documented in docs/ref-io.md. */
#include "mapped.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct mapping {
  size_t len;
  int fd;
} mapping;

static void unmap(void *data, void *ctx) {
  mapping *m = ctx;
  if (m->len) munmap(data, m->len);
  close(m->fd);
  nd_scratch_free(m);
}

int nd_map_mode_of(const char *mode) {
  if (!mode) return -1;
  if (!strcmp(mode, "r")) return ND_MAP_READ;
  if (!strcmp(mode, "r+")) return ND_MAP_WRITE;
  if (!strcmp(mode, "c")) return ND_MAP_COPY;
  return -1;
}

nd_status nd_map_file(nd_err *e, const char *fn, const char *path,
                      nd_map_mode mode, nd_storage **out) {
  *out = NULL;
  int fd = open(path, (mode == ND_MAP_WRITE ? O_RDWR : O_RDONLY) | O_CLOEXEC);
  if (fd < 0)
    return nd_fail(e, ND_EIO, "%s: cannot open %s: %s", fn, path,
                   strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
    close(fd);
    return nd_fail(e, ND_EIO, "%s: %s is not a regular file", fn, path);
  }
  if ((uint64_t)sb.st_size > SIZE_MAX || sb.st_size > INT64_MAX / 2) {
    close(fd);
    return nd_fail(e, ND_EIO, "%s: %s is too big to map", fn, path);
  }
  size_t len = (size_t)sb.st_size;
  void *p = NULL;
  if (len) {
    int prot = mode == ND_MAP_READ ? PROT_READ : PROT_READ | PROT_WRITE;
    p = mmap(NULL, len, prot, mode == ND_MAP_COPY ? MAP_PRIVATE : MAP_SHARED,
             fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      close(fd);
      return nd_fail(e, ND_EIO, "%s: cannot map %s: %s", fn, path,
                     strerror(err));
    }
  }
  mapping *m = nd_scratch_alloc(e, fn, 1, sizeof *m, false);
  nd_storage *s = m ? nd_storage_header() : NULL;
  if (!s) {
    nd_scratch_free(m);
    if (len) munmap(p, len);
    close(fd);
    return nd_fail(e, ND_ENOMEM, "%s: not enough memory", fn);
  }
  m->len = len;
  m->fd = fd;
  s->data = p;
  s->nbytes = (int64_t)len;
  s->refs = 1;
  s->release = unmap;
  s->ctx = m;
  s->readonly = mode == ND_MAP_READ ? 2 : 0; /* PROT_READ: for good */
  *out = s;
  return ND_OK;
}
