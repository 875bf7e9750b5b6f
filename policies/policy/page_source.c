/* A policy's own source of slab pages (page_source.h), for policy vma; the
 * core hands released pages back (core/ac_budget.c) once no hint can lead
 * into them. */
#include "memcached.h"
#include "ac_options.h"
#include "page_source.h"
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

/* Policy vma keeps the slab memory in one mapping it protects, yet memcached
 * stays in its malloc mode (the budget can move, pages can be borrowed and
 * released, a new class gets its first page): pages are carved from the
 * mapping by a bump pointer, and released ones are kept on a free list (their
 * memory returned to the kernel) for the next allocation. */
static struct {
    pthread_mutex_t lock;
    char *base, *next, *end;
    void *free_pages;            /* released pages of page_size, linked through their first word */
    size_t page_size;
    uint64_t carved, reused, released;
} src = { .lock = PTHREAD_MUTEX_INITIALIZER };

void ac_page_source(char *base, size_t len) {
    pthread_mutex_lock(&src.lock);
    src.base = src.next = base;
    src.end = base + len;
    src.page_size = (size_t)settings.slab_page_size;
    pthread_mutex_unlock(&src.lock);
}

size_t ac_slab_headroom(void) {
    /* memcached gives each class its first page past the limit, and a starved
     * class may borrow ac_borrow_pages more */
    return ((size_t)MAX_NUMBER_OF_SLAB_CLASSES + ac_opts.borrow_pages + 1) * (size_t)settings.slab_page_size;
}

void *ac_page_source_alloc(size_t size) {
    if (src.base == NULL)
        return malloc(size);
    void *p = NULL;
    pthread_mutex_lock(&src.lock);
    if (size == src.page_size && src.free_pages != NULL) {
        p = src.free_pages;
        src.free_pages = *(void **)p;
        src.reused++;
    } else if ((size_t)(src.end - src.next) >= size) {
        p = src.next;
        src.next += size;
        src.carved++;
    }
    pthread_mutex_unlock(&src.lock);
    return p;
}

/* A page memcached released: back to the source it came from. */
void ac_page_source_release(void *page) {
    char *p = page;
    if (src.base == NULL || p < src.base || p >= src.end) {
        free(page);
        return;
    }
    /* its memory goes back to the kernel (the budget gave it up); the link is
     * written after, in the page's first word */
    madvise(p, src.page_size, MADV_DONTNEED);
    pthread_mutex_lock(&src.lock);
    *(void **)p = src.free_pages;
    src.free_pages = p;
    src.released++;
    pthread_mutex_unlock(&src.lock);
}

void ac_page_source_stats(uint64_t *carved, uint64_t *reused, uint64_t *released) {
    pthread_mutex_lock(&src.lock);
    *carved = src.carved;
    *reused = src.reused;
    *released = src.released;
    pthread_mutex_unlock(&src.lock);
}

