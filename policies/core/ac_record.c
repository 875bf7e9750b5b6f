/* Spilled records (store/record.h) as the core makes and reads them: a
 * resident item's record (its value compressed when ac_compress asks, the
 * option's table is here), and the one way a record is read back --
 * ac_read_record_at: the record at a location, from the bytes a prefetcher
 * read ahead when they still are the record's, else from the tier; verified
 * (checksum, length, value expanded) and, for a key, compared with it.
 * Uses: ac_prefetch, ac_state. */
#include "memcached.h"
#include "ac_internal.h"
#include "ac_chunk.h"
#include "store/compress.h"
#include "store/record.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool ac_item_dead(item *it) {
    return (it->exptime != 0 && it->exptime <= current_time) || item_is_flushed(it);
}

/* The spilled records' own options (the spilling tiers, blocks, tuples, nvm and remote, list this table). */
struct record_options {
    unsigned compress;               /* ac_compress: an AC_CODEC_* */
};
static struct record_options rec_opt;

static const struct ac_word compress_words[] = {
    { "none", "values stored as they are", AC_CODEC_NONE, NULL },
    { "lz4", "liblz4, fast", AC_CODEC_LZ4, NULL },
    { "zstd", "libzstd level 1, smaller", AC_CODEC_ZSTD, NULL },
    { NULL, NULL, 0, NULL },
};

static const struct ac_opt record_opts[] = {
    { .key = "ac_compress", .type = AC_T_ENUM, AC_FIELD(struct record_options, compress),
      .words = compress_words, .def = "none", .def_is_value = true,
      .help = "compress each spilled value (kept as is when it would not shrink)" },
};
const struct ac_opt_table ac_record_options = AC_OPT_TABLE("spilled records (tiers blocks, tuples, nvm and remote)",
                                                           record_opts, &rec_opt);

const char *ac_compression(void) {
    return ac_codec_name((int)rec_opt.compress);
}

/* Compresses the sealed record buf (*lenp bytes) in place when ac_compress asks. */
static void compress_record(struct ac_scratch *s, char *buf, size_t *lenp, size_t nbytes) {
    int codec = (int)rec_opt.compress;
    size_t cap = ac_compress_bound(codec, nbytes);
    char *tmp = cap > 0 ? ac_buf_get(&s->codec, cap) : NULL;
    AC_COUNT(compress_in_bytes, nbytes);
    if (tmp == NULL) {                   /* stored as is: still a valid record */
        AC_COUNT(compress_out_bytes, nbytes);
        AC_COUNT(compress_skipped, 1);
        return;
    }
    size_t len = ac_record_compress(buf, *lenp, codec, tmp, cap);
    AC_COUNT(compress_out_bytes, nbytes - (*lenp - len));
    if (len == *lenp)
        AC_COUNT(compress_skipped, 1);
    *lenp = len;
}

uint32_t ac_item_client_flags(item *it) {
    uint32_t flags = 0;
    if (it->it_flags & ITEM_CFLAGS)
        memcpy(&flags, ITEM_suffix(it), sizeof(flags));
    return flags;
}

char *ac_item_record(struct ac_scratch *s, item *it, size_t *lenp) {
    size_t len = ac_record_size(it->nkey, it->nbytes);
    char *buf = ac_buf_get(&s->spill, len);
    if (buf == NULL)
        return NULL;
    struct ac_record r = {
        .len = (uint32_t)len, .nbytes = (uint32_t)it->nbytes, .exptime = it->exptime,
        .time = it->time, .cas = ITEM_get_cas(it), .nkey = it->nkey,
        .client_flags = ac_item_client_flags(it),
    };
    ac_record_put_header(buf, &r);
    memcpy(buf + AC_RECORD_HDR, ITEM_key(it), it->nkey);
    char *dst = buf + AC_RECORD_HDR + it->nkey;
    if ((it->it_flags & ITEM_CHUNKED) == 0) {
        memcpy(dst, ITEM_data(it), it->nbytes);
    } else {
        for (char *ch = ac_chunk_first(it); ch != NULL; ch = ac_chunk_next(ch)) {
            int used = ac_chunk_used(ch);
            memcpy(dst, ac_chunk_data(ch), (size_t)used);
            dst += used;
        }
    }
    ac_record_seal(buf, len);
    *lenp = len;
    if (rec_opt.compress != AC_CODEC_NONE)
        compress_record(s, buf, lenp, (size_t)it->nbytes);
    return buf;
}

