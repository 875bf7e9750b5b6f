/* truezipf: exact Zipf(theta) over n ranks by rejection-inversion; see
 * ycsb_gen.h.
 *
 * The method (W. Hormann and G. Derflinger, "Rejection-inversion to generate
 * variates from monotone discrete distributions", ACM TOMACS 6(3), 1996),
 * with the hat h(x) = x^-theta, which is convex and decreasing, and
 *   H(x)    = integral of h = (x^(1-theta) - 1)/(1-theta)   (log x at 1)
 *   H^-1(y) = (1 + (1-theta) y)^(1/(1-theta))                (exp y at 1)
 * Rank k owns x in [k - 1/2, k + 1/2), i.e. y = H(x) in [H(k-1/2), H(k+1/2)),
 * an interval at least h(k) long because h is convex; its top h(k) is
 * accepted.  So with y uniform on (H(3/2) - 1, H(n + 1/2)] (rank 1's part
 * is exactly h(1) = 1 long):
 *   x = H^-1(y), k = round(x) clamped to 1..n,
 *   accept if k - x <= s or y >= H(k + 1/2) - h(k), else draw again,
 * and P(k) = k^-theta / sum_i i^-theta exactly.  s = 2 - H^-1(H(5/2) - h(2))
 * is the paper's squeeze: k - x <= s implies the second test for every k, so
 * most draws need one comparison.  The hat's excess area over the pmf is at
 * most 1.7 % of the total (theta ~ 3; 0.13 % at theta 0.99), so few draws
 * are repeated.
 *
 * Numerics: H and H^-1 are written as
 *   H(x)    = log(x) * E((1-theta) log x),    E(z) = expm1(z)/z, E(0) = 1
 *   H^-1(y) = exp(y * L((1-theta) y)),        L(z) = log1p(z)/z, L(0) = 1
 * so theta near 1 loses no digits to (x^(1-theta) - 1) cancelling, and
 * theta = 1 is the same code (z = 0).
 *
 * Speed: computing x takes log1p and exp (~30 ns).  The hot path instead
 * looks x up in a table: U's top YCSB_TRUEZIPF_CELL_BITS bits pick a cell,
 * where x(U) = H^-1(h_n + U span) is replaced by its second-order Taylor
 * polynomial about the cell's middle.  Each cell carries a bound `err` on
 * |polynomial - exact x| (the Lagrange remainder with |x'''| bounded over the
 * cell, plus rounding); when x lies within err of no decision boundary
 * (k +- 1/2, and k - s_cell for the squeeze) the table's answer is the exact
 * method's answer, otherwise the draw takes the exact path.
 *
 * A cell's squeeze s_cell may exceed s: with x_k = H^-1(H(k+1/2) - h(k)) the
 * start of rank k's accepted part, x_k >= k - 1/2 (h is convex) and h is
 * decreasing, so k^-theta = integral_{x_k}^{k+1/2} h <= (k + 1/2 - x_k) x_k^-theta,
 * hence k - x_k >= (x_k/k)^theta - 1/2 >= (1 - 1/(2k))^theta - 1/2 =: s_k.
 * s_k grows with k (towards 1/2), so a cell whose ranks are all >= k0 >= 2
 * may use max(s, s_k0); a cell of rank 1 alone accepts every x (rank 1's
 * interval is exactly h(1) long).  At theta 0.99 this cuts the draws left to
 * the exact path from 1.6 % to 0.5 %.  Derivatives,
 * with g = log x, v = 1 + (1-theta) y = x^(1-theta), dy/dU = span:
 *   g' = span/v, g'' = -(1-theta) span^2/v^2, g''' = 2 (1-theta)^2 span^3/v^3
 *   x' = x g', x'' = x (g'^2 + g''), x''' = x (g'^3 + 3 g' g'' + g''')
 * x and v are monotone in U, so their extremes over a cell are at its ends. */
