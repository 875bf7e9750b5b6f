/* Zipfian, scrambled Zipfian and skewed-latest generators (YCSB 0.17).
 *
 * Gray et al., "Quickly Generating Billion-Record Synthetic Databases"
 * (SIGMOD 1994), as used by YCSB's ZipfianGenerator:
 *   zeta(n, theta) = sum_{i=1}^{n} 1/i^theta
 *   alpha = 1/(1-theta)
 *   eta   = (1 - (2/n)^(1-theta)) / (1 - zeta(2,theta)/zeta(n,theta))
 *   draw u in [0,1); uz = u * zeta(n):
 *     uz < 1                 -> base            (rank 1)
 *     uz < 1 + 0.5^theta     -> base + 1        (rank 2)
 *     otherwise              -> base + (long)(n * (eta*u - eta + 1)^alpha)
 *
 * theta > 1 (YCSB does not forbid it): alpha < 0 and eta < 0, so
 * eta*u - eta + 1 = 1 + |eta|(1-u) > 1 and its power alpha lies in (0, 1);
 * the draw is still increasing in u and equals 2 at u = zeta(2)/zeta(n), as
 * for theta < 1.  theta = 1 has no alpha (ycsb_props.c rejects it).
 *
 * Clamping (ours; YCSB has none): in double arithmetic eta*u - eta + 1 rounds
 * to exactly 1 for the last u values below 1 when |eta| is small (theta = 0.99,
 * n = 1000: u = 1 - 2^-53 gives base + n, one past the range), and a NaN
 * must never reach the integer conversion.  So the general case is clamped to
 * [0, itemcount - 1] before adding base; this changes only draws YCSB would
 * have returned out of range.
 */
#include <math.h>
#include "ycsb_gen.h"

double ycsb_zeta(int64_t st, int64_t n, double theta, double initialsum)
{
    double sum = initialsum;
    for (int64_t i = st; i < n; i++)
        sum += 1.0 / pow((double)(i + 1), theta);
    return sum;
}

double ycsb_zeta_approx(int64_t n, double theta)
{
    const int64_t m = 1000;  /* terms summed exactly */
    if (n <= m + 1)
        return ycsb_zeta(0, n, theta, 0.0);
    /* sum_{i=1}^{m-1} exactly, then the tail sum_{i=m}^{n} f(i) with
     * f(x) = x^-theta by Euler-Maclaurin:
     *   integral_m^n f + (f(m) + f(n))/2
     *   + B2/2! (f'(n) - f'(m)) + B4/4! (f'''(n) - f'''(m)),
     * B2/2! = 1/12, B4/4! = -1/720, f'(x) = -theta x^(-theta-1),
     * f'''(x) = -theta(theta+1)(theta+2) x^(-theta-3).
     * The remainder is O(m^(-theta-5)), far below double precision here.
     * For theta > 1 the same formula holds (1 - theta < 0): as n grows it
     * tends to the Riemann zeta value, minus the tail n^(1-theta)/(theta-1). */
    double head = ycsb_zeta(0, m - 1, theta, 0.0);
    double a = (double)m, b = (double)n;
    double integral = (fabs(theta - 1.0) < 1e-12) ? log(b / a)
                      : (pow(b, 1.0 - theta) - pow(a, 1.0 - theta)) / (1.0 - theta);
    double ends = 0.5 * (pow(a, -theta) + pow(b, -theta));
    double d1 = -theta * (pow(b, -theta - 1.0) - pow(a, -theta - 1.0));
    double d3 = -theta * (theta + 1.0) * (theta + 2.0) * (pow(b, -theta - 3.0) - pow(a, -theta - 3.0));
    return head + integral + ends + d1 / 12.0 - d3 / 720.0;
}

