/* YCSB keys and values.
 *
 * Key (CoreWorkload.buildKeyName): "user" + decimal(n), where n = keynum
 * (insertorder=ordered) or fnvhash64(keynum) (insertorder=hashed), with '0'
 * characters between "user" and the digits up to `zeropadding` digits.
 *
 * Value: one record of fieldcount * fieldlength bytes (memcached stores the
 * record as one value; fields are concatenated).  The bytes are a function of
 * (seed, keynum, version) only: version 0 at load, a unique number for every
 * later write, so runs are reproducible.  Kinds:
 *   ycsb  - RandomByteIterator's alphabet: from each 32-bit draw b, six bytes
 *           ' ' + (b & 31), (b>>5 & 63), (b>>10 & 95), (b>>15 & 31),
 *           (b>>20 & 63), (b>>25 & 95)   (codes 32..127, hard to compress)
 *   text  - space-separated words from a fixed 64-word list (compressible)
 *   zeros - all bytes 0 (maximally compressible) */
#ifndef YCSB_RECORD_H
#define YCSB_RECORD_H

#include <stddef.h>
#include <stdint.h>

#define YCSB_KEY_MAX 48  /* "user" + up to 32 padded digits + NUL, rounded up */

/* writes the key (NUL-terminated) into buf[YCSB_KEY_MAX]; returns its length */
size_t ycsb_key(char *buf, int64_t keynum, int hashed, int zeropadding);
void ycsb_value_fill(char *buf, size_t len, int kind, uint64_t seed, int64_t keynum,
                     uint64_t version);

#endif