#include <math.h>
#include <stdlib.h>
#include "ycsb_gen.h"

#define CELLS (1u << YCSB_TRUEZIPF_CELL_BITS)
#define LOCAL_BITS (53 - YCSB_TRUEZIPF_CELL_BITS)
#define LOCAL_MASK ((UINT64_C(1) << LOCAL_BITS) - 1)
#define LOCAL_HALF (INT64_C(1) << (LOCAL_BITS - 1))
#define EPS 0x1p-53

static double expm1_over(double z)
{
    return z == 0.0 ? 1.0 : expm1(z) / z;
}

static double log1p_over(double z)
{
    return z == 0.0 ? 1.0 : log1p(z) / z;
}

double ycsb_truezipf_H(double theta, double x)
{
    double lx = log(x);
    return lx * expm1_over((1.0 - theta) * lx);
}

double ycsb_truezipf_Hinv(double theta, double y)
{
    /* theta > 1: y <= H(n + 1/2) < 1/(theta - 1) keeps z > -1, but z may
     * round to just below -1 there; -1 is x = infinity (rank n) */
    double z = (1.0 - theta) * y;
    if (z < -1.0)
        z = -1.0;
    return exp(y * log1p_over(z));
}

int64_t ycsb_truezipf_attempt_exact(const struct ycsb_truezipf *z, uint64_t a)
{
    double u = (double)a * EPS;
    double y = z->h_n + u * z->span;
    double x = ycsb_truezipf_Hinv(z->theta, y);
    double k = floor(x + 0.5);
    if (!(k >= 1.0))          /* also NaN, which the domain never produces */
        k = 1.0;
    if (k > (double)z->n)
        k = (double)z->n;
    if (k - x <= z->s || y >= ycsb_truezipf_H(z->theta, k + 0.5) - pow(k, -z->theta))
        return (int64_t)k;
    return 0;
}

static inline int64_t attempt(const struct ycsb_truezipf *z, uint64_t a)
{
    const struct ycsb_zipf_cell *c = &z->cells[a >> LOCAL_BITS];
    double w = (double)((int64_t)(a & LOCAL_MASK) - LOCAL_HALF) * EPS;
    double xa = c->c0 + w * (c->c1 + w * c->c2);
    /* usable cells keep xa inside (1/2, n + 1/2); unusable ones have
     * c = 0 and lo > hi, so xa = 0 and the test below fails */
    int64_t k = (int64_t)(xa + 0.5);
    double fr = xa - (double)k;
    if (fr >= c->lo && fr < c->hi)
        return k;
    return ycsb_truezipf_attempt_exact(z, a);
}

int64_t ycsb_truezipf_attempt(const struct ycsb_truezipf *z, uint64_t a)
{
    return attempt(z, a);
}

int64_t ycsb_truezipf_rank(const struct ycsb_truezipf *z, struct ycsb_rng *r)
{
    for (;;) {
        int64_t k = attempt(z, ycsb_rng_step(r) >> 11);
        if (k > 0)
            return k;
    }
}

int64_t ycsb_truezipf_next(const struct ycsb_truezipf *z, struct ycsb_rng *r)
{
    return z->base + (int64_t)ycsb_perm_apply(&z->perm, (uint64_t)(ycsb_truezipf_rank(z, r) - 1));
}

