/* Unit test of policy "vma" (policy/vma.c) on a real protected mapping: the
 * first access to a granule after a reset faults and is recorded, later ones in
 * the same epoch do not fault; a victim is the sampled item whose granule was
 * accessed the most epochs ago; checking a candidate is not an access (its
 * granule is protected again); free chunks and other classes are not offered;
 * a fault outside the mapping goes to the handler installed before; a start without the
 * in-process driver, with a granule that is not a page multiple, or with more
 * granules than vm.max_map_count allows is refused. */
#include "memcached.h"
#include "../core/ac_policy.h"
#include "../core/ac_services.h"
#include "../policy/page_source.h"
#include "../policy/test_hooks.h"

extern const struct ac_policy_ops ac_policy_vma;   /* the policy under test (core/ac_components.def lists it) */
#include "check.h"
#include "set_option.h"
#include "stats_capture.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>


/* the core's services: the slab limit plus headroom is the mapping vma makes
 * and hands over as the page source */
#define GRANULE 4096
#define NGRAN 16
#define HEADROOM (2 * GRANULE)
static size_t limit = NGRAN * GRANULE - HEADROOM;
static bool in_process = true;
static char *mapping;
void ac_page_source(char *base, size_t len) {
    CHECK_EQ(len, NGRAN * GRANULE);
    mapping = base;
}
size_t ac_slab_headroom(void) { return HEADROOM; }
void ac_page_source_stats(uint64_t *carved, uint64_t *reused, uint64_t *released) {
    *carved = 1, *reused = 2, *released = 3;
}
/* vma's page_alloc / page_release (policy/page_source.c): not called here */
void *ac_page_source_alloc(size_t size) { (void)size; return NULL; }
void ac_page_source_release(void *page) { (void)page; }
size_t ac_slab_limit(void) { return limit; }
bool ac_in_process(void) { return in_process; }

/* the scripted sampler: items at the start of the granules in `order` */
static int order[64], norder, next_sample;
void *slabs_chunk_sample(const unsigned int id, const uint64_t rnd) {
    (void)rnd;
    if (id != 1 || norder == 0)
        return NULL;
    return mapping + (size_t)order[next_sample++ % norder] * GRANULE;
}
static void script(int n, ...) {
    va_list ap;
    va_start(ap, n);
    norder = n;
    next_sample = 0;
    for (int i = 0; i < n; i++)
        order[i] = va_arg(ap, int);
    va_end(ap);
}

static item *at(int g) {
    return (item *)(void *)(mapping + (size_t)g * GRANULE);
}

