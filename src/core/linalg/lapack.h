/* The LAPACK routines nd calls, from the LAPACK inside OpenBLAS. Debian
 * ships no C header for them without liblapacke-dev, so the Fortran
 * prototypes are declared here: every argument by reference, character
 * arguments followed by their hidden lengths (size_t, gfortran >= 8) at the
 * end. Real arrays and scalars are void * so that one driver serves the
 * s- and d- routines through the table below (no function pointer casts:
 * these are the declarations the linker resolves). */
#ifndef ND_LAPACK_H
#define ND_LAPACK_H

#include <stddef.h>

#define LAPACK_ROUTINES(X, p)                                                \
  X(void p##getrf_(const int *m, const int *n, void *a, const int *lda,      \
                   int *ipiv, int *info))                                    \
  X(void p##getri_(const int *n, void *a, const int *lda, const int *ipiv,   \
                   void *work, const int *lwork, int *info))                 \
  X(void p##potrf_(const char *uplo, const int *n, void *a, const int *lda,  \
                   int *info, size_t uplo_len))                              \
  X(void p##gelqf_(const int *m, const int *n, void *a, const int *lda,      \
                   void *tau, void *work, const int *lwork, int *info))      \
  X(void p##orglq_(const int *m, const int *n, const int *k, void *a,        \
                   const int *lda, const void *tau, void *work,              \
                   const int *lwork, int *info))                             \
  X(void p##gesdd_(const char *jobz, const int *m, const int *n, void *a,    \
                   const int *lda, void *s, void *u, const int *ldu,         \
                   void *vt, const int *ldvt, void *work, const int *lwork,  \
                   int *iwork, int *info, size_t jobz_len))                  \
  X(void p##syevd_(const char *jobz, const char *uplo, const int *n,         \
                   void *a, const int *lda, void *w, void *work,             \
                   const int *lwork, int *iwork, const int *liwork,          \
                   int *info, size_t jobz_len, size_t uplo_len))             \
  X(void p##gelsd_(const int *m, const int *n, const int *nrhs, void *a,     \
                   const int *lda, void *b, const int *ldb, void *s,         \
                   const void *rcond, int *rank, void *work,                 \
                   const int *lwork, int *iwork, int *info))

#define LAPACK_DECLARE(decl) decl;
LAPACK_ROUTINES(LAPACK_DECLARE, s)
LAPACK_ROUTINES(LAPACK_DECLARE, d)
#undef LAPACK_DECLARE

/* One precision's routines; nd_lin_lapack(dtype) picks float32's or
 * float64's. `p` is the prefix that error messages and plans quote. */
typedef struct nd_lin_lapack {
  char p;
  void (*getrf)(const int *, const int *, void *, const int *, int *, int *);
  void (*getri)(const int *, void *, const int *, const int *, void *,
                const int *, int *);
  void (*potrf)(const char *, const int *, void *, const int *, int *,
                size_t);
  void (*gelqf)(const int *, const int *, void *, const int *, void *,
                void *, const int *, int *);
  void (*orglq)(const int *, const int *, const int *, void *, const int *,
                const void *, void *, const int *, int *);
  void (*gesdd)(const char *, const int *, const int *, void *, const int *,
                void *, void *, const int *, void *, const int *, void *,
                const int *, int *, int *, size_t);
  void (*syevd)(const char *, const char *, const int *, void *, const int *,
                void *, void *, const int *, int *, const int *, int *,
                size_t, size_t);
  void (*gelsd)(const int *, const int *, const int *, void *, const int *,
                void *, const int *, void *, const void *, int *, void *,
                const int *, int *, int *);
} nd_lin_lapack;

#endif