/* the cell for U in [u0, u0 + 2 hw), see the top of the file */
static void build_cell(const struct ycsb_truezipf *z, struct ycsb_zipf_cell *c, double u0,
                       double hw)
{
    const double t = z->theta, omt = z->omt, sp = fabs(z->span);
    double y_hi = z->h_n + u0 * z->span;                /* x is largest at the cell's start */
    double y_lo = z->h_n + (u0 + 2 * hw) * z->span;
    double y_m = z->h_n + (u0 + hw) * z->span;
    double x_hi = ycsb_truezipf_Hinv(t, y_hi), x_lo = ycsb_truezipf_Hinv(t, y_lo);
    double v_min = fmin(1.0 + omt * y_hi, 1.0 + omt * y_lo);
    double g_m = y_m * log1p_over(omt * y_m), x_m = exp(g_m), v_m = 1.0 + omt * y_m;
    double g1 = z->span / v_m, g2 = -omt * z->span * z->span / (v_m * v_m);
    /* |x'''| over the cell */
    double G1 = sp / v_min, G2 = fabs(omt) * sp * sp / (v_min * v_min);
    double G3 = 2.0 * omt * omt * sp * sp * sp / (v_min * v_min * v_min);
    double approx = x_hi * (G1 * G1 * G1 + 3.0 * G1 * G2 + G3) * hw * hw * hw / 6.0;
    /* rounding, in this table and in the exact path alike: y carries an
     * absolute error of ~EPS (|h_n| + |span|), which moves log x by that over
     * v; log1p, the products and exp a few ulps of log x; the polynomial's
     * evaluation a few ulps of x; the c1, c2 terms add their share */
    double g_max = fmax(fabs(log(x_hi)), fabs(log(x_lo)));
    double lin = G1 * hw;
    double num = x_hi * EPS * (2.0 * (fabs(z->h_n) + sp) / v_min + 8.0 * g_max + 16.0) *
                 (1.0 + lin + lin * lin);
    double err = 2.0 * approx + 2.0 * num;
    c->c0 = x_m;
    c->c1 = x_m * g1;
    c->c2 = x_m * (g1 * g1 + g2) / 2.0;
    if (!(err < 0.25) || !(x_lo - err > 0.5) || !(x_hi + err < (double)z->n + 0.5) ||
        !isfinite(c->c0) || !isfinite(c->c1) || !isfinite(c->c2)) {
        c->c0 = c->c1 = c->c2 = 0.0;   /* never decides: the exact path does */
        c->lo = 1.0f;
        c->hi = -1.0f;
        return;
    }
    /* the squeeze: k - x <= s_cell for the true x, i.e. xa - k >= err - s_cell */
    double k0 = floor(x_lo - err + 0.5), s_cell = z->s;
    if (k0 >= 2.0)
        s_cell = fmax(z->s, pow(1.0 - 0.5 / k0, t) - 0.5);
    else if (x_hi + err < 1.5)
        s_cell = 0.5;   /* rank 1 only: always accepted */
    double lo = err - s_cell, hi = 0.5 - err;
    /* as floats, rounded towards deciding less */
    c->lo = (float)lo;
    if ((double)c->lo < lo)
        c->lo = nextafterf(c->lo, 1.0f);
    c->hi = (float)hi;
    if ((double)c->hi > hi)
        c->hi = nextafterf(c->hi, -1.0f);
}

int ycsb_truezipf_init(struct ycsb_truezipf *z, int64_t min, int64_t max, double theta)
{
    z->base = min;
    z->n = max - min + 1;
    z->theta = theta;
    z->omt = 1.0 - theta;
    z->h_n = ycsb_truezipf_H(theta, (double)z->n + 0.5);
    z->h_x1 = ycsb_truezipf_H(theta, 1.5) - 1.0;
    z->span = z->h_x1 - z->h_n;
    z->s = 2.0 - ycsb_truezipf_Hinv(theta, ycsb_truezipf_H(theta, 2.5) - pow(2.0, -theta));
    ycsb_perm_init(&z->perm, (uint64_t)z->n, YCSB_TRUEZIPF_PERM_KEY);
    z->cells = malloc(CELLS * sizeof(*z->cells));
    if (z->cells == NULL)
        return -1;
    const double hw = 0.5 / CELLS;
    for (unsigned j = 0; j < CELLS; j++)
        build_cell(z, &z->cells[j], (double)j / CELLS, hw);
    return 0;
}

void ycsb_truezipf_destroy(struct ycsb_truezipf *z)
{
    free(z->cells);
    z->cells = NULL;
}
