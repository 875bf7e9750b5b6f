/* Property parsing: values, precedence, and every error message. */
#include "check.h"
#include "ycsb_config.h"

static char err[2048];

/* set one property on defaults; returns the error text or "" */
static const char *set1(const char *k, const char *v)
{
    struct ycsb_config c;
    ycsb_config_defaults(&c);
    err[0] = '\0';
    if (ycsb_config_set(&c, k, v, err, sizeof(err)) == 0)
        return "";
    return err;
}

/* defaults + -p list, then finish; returns the error text or "" */
static const char *finish(const char *const *kvs, struct ycsb_config *out)
{
    struct ycsb_config c;
    ycsb_config_defaults(&c);
    err[0] = '\0';
    for (int i = 0; kvs[i] != NULL; i++)
        if (ycsb_config_set_kv(&c, kvs[i], err, sizeof(err)) != 0)
            return err;
    if (ycsb_config_finish(&c, err, sizeof(err)) != 0)
        return err;
    if (out)
        *out = c;
    return "";
}

static void test_values(void)
{
    struct ycsb_config c;
    ycsb_config_defaults(&c);
    CHECK_EQ_I(ycsb_config_load_file(&c, "data/good.properties", err, sizeof(err)), 0);
    CHECK_EQ_S(err, "");
    CHECK_EQ_I(c.recordcount, 5000);
    CHECK_EQ_I(c.operationcount, 200);
    CHECK(c.readproportion == 0.5);
    CHECK_EQ_I(c.requestdistribution, YCSB_DIST_HOTSPOT);
    CHECK(c.hotspotdatafraction == 0.1);
    CHECK_EQ_I(c.insertorder_hashed, 0);
    CHECK_EQ_I(c.valuekind, YCSB_VALUE_TEXT);
    CHECK(c.seed == 18446744073709551615ULL);
    CHECK_EQ_S(c.name, "good");
    /* later wins */
    CHECK_EQ_I(ycsb_config_set_kv(&c, "recordcount=77", err, sizeof(err)), 0);
    CHECK_EQ_I(c.recordcount, 77);
    CHECK_EQ_I(ycsb_config_set_kv(&c, " fieldcount = 3 ", err, sizeof(err)), 0);
    CHECK_EQ_I(c.fieldcount, 3);
    CHECK_EQ_I(ycsb_config_finish(&c, err, sizeof(err)), 0);
    CHECK_EQ_I(c.insertcount, 77);   /* derived: recordcount - insertstart */
    CHECK_EQ_I(c.loadcount, 77);     /* derived: insertcount */
    CHECK_EQ_I(ycsb_config_value_size(&c), 300);
    /* accepted-but-unused YCSB names */
    CHECK_EQ_S(set1("workload", "site.ycsb.workloads.CoreWorkload"), "");
    CHECK_EQ_S(set1("maxscanlength", "100"), "");
    CHECK_EQ_S(set1("scanlengthdistribution", "zipfian"), "");
    CHECK_EQ_S(set1("zipfianconstant", "0.5"), "");
    CHECK_EQ_S(set1("target", "0"), "");
    CHECK_EQ_S(set1("readallfields", "false"), "");
    CHECK_EQ_S(set1("requestdistribution", "sequential"), "");
}