int ac_tier_read(const struct ac_loc *loc, void *buf) {
    int rc = ac.spill->read(loc, buf);
    if (rc == 0)
        AC_COUNT(record_read_bytes, loc->len);
    return rc;
}

/* A verified record's compressed value expanded into the thread's value
 * buffer (r->value then points there): AC_ERR_NONE; AC_ERR_CHECKSUM when it
 * does not expand to its length or claims more than an item can hold (a bad
 * record under a good CRC); AC_ERR_READ when the buffer cannot be had. */
enum ac_error ac_record_expand_value(struct ac_scratch *s, struct ac_record *r) {
    if (r->codec == AC_CODEC_NONE)
        return AC_ERR_NONE;
    if (r->nbytes > (uint32_t)settings.item_size_max + 2)
        return AC_ERR_CHECKSUM;
    char *dst = ac_buf_get(&s->value, r->nbytes);
    if (dst == NULL)
        return AC_ERR_READ;
    return ac_record_expand(r, dst) == 0 ? AC_ERR_NONE : AC_ERR_CHECKSUM;
}

enum ac_error ac_record_verify(struct ac_scratch *s, const char *buf, size_t len, struct ac_record *r) {
    if (ac_record_parse(buf, len, r) != AC_REC_OK || r->len != len)
        return AC_ERR_CHECKSUM;
    return ac_record_expand_value(s, r);
}

/* The checks how asks for: the whole record, or its header and key only. */
static enum ac_error check(struct ac_scratch *s, const char *buf, size_t len, unsigned how, struct ac_record *r) {
    if (how & AC_RR_HEADER)
        return ac_record_parse(buf, len, r) == AC_REC_OK && r->len == len ? AC_ERR_NONE : AC_ERR_CHECKSUM;
    return ac_record_verify(s, buf, len, r);
}

enum ac_read ac_read_record_at(struct ac_scratch *s, struct ac_prefetcher *pf, uint64_t fp,
                               const struct ac_loc *loc, unsigned how, const char *key, size_t nkey,
                               struct ac_record *r, enum ac_error *err) {
    *err = AC_ERR_NONE;
    const char *have = ac_prefetched(pf, fp, loc);
    if (have == NULL && (how & AC_RR_SEEN))
        have = s->fetch.p;
    bool ok = false;
    if (have != NULL) {
        if (how & AC_RR_MIGRATE)
            AC_COUNT(migrate_reads_saved, 1);
        else
            AC_COUNT(record_read_bytes, loc->len);
        /* bytes read before that do not verify: the record is read again, as at depth 1 */
        ok = check(s, have, loc->len, how, r) == AC_ERR_NONE;
    }
    if (!ok) {
        char *buf = ac_buf_get(&s->fetch, loc->len);
        if (buf == NULL || ac_tier_read(loc, buf) != 0) {
            if (how & AC_RR_COUNT)
                AC_COUNT(read_errors, 1);
            *err = AC_ERR_READ;
            return AC_READ_FAILED;
        }
        enum ac_error e = check(s, buf, loc->len, how, r);
        if (e != AC_ERR_NONE) {
            if ((how & AC_RR_COUNT) && e == AC_ERR_CHECKSUM)
                AC_COUNT(checksum_errors, 1);
            else if (how & AC_RR_COUNT)
                AC_COUNT(read_errors, 1);
            *err = e;
            return AC_READ_FAILED;
        }
    }
    if (key != NULL && (r->nkey != nkey || memcmp(r->key, key, nkey) != 0))
        return AC_READ_OTHER_KEY;
    return AC_READ_OK;
}

/* Copies n value bytes into a freshly allocated item, chunked or not. */
int ac_item_fill(item *it, const char *src, size_t n) {
    if ((it->it_flags & ITEM_CHUNKED) == 0) {
        memcpy(ITEM_data(it), src, n);
        return 0;
    }
    char *ch = ac_chunk_first(it);     /* ac_chunk.h: the first one is unaligned */
    size_t done = 0;
    while (done < n) {
        int used = ac_chunk_used(ch);
        if (used == ac_chunk_size(ch)) {
            item_chunk *nch = do_item_alloc_chunk((item_chunk *)(void *)ch, n - done);
            if (nch == NULL)
                return -1;
            ch = (char *)nch;
            used = ac_chunk_used(ch);
        }
        size_t k = (size_t)(ac_chunk_size(ch) - used);
        if (k > n - done)
            k = n - done;
        memcpy(ac_chunk_data(ch) + used, src + done, k);
        ac_chunk_set_used(ch, used + (int)k);
        done += k;
    }
    return 0;
}