static uint64_t stat_of(const char *name) {
    last_stats[0] = '\0';
    ac_policy_vma.stats(NULL, NULL);
    char key[64];
    snprintf(key, sizeof(key), "%s=", name);
    const char *p = strstr(last_stats, key);
    CHECK(p != NULL);
    return p != NULL ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/* the granule of the victim picked from the scripted samples, or -1 */
static int victim(void) {
    item *out[1];
    int n = ac_policy_vma.pick_victims(1, out, 1);
    return n == 1 ? (int)(((char *)out[0] - mapping) / GRANULE) : -1;
}

static void test_refusals(void) {
    const struct ac_opt_table *t = ac_policy_vma.options[0];
    set_option(t, "ac_vma_samples", 3);
    set_option(t, "ac_vma_reset", 3600ULL * 1000000000ULL);   /* the test resets by hand */
    in_process = false;
    set_option(t, "ac_vma_granule", GRANULE);
    CHECK_EQ(ac_policy_vma.init(), -1);                        /* a socket could see EFAULT */
    in_process = true;
    set_option(t, "ac_vma_granule", GRANULE + 512);
    CHECK_EQ(ac_policy_vma.init(), -1);                        /* not a page multiple */
    set_option(t, "ac_vma_granule", GRANULE);
    /* more granules than vm.max_map_count leaves room for, whatever this machine's value is */
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    long maps = 65530;
    if (f != NULL) {
        CHECK_EQ(fscanf(f, "%ld", &maps), 1);
        fclose(f);
    }
    limit = (size_t)(maps + 1) * GRANULE;
    CHECK_EQ(ac_policy_vma.init(), -1);
    limit = NGRAN * GRANULE - HEADROOM;
    CHECK(mapping == NULL);                                    /* refused before mapping anything */
    CHECK_EQ(ac_policy_vma.fixed_bytes(NGRAN * GRANULE - HEADROOM), NGRAN * sizeof(uint32_t));
}

static void test_tracking_and_victims(void) {
    CHECK_EQ(ac_policy_vma.init(), 0);
    CHECK(mapping != NULL);
    CHECK_EQ(stat_of("vma_granules"), NGRAN);
    /* epoch 1: items written at the start of granules 0..5 (each write faults once) */
    uint64_t f0 = stat_of("vma_faults");
    for (int g = 0; g < 6; g++) {
        memset(at(g), 0, sizeof(item));
        at(g)->slabs_clsid = 1;
        at(g)->it_flags = ITEM_LINKED;
    }
    CHECK_EQ(stat_of("vma_faults") - f0, 6);
    at(0)->nkey = 1;                                           /* open already: no fault */
    CHECK_EQ(stat_of("vma_faults") - f0, 6);
    /* epoch 2: granule 2 read; epoch 3: granule 3 read */
    ac_vma_reset_now();
    CHECK_EQ(stat_of("vma_epoch"), 2);
    volatile uint16_t flags = at(2)->it_flags;
    ac_vma_reset_now();
    flags = at(3)->it_flags;
    (void)flags;
    CHECK_EQ(stat_of("vma_faults") - f0, 8);
    /* ages now: 0, 1, 4, 5 -> 2 epochs; 2 -> 1; 3 -> 0 */
    script(3, 3, 2, 0);
    CHECK_EQ(victim(), 0);
    script(2, 3, 2);
    CHECK_EQ(victim(), 2);
    /* the checks above read granule 0 quietly: still 2 epochs old, and protected again */
    script(2, 2, 0);
    CHECK_EQ(victim(), 0);
    uint64_t f1 = stat_of("vma_faults");
    flags = at(0)->it_flags;
    CHECK_EQ(stat_of("vma_faults") - f1, 1);
    /* ... which made it the youngest (age 0): 4 (2 epochs) is older */
    script(2, 0, 4);
    CHECK_EQ(victim(), 4);
    /* a free chunk and an item of another class are never offered */
    at(5)->it_flags = ITEM_SLABBED;
    at(1)->slabs_clsid = 2;
    script(2, 5, 1);
    CHECK_EQ(victim(), -1);
    /* a chunk of a chunked item stands for its header */
    item_chunk *ch = (item_chunk *)(void *)(mapping + 7 * GRANULE);
    memset(ch, 0, sizeof(*ch));
    ch->it_flags = ITEM_CHUNK;
    ch->head = at(4);
    script(1, 7);
    CHECK_EQ(victim(), 4);
    CHECK_EQ(ac_policy_vma.metadata_bytes(), NGRAN * sizeof(uint32_t));
    CHECK_EQ(stat_of("vma_pages_released"), 3);              /* the page source's counts, as the core gives them */
}

/* The handler installed before vma's: a fault outside the mapping goes to it. */
static void earlier_handler(int sig) {
    (void)sig;
    _exit(42);
}

static void test_foreign_fault_goes_to_the_earlier_handler(void) {
    pid_t pid = fork();
    if (pid == 0) {
        char *page = mmap(NULL, GRANULE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        *(volatile char *)page = 1;
        _exit(0);
    }
    int status = 0;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 42);
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = earlier_handler;
    sigaction(SIGSEGV, &sa, NULL);
    test_refusals();
    test_tracking_and_victims();
    test_foreign_fault_goes_to_the_earlier_handler();
    ac_policy_vma.shutdown();
    return check_report("test_vma");
}
