/* Pearson's chi-square p-value for the unit tests: P(X >= x) for X ~ chi^2
 * with df degrees of freedom = Q(df/2, x/2), the regularized upper incomplete
 * gamma function, by its power series (x < a + 1) or its continued fraction
 * evaluated with the modified Lentz method (the textbook pair, e.g. Press et
 * al., Numerical Recipes, 3rd ed., §6.2). */
#ifndef YCSB_TEST_CHISQ_H
#define YCSB_TEST_CHISQ_H

#include <math.h>

static inline double gamma_q(double a, double x)
{
    if (x <= 0)
        return 1.0;
    double lead = exp(-x + a * log(x) - lgamma(a));
    if (x < a + 1.0) {
        /* P = lead * sum_{n>=0} x^n / (a (a+1) ... (a+n)) */
        double term = 1.0 / a, sum = term;
        for (int n = 1; n < 10000000; n++) {
            term *= x / (a + n);
            sum += term;
            if (term < sum * 1e-16)
                break;
        }
        return 1.0 - lead * sum;
    }
    /* Q = lead / (x + 1 - a - 1(1-a)/(x + 3 - a - 2(2-a)/(x + 5 - a - ...))) */
    const double tiny = 1e-300;
    double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
    for (int i = 1; i < 10000000; i++) {
        double an = -i * (i - a);
        b += 2.0;
        d = an * d + b;
        if (fabs(d) < tiny)
            d = tiny;
        c = b + an / c;
        if (fabs(c) < tiny)
            c = tiny;
        d = 1.0 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1.0) < 1e-16)
            break;
    }
    return lead * h;
}

static inline double chisq_pvalue(double x, double df)
{
    return gamma_q(df / 2.0, x / 2.0);
}

#endif
