/* What this process and the machine used over a window of time: taken by the
 * run loop's main thread at each phase's start and end (ycsb_run.c), the
 * difference reported as the phase's "resources" (README).
 *
 *   getrusage(RUSAGE_SELF): CPU time, faults, context switches of the whole
 *     process (in-process mode: memcached-ac itself, all its threads);
 *   /proc/self/io: storage bytes and read/write system calls of the process
 *     (have_io = 0 where the file is unreadable, e.g. no task I/O accounting);
 *   /proc/vmstat: swap-ins/outs and major faults of the whole system;
 *   /proc/diskstats: one device's completed I/Os and sectors (512 bytes),
 *     when a device is named (the diskstats_device property). */
#ifndef YCSB_RESOURCES_H
#define YCSB_RESOURCES_H

#include <stddef.h>
#include <stdint.h>
#include "ycsb_json.h"

struct ycsb_resources {
    double cpu_user_s, cpu_sys_s;
    uint64_t major_faults, minor_faults, vol_ctx_switches, invol_ctx_switches;
    int have_io;
    uint64_t read_bytes, write_bytes, syscr, syscw;
    int have_vmstat;
    uint64_t pswpin, pswpout, pgmajfault;
    int disk;   /* 0: no device named, 1: read, -1: named but not readable */
    uint64_t disk_reads, disk_sectors_read, disk_writes, disk_sectors_written;
    uint64_t disk_read_ms;   /* time the device spent on reads (the sum over reads in flight) */
};

/* a snapshot; device "" or NULL: no disk counters.  /proc/self/io is read
 * last at a window's start (end = 0) and first at its end (end = 1), so the
 * window's syscr/read counts leave out the snapshots' other /proc reads. */
void ycsb_resources_take(struct ycsb_resources *r, const char *device, int end);
/* d = end - start (counters that went backwards give 0) */
void ycsb_resources_delta(struct ycsb_resources *d, const struct ycsb_resources *end,
                          const struct ycsb_resources *start);
/* the object member `key`; unreadable sources as null, disk_* only if a
 * device was named */
void ycsb_resources_json(const struct ycsb_resources *r, struct ycsb_json *j, const char *key);
/* 0 if /proc/diskstats lists `device`, else -1 and err names the devices it
 * does list (or says it cannot be read) */
int ycsb_diskstats_check(const char *device, char *err, size_t errlen);

#endif
