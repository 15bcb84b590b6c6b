/* Files mapped into memory (mapped.c), for the zero-copy loaders. */
#ifndef ND_MAPPED_H
#define ND_MAPPED_H
#include "core.h"

typedef enum { ND_MAP_READ, ND_MAP_WRITE, ND_MAP_COPY } nd_map_mode;

/* NumPy's mode letters: "r", "r+", "c"; -1 for anything else. */
int nd_map_mode_of(const char *mode);

/* The whole file at path mapped in mode, as a storage of one reference
 * (nbytes: the file's size) whose release unmaps it and closes the file;
 * read-only storage for ND_MAP_READ. fn names the caller in errors. */
nd_status nd_map_file(nd_err *e, const char *fn, const char *path,
                      nd_map_mode mode, nd_storage **out);

#endif
