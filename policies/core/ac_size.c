/* The size grammar (ac_size.h, docs/sizes.txt) with exact integer arithmetic.
 *
 * A fraction F = 0.d1..df (trailing zeros dropped, so df is 1-9) of a unit of
 * 2^u bytes is F * 2^u bytes: whole only if 10^f divides d1..df * 2^u, i.e. 5^f
 * divides d1..df (then it is odd: it does not end in 0) and f <= u. So more
 * fraction digits than u (at most 40, for T) are refused at once, and the
 * fraction is doubled u times as a decimal digit string: each doubling carries
 * 0 or 1 into the bytes, and the digits left over must be all zero.
 * Uses: nothing of the core. */
#include "ac_size.h"
#include <stddef.h>

const char ac_size_not_a_size[] = "not a size";
const char ac_size_fraction[] = "a fraction of a byte";
const char ac_size_too_large[] = "too large: more than 2^64 - 1 bytes";

#define MAX_SHIFT 40    /* T */

static bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

static bool refuse(const char **why, const char *reason) {
    if (why != NULL)
        *why = reason;
    return false;
}

bool ac_parse_size(const char *text, uint64_t *out, const char **why) {
    const char *p = text, *whole = text, *frac = NULL;
    size_t nwhole, nfrac = 0;
    unsigned shift = 0;
    bool unit = true;

    /* the syntax */
    while (is_digit(*p))
        p++;
    nwhole = (size_t)(p - whole);
    if (nwhole == 0)
        return refuse(why, ac_size_not_a_size);
    if (*p == '.') {
        frac = ++p;
        while (is_digit(*p))
            p++;
        nfrac = (size_t)(p - frac);
        if (nfrac == 0)
            return refuse(why, ac_size_not_a_size);
    }
    switch (*p) {
    case 'K': case 'k': shift = 10; break;
    case 'M': case 'm': shift = 20; break;
    case 'G': case 'g': shift = 30; break;
    case 'T': case 't': shift = 40; break;
    default: unit = false; break;
    }
    if (unit)
        p++;
    if (*p != '\0')
        return refuse(why, ac_size_not_a_size);

    /* a whole number of bytes */
    if (frac != NULL && !unit)
        return refuse(why, ac_size_fraction);
    while (nfrac > 0 && frac[nfrac - 1] == '0')
        nfrac--;
    if (nfrac > shift)
        return refuse(why, ac_size_fraction);
    unsigned char digit[MAX_SHIFT];
    for (size_t i = 0; i < nfrac; i++)
        digit[i] = (unsigned char)(frac[i] - '0');
    uint64_t frac_bytes = 0;          /* < 2^shift */
    for (unsigned s = 0; s < shift && nfrac > 0; s++) {
        unsigned carry = 0;
        for (size_t i = nfrac; i > 0; i--) {     /* from the last digit */
            unsigned v = digit[i - 1] * 2u + carry;
            digit[i - 1] = (unsigned char)(v % 10u);
            carry = v / 10u;
        }
        frac_bytes = frac_bytes * 2u + carry;
    }
    for (size_t i = 0; i < nfrac; i++)
        if (digit[i] != 0)
            return refuse(why, ac_size_fraction);

    /* at most 2^64 - 1 */
    uint64_t n = 0;
    for (size_t i = 0; i < nwhole; i++) {
        unsigned d = (unsigned)(whole[i] - '0');
        if (n > (UINT64_MAX - d) / 10u)
            return refuse(why, ac_size_too_large);
        n = n * 10u + d;
    }
    if (n > (UINT64_MAX >> shift))
        return refuse(why, ac_size_too_large);
    *out = (n << shift) | frac_bytes;
    return true;
}
