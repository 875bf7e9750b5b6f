/* Per-phase resource counters; see ycsb_resources.h. */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include "ycsb_resources.h"

/* "name value" lines (vmstat) or "name: value" lines (io): the values of the
 * n names wanted into out[]; returns how many were found, -1 if unreadable */
static int read_named(const char *path, const char *const *names, uint64_t *out, int n)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    char line[256];
    int found = 0;
    while (found < n && fgets(line, sizeof(line), f) != NULL) {
        char name[64];
        unsigned long long v;
        if (sscanf(line, "%63[^: ]%*[: ]%llu", name, &v) != 2)
            continue;
        for (int i = 0; i < n; i++)
            if (strcmp(name, names[i]) == 0) {
                out[i] = v;
                found++;
            }
    }
    fclose(f);
    return found;
}

/* /proc/diskstats: "major minor name f1 f2 ..." with f1 reads completed, f3
 * sectors read, f5 writes completed, f7 sectors written.  0 if found. */
/* v: reads completed, sectors read, writes completed, sectors written, ms
 * spent reading (Documentation/admin-guide/iostats.rst fields 1, 3, 5, 7, 4) */
static int read_disk(const char *device, uint64_t v[5])
{
    FILE *f = fopen("/proc/diskstats", "r");
    if (f == NULL)
        return -1;
    char line[512];
    int rc = -1;
    while (rc != 0 && fgets(line, sizeof(line), f) != NULL) {
        char name[64];
        unsigned long long x[7];
        if (sscanf(line, "%*u %*u %63s %llu %llu %llu %llu %llu %llu %llu", name, &x[0], &x[1],
                   &x[2], &x[3], &x[4], &x[5], &x[6]) == 8 &&
            strcmp(name, device) == 0) {
            v[0] = x[0];
            v[1] = x[2];
            v[2] = x[4];
            v[3] = x[6];
            v[4] = x[3];
            rc = 0;
        }
    }
    fclose(f);
    return rc;
}

static void take_io(struct ycsb_resources *r)
{
    static const char *const io_names[] = {"read_bytes", "write_bytes", "syscr", "syscw"};
    uint64_t io[4] = {0, 0, 0, 0};
    if (read_named("/proc/self/io", io_names, io, 4) == 4) {
        r->have_io = 1;
        r->read_bytes = io[0];
        r->write_bytes = io[1];
        r->syscr = io[2];
        r->syscw = io[3];
    }
}

void ycsb_resources_take(struct ycsb_resources *r, const char *device, int end)
{
    memset(r, 0, sizeof(*r));
    if (end)
        take_io(r);
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        r->cpu_user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
        r->cpu_sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
        r->major_faults = (uint64_t)ru.ru_majflt;
        r->minor_faults = (uint64_t)ru.ru_minflt;
        r->vol_ctx_switches = (uint64_t)ru.ru_nvcsw;
        r->invol_ctx_switches = (uint64_t)ru.ru_nivcsw;
    }
    static const char *const vm_names[] = {"pswpin", "pswpout", "pgmajfault"};
    uint64_t vm[3] = {0, 0, 0};
    if (read_named("/proc/vmstat", vm_names, vm, 3) == 3) {
        r->have_vmstat = 1;
        r->pswpin = vm[0];
        r->pswpout = vm[1];
        r->pgmajfault = vm[2];
    }
    if (device != NULL && device[0] != '\0') {
        uint64_t d[5];
        r->disk = read_disk(device, d) == 0 ? 1 : -1;
        if (r->disk == 1) {
            r->disk_reads = d[0];
            r->disk_sectors_read = d[1];
            r->disk_writes = d[2];
            r->disk_sectors_written = d[3];
            r->disk_read_ms = d[4];
        }
    }
    if (!end)
        take_io(r);
}

static uint64_t sub(uint64_t end, uint64_t start)
{
    return end >= start ? end - start : 0;
}

