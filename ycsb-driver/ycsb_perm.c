/* A keyed pseudo-random permutation of 0..n-1; see ycsb_gen.h.
 *
 * Feistel network (H. Feistel, "Cryptography and computer privacy",
 * Scientific American 228(5), 1973; four rounds, as M. Luby and C. Rackoff,
 * SIAM J. Comput. 17(2), 1988, showed suffice for a pseudo-random
 * permutation given random round functions) on a mixed-radix domain, the
 * "unbalanced" form that format-preserving encryption uses for domains that
 * are not powers of two: x = L 2^rb + R with L in 0..a-1, R in 0..2^rb-1.
 * A round either adds g(R) to L modulo a or XORs h(L) into R; either is
 * invertible whatever g and h are, so every round, and the network, is a
 * bijection of 0..a 2^rb - 1.  Not a cipher: the purpose is to scatter ranks
 * over the key range reproducibly.
 *
 * Cycle-walking (J. Black and P. Rogaway, "Ciphers with arbitrary finite
 * domains", CT-RSA 2002): apply the network until the value is below n.  The
 * walk from x < n follows x's cycle, which comes back below n, so the result
 * is a bijection of 0..n-1.  With 2^rb >= sqrt(n), a 2^rb - n < 2^rb, so a
 * step lands beyond n with probability below 2^rb / n ~ 1/sqrt(n). */
#include "ycsb_gen.h"

void ycsb_perm_init(struct ycsb_perm *p, uint64_t n, uint64_t key)
{
    unsigned b = 2;
    while (b < 62 && ((uint64_t)1 << b) < n)
        b++;
    p->n = n;
    p->rbits = (b + 1) / 2;
    p->rmask = ((uint64_t)1 << p->rbits) - 1;
    p->a = (n + p->rmask) >> p->rbits;    /* ceil(n / 2^rb), at most 2^rb */
    for (int i = 0; i < YCSB_PERM_ROUNDS; i++)
        p->key[i] = ycsb_mix64(key + (uint64_t)i);
}

uint64_t ycsb_perm_invert(const struct ycsb_perm *p, uint64_t y)
{
    do {
        uint64_t l = y >> p->rbits, r = y & p->rmask;
        for (int i = YCSB_PERM_ROUNDS - 2; i >= 0; i -= 2) {
            r ^= ycsb_perm_f(l, p->key[i + 1]) >> (64 - p->rbits);
            uint64_t g = ((ycsb_perm_f(r, p->key[i]) >> 32) * p->a) >> 32;
            l = l >= g ? l - g : l + p->a - g;
        }
        y = (l << p->rbits) | r;
    } while (y >= p->n);
    return y;
}
