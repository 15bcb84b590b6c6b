/* Probe: CPU time of a fresh 8 MB clone under three allocators (plain
 * malloc, 2 MiB-aligned posix_memalign, the same + MADV_HUGEPAGE) and nd's
 * default. Build from the repo root after make:
 *   cc -O2 -Iinclude tools/alloc_probe.c build/libnd.a -lopenblas -lm -pthread -o /tmp/alloc_probe */
#define _DEFAULT_SOURCE
#include "nd.h"
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
static double cpu(void){struct timespec t;clock_gettime(CLOCK_PROCESS_CPUTIME_ID,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static int mode;
static void *ma(size_t n, size_t al, void *u){(void)u; void *p=0; size_t A = mode==0 ? 64 : (al > 64 ? al : 64);
  if (posix_memalign(&p,A,n?n:1)) return 0; if (mode==2 && A >= (2u<<20)) madvise(p,n,MADV_HUGEPAGE); return p;}
static void mf(void *p,size_t n,void *u){(void)n;(void)u;free(p);}
int main(void){
  for (mode=0; mode<3; mode++) {
    nd_set_allocator(ma,mf,0);
    nd_err e={0}; e.base=1; nd_tensor a=ND_UNSET, out=ND_UNSET; int64_t N=1000000;
    nd_empty(&e,&a,ND_FLOAT64,1,&N); nd_fill(&e,&a,1);
    double b=1e9; for(int r=0;r<15;r++){double t0=cpu(); nd_clone(&e,&out,&a); nd_release(&out); double t1=cpu(); if(t1-t0<b)b=t1-t0;}
    printf("%s: clone of 8 MB %.3f ms\n", mode==0?"malloc 64-aligned":mode==1?"posix_memalign 2MiB, no madvise":"posix_memalign 2MiB + MADV_HUGEPAGE", b*1e3);
    nd_release(&a);
  }
  nd_set_allocator(0,0,0);
  nd_err e={0}; nd_tensor a=ND_UNSET, out=ND_UNSET; int64_t N=1000000;
  nd_empty(&e,&a,ND_FLOAT64,1,&N); nd_fill(&e,&a,1);
  double b=1e9; for(int r=0;r<15;r++){double t0=cpu(); nd_clone(&e,&out,&a); nd_release(&out); double t1=cpu(); if(t1-t0<b)b=t1-t0;}
  printf("nd default allocator: clone of 8 MB %.3f ms\n", b*1e3);
  return 0;
}