void ycsb_resources_delta(struct ycsb_resources *d, const struct ycsb_resources *end,
                          const struct ycsb_resources *start)
{
    memset(d, 0, sizeof(*d));
    d->cpu_user_s = end->cpu_user_s - start->cpu_user_s;
    d->cpu_sys_s = end->cpu_sys_s - start->cpu_sys_s;
    d->major_faults = sub(end->major_faults, start->major_faults);
    d->minor_faults = sub(end->minor_faults, start->minor_faults);
    d->vol_ctx_switches = sub(end->vol_ctx_switches, start->vol_ctx_switches);
    d->invol_ctx_switches = sub(end->invol_ctx_switches, start->invol_ctx_switches);
    d->have_io = end->have_io && start->have_io;
    if (d->have_io) {
        d->read_bytes = sub(end->read_bytes, start->read_bytes);
        d->write_bytes = sub(end->write_bytes, start->write_bytes);
        d->syscr = sub(end->syscr, start->syscr);
        d->syscw = sub(end->syscw, start->syscw);
    }
    d->have_vmstat = end->have_vmstat && start->have_vmstat;
    if (d->have_vmstat) {
        d->pswpin = sub(end->pswpin, start->pswpin);
        d->pswpout = sub(end->pswpout, start->pswpout);
        d->pgmajfault = sub(end->pgmajfault, start->pgmajfault);
    }
    if (end->disk != 0 || start->disk != 0)
        d->disk = end->disk == 1 && start->disk == 1 ? 1 : -1;
    if (d->disk == 1) {
        d->disk_reads = sub(end->disk_reads, start->disk_reads);
        d->disk_sectors_read = sub(end->disk_sectors_read, start->disk_sectors_read);
        d->disk_writes = sub(end->disk_writes, start->disk_writes);
        d->disk_sectors_written = sub(end->disk_sectors_written, start->disk_sectors_written);
        d->disk_read_ms = sub(end->disk_read_ms, start->disk_read_ms);
    }
}

static void u64_or_null(struct ycsb_json *j, const char *key, int have, uint64_t v)
{
    if (have)
        ycsb_json_u64(j, key, v);
    else
        ycsb_json_rawvalue(j, key, "null");
}

void ycsb_resources_json(const struct ycsb_resources *r, struct ycsb_json *j, const char *key)
{
    ycsb_json_begin_object(j, key);
    ycsb_json_double(j, "cpu_user_s", r->cpu_user_s);
    ycsb_json_double(j, "cpu_sys_s", r->cpu_sys_s);
    ycsb_json_u64(j, "major_faults", r->major_faults);
    ycsb_json_u64(j, "minor_faults", r->minor_faults);
    ycsb_json_u64(j, "vol_ctx_switches", r->vol_ctx_switches);
    ycsb_json_u64(j, "invol_ctx_switches", r->invol_ctx_switches);
    u64_or_null(j, "read_bytes", r->have_io, r->read_bytes);
    u64_or_null(j, "write_bytes", r->have_io, r->write_bytes);
    u64_or_null(j, "syscr", r->have_io, r->syscr);
    u64_or_null(j, "syscw", r->have_io, r->syscw);
    u64_or_null(j, "pswpin", r->have_vmstat, r->pswpin);
    u64_or_null(j, "pswpout", r->have_vmstat, r->pswpout);
    u64_or_null(j, "pgmajfault", r->have_vmstat, r->pgmajfault);
    if (r->disk != 0) {
        u64_or_null(j, "disk_reads", r->disk == 1, r->disk_reads);
        u64_or_null(j, "disk_sectors_read", r->disk == 1, r->disk_sectors_read);
        u64_or_null(j, "disk_writes", r->disk == 1, r->disk_writes);
        u64_or_null(j, "disk_sectors_written", r->disk == 1, r->disk_sectors_written);
        u64_or_null(j, "disk_read_ms", r->disk == 1, r->disk_read_ms);
    }
    ycsb_json_end_object(j);
}

int ycsb_diskstats_check(const char *device, char *err, size_t errlen)
{
    FILE *f = fopen("/proc/diskstats", "r");
    if (f == NULL) {
        snprintf(err, errlen, "diskstats_device '%s': /proc/diskstats cannot be read; "
                 "accepted: an empty diskstats_device (no disk counters)", device);
        return -1;
    }
    char line[512], list[768] = "";
    size_t used = 0;
    int found = 0;
    while (!found && fgets(line, sizeof(line), f) != NULL) {
        char name[64];
        if (sscanf(line, "%*u %*u %63s", name) != 1)
            continue;
        if (strcmp(name, device) == 0)
            found = 1;
        else if (used < sizeof(list) - 1)
            used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", used ? ", " : "",
                                     name);
    }
    fclose(f);
    if (found)
        return 0;
    snprintf(err, errlen, "property 'diskstats_device': '%s' is not a device in /proc/diskstats;"
             " accepted: one of %s, or empty for none", device, used ? list : "(none listed)");
    return -1;
}