static void test_errors(void)
{
    CHECK_EQ_S(set1("recordcnt", "5"),
               "unknown property 'recordcnt'; accepted: recordcount, operationcount, workload, "
               "readproportion, updateproportion, insertproportion, readmodifywriteproportion, "
               "scanproportion, requestdistribution, zipfianconstant, fieldcount, fieldlength, "
               "insertorder, insertstart, insertcount, loadcount, hotspotdatafraction, "
               "hotspotopnfraction, readallfields, writeallfields, zeropadding, minscanlength, "
               "maxscanlength, scanlengthdistribution, seed, threads, threadcount, fieldlengthdistribution, "
               "warmupoperations, target, valuekind, lookaside, runwindows, diskstats_device (and YCSB's own "
               "properties that mean nothing here, ignored with a warning: see README)");
    CHECK_EQ_S(set1("recordcount", "abc"),
               "property 'recordcount': 'abc' is not an integer; accepted: an integer from 1 to "
               "2147483647");
    CHECK_EQ_S(set1("recordcount", "12x"),
               "property 'recordcount': '12x' is not an integer; accepted: an integer from 1 to "
               "2147483647");
    CHECK_EQ_S(set1("recordcount", ""),
               "property 'recordcount': '' is not an integer; accepted: an integer from 1 to "
               "2147483647");
    CHECK_EQ_S(set1("operationcount", "-5"),
               "property 'operationcount': '-5' is negative; accepted: an integer from 0 to "
               "2147483647");
    CHECK_EQ_S(set1("recordcount", "0"),
               "property 'recordcount': '0' is out of range; accepted: an integer from 1 to "
               "2147483647");
    CHECK_EQ_S(set1("threads", "2000"),
               "property 'threads': '2000' is out of range; accepted: an integer from 1 to 1024");
    CHECK_EQ_S(set1("recordcount", "99999999999999999999"),
               "property 'recordcount': '99999999999999999999' is out of range; accepted: an "
               "integer from 1 to 2147483647");
    CHECK_EQ_S(set1("readproportion", "1.5"),
               "property 'readproportion': '1.5' is out of range; accepted: a number from 0 to 1");
    CHECK_EQ_S(set1("updateproportion", "-0.1"),
               "property 'updateproportion': '-0.1' is negative; accepted: a number from 0 to 1");
    CHECK_EQ_S(set1("insertproportion", "lots"),
               "property 'insertproportion': 'lots' is not a number; accepted: a number from 0 "
               "to 1");
    CHECK_EQ_S(set1("readproportion", "nan"),
               "property 'readproportion': 'nan' is not a number; accepted: a number from 0 to 1");
#define THETA_OK "accepted: a number greater than 0 and at most 10 (zipfian and latest: at " \
                 "least 1e-9 away from 1)"
    /* theta = 1 is a property value like any other; only Gray's method
     * (zipfian, latest) rejects it, in ycsb_config_finish */
    CHECK_EQ_S(set1("zipfianconstant", "1"), "");
    CHECK_EQ_S(set1("zipfianconstant", "1.0000000001"), "");
    CHECK_EQ_S(set1("zipfianconstant", "0"),
               "property 'zipfianconstant': '0' is out of range; " THETA_OK);
    CHECK_EQ_S(set1("zipfianconstant", "10.5"),
               "property 'zipfianconstant': '10.5' is out of range; " THETA_OK);
    CHECK_EQ_S(set1("zipfianconstant", "-0.5"),
               "property 'zipfianconstant': '-0.5' is negative; " THETA_OK);
    CHECK_EQ_S(set1("zipfianconstant", "1.2"), "");
    CHECK_EQ_S(set1("zipfianconstant", "10"), "");
    CHECK_EQ_S(set1("zipfianconstant", "0.999999"), "");
    const char *one_z[] = {"zipfianconstant=1", "requestdistribution=zipfian", NULL};
    CHECK_EQ_S(finish(one_z, NULL),
               "zipfianconstant=1 with requestdistribution=zipfian: 1 or within 1e-9 of it, and "
               "Gray's Zipfian method (YCSB's ZipfianGenerator) divides by 1 - theta (alpha = "
               "1/(1 - theta)); accepted: zipfianconstant at least 1e-9 away from 1, or "
               "requestdistribution=truezipf, which accepts 1");
    const char *near_l[] = {"requestdistribution=latest", "zipfianconstant=1.0000000001", NULL};
    CHECK_EQ_S(finish(near_l, NULL),
               "zipfianconstant=1.0000000001 with requestdistribution=latest: 1 or within 1e-9 "
               "of it, and Gray's Zipfian method (YCSB's ZipfianGenerator) divides by 1 - theta "
               "(alpha = 1/(1 - theta)); accepted: zipfianconstant at least 1e-9 away from 1, or "
               "requestdistribution=truezipf, which accepts 1");
    const char *one_t[] = {"zipfianconstant=1", "requestdistribution=truezipf", NULL};
    CHECK_EQ_S(finish(one_t, NULL), "");
    const char *one_u[] = {"zipfianconstant=1", NULL};   /* uniform: theta unused */
    CHECK_EQ_S(finish(one_u, NULL), "");
    const char *near_z[] = {"zipfianconstant=1.000000002", "requestdistribution=zipfian", NULL};
    CHECK_EQ_S(finish(near_z, NULL), "");
#undef THETA_OK
    CHECK_EQ_S(set1("target", "-1"),
               "property 'target': '-1' is negative; accepted: a number from 0 to 1e+12");
    CHECK_EQ_S(set1("seed", "-1"),
               "property 'seed': '-1' is negative; accepted: an integer from 0 to "
               "18446744073709551615");
    CHECK_EQ_S(set1("seed", "18446744073709551616"),
               "property 'seed': '18446744073709551616' is out of range; accepted: an integer "
               "from 0 to 18446744073709551615");
    CHECK_EQ_S(set1("requestdistribution", "exponential"),
               "property 'requestdistribution': 'exponential' is not accepted; accepted: uniform, "
               "zipfian, latest, hotspot, sequential, truezipf");
    CHECK_EQ_S(set1("insertorder", "random"),
               "property 'insertorder': 'random' is not accepted; accepted: ordered, hashed");
    CHECK_EQ_S(set1("valuekind", "random"),
               "property 'valuekind': 'random' is not accepted; accepted: ycsb, text, zeros");
    CHECK_EQ_S(set1("readallfields", "yes"),
               "property 'readallfields': 'yes' is not accepted; accepted: true, false");
    CHECK_EQ_S(set1("hotspotopnfraction", "2"),
               "property 'hotspotopnfraction': '2' is out of range; accepted: a number from 0 "
               "to 1");
    CHECK_EQ_S(set1("zeropadding", "0"),
               "property 'zeropadding': '0' is out of range; accepted: an integer from 1 to 32");
    CHECK_EQ_S(set1("lookaside", "yes"),
               "property 'lookaside': 'yes' is not accepted; accepted: true, false");
    CHECK_EQ_S(set1("lookaside", "true"), "");
    CHECK_EQ_S(set1("diskstats_device", "a-device-name-longer-than-31-bytes"),
               "property 'diskstats_device': value is too long; accepted: a device name as in "
               "/proc/diskstats (e.g. vda), up to 31 bytes, or empty for none");
    CHECK_EQ_S(set1("diskstats_device", ""), "");

    const char *kv1[] = {"recordcount", NULL};
    CHECK_EQ_S(finish(kv1, NULL), "-p 'recordcount': expected key=value");
    const char *kv2[] = {"=5", NULL};
    CHECK_EQ_S(finish(kv2, NULL), "-p '=5': expected key=value");
    /* scans are accepted (run as the reads of their keys: ycsb_run.h) */
    const char *scan[] = {"scanproportion=0.05", "readproportion=0.9", NULL};
    CHECK_EQ_S(finish(scan, NULL), "");
    const char *sum[] = {"readproportion=1", NULL};
    CHECK_EQ_S(finish(sum, NULL),
               "proportions do not sum to 1: readproportion 1 + updateproportion 0.05 + "
               "insertproportion 0 + readmodifywriteproportion 0 + scanproportion 0 = 1.05; "
               "accepted: a sum of 1 (within 1e-9)");
    const char *sum_ok[] = {"readproportion=0.1", "updateproportion=0.2",
                            "insertproportion=0.3", "readmodifywriteproportion=0.4", NULL};
    CHECK_EQ_S(finish(sum_ok, NULL), "");   /* 0.1+0.2+0.3+0.4 != 1.0 in binary, within 1e-9 */
    const char *range[] = {"recordcount=100", "insertstart=50", "insertcount=60", NULL};
    CHECK_EQ_S(finish(range, NULL),
               "insertstart (50) + insertcount (60) exceeds recordcount (100); accepted: "
               "insertstart + insertcount <= recordcount");
    const char *scanlen[] = {"minscanlength=11", "maxscanlength=10", NULL};
    CHECK_EQ_S(finish(scanlen, NULL),
               "minscanlength (11) exceeds maxscanlength (10); accepted: 1 <= minscanlength <= "
               "maxscanlength (a scan reads that many consecutive keys)");
    CHECK_EQ_S(set1("minscanlength", "0"),
               "property 'minscanlength': '0' is out of range; accepted: an integer from 1 to "
               "2147483647");
    const char *load[] = {"recordcount=100", "insertcount=60", "loadcount=61", NULL};
    CHECK_EQ_S(finish(load, NULL),
               "loadcount (61) exceeds insertcount (60); accepted: loadcount <= insertcount (the "
               "load inserts keys insertstart .. insertstart + loadcount - 1, reads choose among "
               "insertcount keys)");
    const char *start[] = {"recordcount=100", "insertstart=100", NULL};
    CHECK_EQ_S(finish(start, NULL),
               "insertstart (100) leaves no keys to load; accepted: insertstart < recordcount "
               "(100)");
    const char *latest[] = {"recordcount=1", "requestdistribution=latest", NULL};
    CHECK_EQ_S(finish(latest, NULL), "requestdistribution=latest needs recordcount >= 2 (got 1)");
    const char *big[] = {"fieldcount=1024", "fieldlength=2048", NULL};
    CHECK_EQ_S(finish(big, NULL),
               "fieldcount (1024) x fieldlength (2048) = 2097152 bytes per value; accepted: at "
               "most 1048576 bytes");

    /* diskstats_device must name a device /proc/diskstats lists */
    const char *nodev[] = {"diskstats_device=nosuchdisk9", NULL};
    const char *msg = finish(nodev, NULL);
    const char *head = "property 'diskstats_device': 'nosuchdisk9' is not a device in "
                       "/proc/diskstats; accepted: one of ";
    CHECK(strncmp(msg, head, strlen(head)) == 0);
    CHECK(strlen(msg) > strlen(head) && strstr(msg, ", or empty for none") != NULL);
    FILE *ds = fopen("/proc/diskstats", "r");
    char line[512], dev[64] = "", kv[100];
    if (ds != NULL) {
        if (fgets(line, sizeof(line), ds) != NULL && sscanf(line, "%*u %*u %63s", dev) == 1) {
            CHECK(strstr(msg, dev) != NULL);     /* the devices that exist are named */
            snprintf(kv, sizeof(kv), "diskstats_device=%s", dev);
            const char *okdev[] = {kv, NULL};
            CHECK_EQ_S(finish(okdev, NULL), "");
        }
        fclose(ds);
    }

    struct ycsb_config c;
    ycsb_config_defaults(&c);
    CHECK_EQ_I(ycsb_config_load_file(&c, "data/missing.properties", err, sizeof(err)), -1);
    CHECK_EQ_S(err, "cannot open property file 'data/missing.properties': No such file or "
                    "directory");
    CHECK_EQ_I(ycsb_config_load_file(&c, "data/noeq.properties", err, sizeof(err)), -1);
    CHECK_EQ_S(err, "data/noeq.properties:2: expected key=value, got 'bogus line'");
    CHECK_EQ_I(ycsb_config_load_file(&c, "data/badvalue.properties", err, sizeof(err)), -1);
    CHECK_EQ_S(err, "data/badvalue.properties:2: property 'fieldcount': 'abc' is not an "
                    "integer; accepted: an integer from 1 to 1024");
    CHECK_EQ_I(ycsb_config_load_file(&c, "data/continuation.properties", err, sizeof(err)), -1);
    CHECK_EQ_S(err, "data/continuation.properties:1: line continuation ('\\' at the end) is "
                    "not supported");
}