void ycsb_zipfian_init_zetan(struct ycsb_zipfian *z, int64_t min, int64_t max, double theta,
                             double zetan)
{
    z->items = max - min + 1;
    z->base = min;
    z->theta = theta;
    z->zeta2theta = ycsb_zeta(0, 2, theta, 0.0);
    z->halfpowtheta = pow(0.5, theta);
    z->alpha = 1.0 / (1.0 - theta);
    z->zetan = zetan;
    z->countforzeta = z->items;
    z->eta = (1.0 - pow(2.0 / (double)z->items, 1.0 - theta)) / (1.0 - z->zeta2theta / zetan);
}

void ycsb_zipfian_init(struct ycsb_zipfian *z, int64_t min, int64_t max, double theta)
{
    ycsb_zipfian_init_zetan(z, min, max, theta, ycsb_zeta(0, max - min + 1, theta, 0.0));
}

int64_t ycsb_zipfian_from_u(const struct ycsb_zipfian *z, double u, int64_t itemcount)
{
    double uz = u * z->zetan;
    if (uz < 1.0)
        return z->base;
    if (uz < 1.0 + z->halfpowtheta)   /* YCSB: 1.0 + Math.pow(0.5, theta) */
        return z->base + 1;
    double d = (double)itemcount * pow(z->eta * u - z->eta + 1.0, z->alpha);
    if (!(d >= 0.0))                       /* also NaN */
        return z->base;
    if (d >= (double)itemcount)
        return z->base + itemcount - 1;
    return z->base + (int64_t)d;
}

int64_t ycsb_zipfian_next_n(struct ycsb_zipfian *z, struct ycsb_rng *r, int64_t itemcount)
{
    if (itemcount > z->countforzeta) {
        /* more items: extend zeta incrementally; YCSB keeps `items` (the
         * construction-time count) in eta's first term */
        z->zetan = ycsb_zeta(z->countforzeta, itemcount, z->theta, z->zetan);
        z->countforzeta = itemcount;
        z->eta = (1.0 - pow(2.0 / (double)z->items, 1.0 - z->theta)) /
                 (1.0 - z->zeta2theta / z->zetan);
    }
    return ycsb_zipfian_from_u(z, ycsb_rng_double(r), itemcount);
}

int64_t ycsb_zipfian_next(struct ycsb_zipfian *z, struct ycsb_rng *r)
{
    return ycsb_zipfian_next_n(z, r, z->items);
}

void ycsb_scrambled_init(struct ycsb_scrambled *g, int64_t min, int64_t max, double theta)
{
    g->min = min;
    g->max = max;
    g->itemcount = max - min + 1;
    /* YCSB: new ZipfianGenerator(0, ITEM_COUNT, theta[, ZETAN]) -> ITEM_COUNT + 1 items */
    double zetan = theta == YCSB_ZIPFIAN_CONSTANT
                   ? YCSB_SCRAMBLED_ZETAN
                   : ycsb_zeta_approx(YCSB_SCRAMBLED_ITEM_COUNT + 1, theta);
    ycsb_zipfian_init_zetan(&g->gen, 0, YCSB_SCRAMBLED_ITEM_COUNT, theta, zetan);
}

int64_t ycsb_scrambled_next(struct ycsb_scrambled *g, struct ycsb_rng *r)
{
    int64_t ret = ycsb_zipfian_next(&g->gen, r);
    /* Java's % keeps the sign of the dividend, as C99's does */
    return g->min + ycsb_fnvhash64(ret) % g->itemcount;
}

void ycsb_latest_init(struct ycsb_latest *g, int64_t basis_last, double theta)
{
    /* new ZipfianGenerator(basis.lastValue()) == ZipfianGenerator(0, last - 1) */
    ycsb_zipfian_init(&g->zipf, 0, basis_last - 1, theta);
}

int64_t ycsb_latest_next(struct ycsb_latest *g, struct ycsb_rng *r, int64_t basis_last)
{
    return basis_last - ycsb_zipfian_next_n(&g->zipf, r, basis_last);
}
