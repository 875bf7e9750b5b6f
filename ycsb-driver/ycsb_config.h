/* A workload's configuration: YCSB property files (-P) and overrides (-p).
 *
 * Accepted names (YCSB's CoreWorkload names unless marked "ours"):
 *   recordcount operationcount workload readproportion updateproportion
 *   insertproportion readmodifywriteproportion scanproportion
 *   requestdistribution (uniform|zipfian|latest|hotspot|sequential|truezipf;
 *   truezipf is ours: exact Zipf over the keys, ycsb_gen.h)
 *   zipfianconstant (ours: theta of zipfian, latest and truezipf,
 *   0 < theta <= 10; zipfian and latest also |theta - 1| >= 1e-9, checked by
 *   ycsb_config_finish; theta > 1 works with Gray's formulas)
 *   fieldcount fieldlength insertorder (hashed|ordered) insertstart
 *   insertcount loadcount (ours: keys the load phase inserts, from insertstart;
 *   default insertcount) hotspotdatafraction hotspotopnfraction readallfields
 *   writeallfields zeropadding minscanlength maxscanlength scanlengthdistribution
 *   seed threads warmupoperations target valuekind (ycsb|text|zeros)
 *   lookaside (true|false: refill a missed read with its load value)
 *   diskstats_device (a /proc/diskstats device name, or empty)  (ours)
 *   runwindows (ours: the run phase done that many times in a row, 1 to
 *   YCSB_RUN_WINDOWS_MAX; window w draws its requests as a run with seed
 *   seed + w would, ycsb_run.h; not with inserts)
 * Every value is validated when it is set; ycsb_config_finish() checks the
 * combination (proportions sum to 1, no scans, insert range).  Errors are
 * written to err as one line naming the property and what is accepted. */
#ifndef YCSB_CONFIG_H
#define YCSB_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include "ycsb_json.h"

/* zipfianconstant: at most this; for zipfian and latest (Gray's method) not
 * within YCSB_THETA_NOT_ONE of 1 */
#define YCSB_THETA_MAX 10.0
#define YCSB_THETA_NOT_ONE 1e-9
/* runwindows: at most this many measured windows in one run */
#define YCSB_RUN_WINDOWS_MAX 8

enum ycsb_dist {
    YCSB_DIST_UNIFORM,
    YCSB_DIST_ZIPFIAN,
    YCSB_DIST_LATEST,
    YCSB_DIST_HOTSPOT,
    YCSB_DIST_SEQUENTIAL,
    YCSB_DIST_TRUEZIPF
};

enum ycsb_valuekind {
    YCSB_VALUE_YCSB,   /* RandomByteIterator's characters: ' ' + 0..95 */
    YCSB_VALUE_TEXT,   /* words from a fixed list: compressible */
    YCSB_VALUE_ZEROS   /* all bytes 0 */
};

struct ycsb_config {
    int64_t recordcount, operationcount;
    int64_t insertstart, insertcount;   /* insertcount -1: recordcount - insertstart */
    int64_t loadcount;                  /* ours; -1: insertcount */
    int64_t fieldcount, fieldlength, zeropadding;
    int64_t warmupoperations, threads, minscanlength, maxscanlength;
    int64_t runwindows;                 /* ours: measured windows of the run (ycsb_run.h) */
    double readproportion, updateproportion, insertproportion;
    double readmodifywriteproportion, scanproportion;
    double zipfianconstant, hotspotdatafraction, hotspotopnfraction, target;
    int requestdistribution;            /* enum ycsb_dist */
    int insertorder_hashed;             /* insertorder=hashed (YCSB default) */
    int readallfields, writeallfields;
    int valuekind;                      /* enum ycsb_valuekind */
    int scanlength_zipfian;
    int fieldlengthdist;                /* fieldlengthdistribution: 0 = constant, the only one */
    int lookaside;                      /* ours: refill misses (ycsb_run.h) */
    uint64_t seed;
    char workload[128];                 /* YCSB class name: accepted, unused */
    char name[64];                      /* basename of the last -P file */
    char diskstats_device[32];          /* ours: "" = no disk counters */
    /* YCSB properties accepted and ignored (they mean nothing here), comma-separated,
     * each once; ycsb_config_finish warns about them once on stderr */
    char ignored[512];
};

void ycsb_config_defaults(struct ycsb_config *c);
/* one property; 0 or -1 with err set */
int ycsb_config_set(struct ycsb_config *c, const char *key, const char *value, char *err,
                    size_t errlen);
/* "key=value" as given to -p */
int ycsb_config_set_kv(struct ycsb_config *c, const char *kv, char *err, size_t errlen);
/* a Java-style properties file: key=value or key: value lines, # and !
 * comments, blank lines; sets name to the file's basename without extension */
int ycsb_config_load_file(struct ycsb_config *c, const char *path, char *err, size_t errlen);
/* cross-property checks and derived defaults; call once after all sets.
 * Also checks that diskstats_device, if set, is in /proc/diskstats. */
int ycsb_config_finish(struct ycsb_config *c, char *err, size_t errlen);
/* record size in bytes: fieldcount * fieldlength */
size_t ycsb_config_value_size(const struct ycsb_config *c);
/* the effective configuration as a JSON object member named `key` */
void ycsb_config_json(const struct ycsb_config *c, struct ycsb_json *j, const char *key);
const char *ycsb_dist_name(int dist);

#endif