static void test_json(void)
{
    struct ycsb_config c;
    const char *kvs[] = {"recordcount=10", NULL};
    CHECK_EQ_S(finish(kvs, &c), "");
    struct ycsb_json j;
    ycsb_json_init(&j);
    ycsb_json_begin_object(&j, NULL);
    ycsb_config_json(&c, &j, "config");
    ycsb_json_str(&j, "esc", "a\"b\\c\n");
    ycsb_json_end_object(&j);
    const char *t = ycsb_json_text(&j);
    CHECK(strstr(t, "{\"config\":{\"name\":\"\",\"recordcount\":10,\"operationcount\":1000,") == t);
    CHECK(strstr(t, "\"readproportion\":0.95,") != NULL);
    CHECK(strstr(t, "\"requestdistribution\":\"uniform\"") != NULL);
    CHECK(strstr(t, "\"insertcount\":10,") != NULL);
    CHECK(strstr(t, "\"lookaside\":false,\"runwindows\":1,\"diskstats_device\":\"\"}") != NULL);
    CHECK(strstr(t, "\"esc\":\"a\\\"b\\\\c\\u000a\"}") != NULL);
    ycsb_json_free(&j);
}

int main(void)
{
    test_values();
    test_errors();
    test_json();
    return test_summary("test_props");
}
