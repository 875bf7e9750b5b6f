/* Hot/cold classification as a service of its own thread: sampled access
 * logging (accesslog.c) drained into the exponential-smoothing classifier
 * (classify.c), and a classification round every ac_log_round logged accesses
 * (or seconds). The two policies that follow Siberia's design share it:
 * `logging` moves cold items to its cold store after a round, `effpaging`
 * moves items between its hot (locked) and cold (paged) regions. After each
 * classification the thread calls the policy's round function, which moves
 * data; the thread's own links and unlinks are not accesses.
 *
 * With ac_log_offline=1 (in-process driver only), classification is offline
 * over the warm-up's history, as Siberia's (Levandoski et al. ICDE 2013
 * §IV-B): while the warm-up runs the log is lossless and no round runs (the
 * drained accesses only build the estimates); when the measured phase begins
 * (ac_hc_phase_begin), one offline round drains every ring, classifies over
 * the whole history and moves data before the phase starts; online rounds
 * follow as without it.
 *
 * Settings: ac_cls_opts (the ac_log_* options); the hot-set budget in bytes
 * is the policy's (ac_log_hot_fill of its memory). */
#ifndef AC_HOTCOLD_H
#define AC_HOTCOLD_H
/* memcached.h (no include guard) must be included first. */
#include "ac_opt.h"
#include "accesslog.h"
#include "classify.h"
#include <pthread.h>

struct ac_hotcold {
    struct ac_classifier cls;          /* owned by the thread */
    struct ac_access_log log;
    uint64_t budget;                   /* hot-set bytes */
    void (*round)(void);               /* moves data after a classification */
    /* optional (effpaging): a 32-bit reference logged with each access (0:
     * none), and what the thread does with each non-zero one it drains */
    uint32_t (*ref)(const item *it);
    void (*on_ref)(uint32_t ref);
    pthread_t thread;
    bool running;
    volatile bool stopping;
    /* ac_log_offline: the mode a phase asks for (atomic) and the one the
     * thread is in (atomic; AC_HC_ONLINE or AC_HC_HISTORY) */
    int want, mode;
    bool early;                        /* atomic: a round is wanted before it is due */
    uint64_t since_round;              /* logged accesses consumed since the last round */
    struct {                           /* drained entries whose slots are being fetched (hotcold.c) */
        struct ac_log_entry e[8];
        unsigned head, n;
    } pipe;
    struct {
        uint64_t rounds, early_rounds, last_round_ns, logged;
        uint64_t hot_keys, hot_bytes;
        uint64_t offline_rounds, offline_ns;
    } st;
};

enum { AC_HC_ONLINE, AC_HC_HISTORY };

/* A resident item, its CAS when collected and its estimate (-1: not in the
 * hot set). */
struct ac_resident {
    item *it;
    uint64_t cas;
    double est;
};

/* The keys the estimate table tracks: ac_log_keys, else as many as an eighth
 * of `bytes` holds (at least 1024). */
size_t ac_hc_keys(size_t bytes);
/* Memory of one log ring per worker thread plus two; of those and the
 * estimate table for keys. */
size_t ac_hc_ring_bytes(void);
size_t ac_hc_fixed_bytes(size_t keys);
/* Allocates the table and the rings; 0, or -1 after printing why (also for
 * ac_log_offline=1 without the in-process driver). */
int ac_hc_init(struct ac_hotcold *h, size_t keys, uint64_t budget, void (*round)(void), const char *who);
/* Starts the thread; 0, or -1 after printing why. */
int ac_hc_start(struct ac_hotcold *h, const char *who);
/* Stops the thread and frees the table and the rings. */
void ac_hc_destroy(struct ac_hotcold *h);
/* Memory of the table and the rings. */
size_t ac_hc_bytes(const struct ac_hotcold *h);
/* Bytes the item takes in its slab class. */
uint32_t ac_hc_item_size(item *it);
/* Hot path: logs the access if it is sampled. */
void ac_hc_access(struct ac_hotcold *h, item *it);
/* A link: an access unless the classifier thread made it. */
void ac_hc_insert(struct ac_hotcold *h, item *it);
/* The in-process driver is about to start a phase ("load", "warmup", "run";
 * its threads wait at the phase's gate). With ac_log_offline=1: "warmup"
 * returns once the thread accumulates a lossless history without rounds;
 * "run" once the offline round is over. Otherwise nothing. */
void ac_hc_phase_begin(struct ac_hotcold *h, const char *phase);
/* For the round function: drains the rings (between batches of a long round). */
size_t ac_hc_drain(struct ac_hotcold *h);
/* Asks for a round as soon as a quarter of ac_log_round has been logged. */
void ac_hc_want_early(struct ac_hotcold *h);
/* The resident items of class clsid with their estimates, hot ones with their
 * estimate and the others with -1, sorted ascending (the others first);
 * *nhot: how many are hot. *room: bytes of the hot-set budget the hot set
 * left (0 unless every key the table knows is hot): an item that is not hot
 * (its key unknown: estimate 0, ranked after every known key) counts as hot
 * with estimate 0 while its size fits what is left of *room, which it takes.
 * *res grows as needed (free it). Takes the class's LRU lock; the items are
 * hints (re-validate before moving one); their CAS is read under that lock. */
size_t ac_hc_collect(struct ac_hotcold *h, unsigned int clsid, struct ac_resident **res, size_t *cap,
                     size_t *nhot, uint64_t *room);
/* The log_* lines of `stats anticache`. */
void ac_hc_stats(const struct ac_hotcold *h, ADD_STAT add_stats, void *c);
/* The classifier's options (ac_log_*), listed by both policies that use it,
 * and their values. */
struct ac_classifier_settings {
    double sample;            /* ac_log_sample: fraction of accesses logged */
    double alpha;             /* ac_log_alpha: smoothing constant */
    uint64_t round;           /* ac_log_round: logged accesses per classification (0: by time) */
    uint64_t round_ns;        /* ac_log_round=Ns: time per classification (0: by count) */
    uint64_t slice;           /* ac_log_slice: logged accesses per time slice */
    size_t keys;              /* ac_log_keys: keys the estimate table tracks (0: from memory) */
    double hot_fill;          /* ac_log_hot_fill: hot-set budget, fraction of the policy's memory */
    bool offline;             /* ac_log_offline: classify offline over the warm-up's history */
};
extern struct ac_classifier_settings ac_cls_opts;
extern const struct ac_opt_table ac_classifier_options;

#endif
