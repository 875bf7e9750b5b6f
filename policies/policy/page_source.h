/* A policy's own source of slab pages (page_source.c), for policy vma: the
 * slab memory is one mapping the policy protects, while memcached keeps its
 * malloc mode (the budget can move, pages can be borrowed and released, a new
 * class gets its first page). */
#ifndef AC_PAGE_SOURCE_H
#define AC_PAGE_SOURCE_H
#include <stdint.h>
#include <stddef.h>

/* Slab pages are carved from [base, base + len) from now on (at init). */
void ac_page_source(char *base, size_t len);
/* The room the mapping needs past the slab limit: each class's first page,
 * the pages a starved class may borrow (ac_borrow_pages), one more. */
size_t ac_slab_headroom(void);
/* The policy's page_alloc and page_release (ac_policy.h). */
void *ac_page_source_alloc(size_t size);
void ac_page_source_release(void *page);
/* Pages carved, reused from the released ones, released so far. */
void ac_page_source_stats(uint64_t *carved, uint64_t *reused, uint64_t *released);

#endif
