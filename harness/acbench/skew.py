"""The skew a cell really had, measured from its request trace.

`measured_skew(keys, n_keys)` takes the key ids (0 .. n_keys-1) of the read and write requests
of a measured window and the size of the key space (YCSB's recordcount) and returns

- ``skew_top1_share`` / ``skew_top10_share``: share of the requests that went to the top
  ceil(1 % * n_keys) / ceil(10 % * n_keys) keys by request count (keys never requested count as
  zero-count keys, so a uniform trace gives ~0.01 / ~0.10),
- ``skew_fitted_theta``: the θ of a Zipf(θ) over n_keys ranks that explains the trace (below),
- ``skew_requests`` (N) and ``skew_distinct_keys``.

Fitting θ
---------
Model: request i hits the key of rank r with probability r^-θ / H(n, θ),
H(n, θ) = sum_{r=1..n} r^-θ, the rank -> key map unknown. With keys ranked by observed count
(descending; ties in any order; unrequested keys last) and c_r the count at rank r, the
log-likelihood is (the discrete power-law likelihood of Clauset, Shalizi & Newman, "Power-law
distributions in empirical data", SIAM Review 51(4), 2009, section 3.1: L(α) = -n ln ζ(α, x_min)
- α sum ln x_i, here with x_min = 1 and the finite support 1..n, ζ -> H(n, θ), as in Hanel et al.,
"Fitting power-laws in empirical data with estimators that work for all exponents", PLoS ONE
12(2), 2017)

    L(θ) = -θ S - N ln H(n, θ),   S = sum_r c_r ln r,
    dL/dθ = -S + N E_θ[ln r],      d²L/dθ² = -N Var_θ[ln r] < 0,

where E_θ / Var_θ are the mean / variance of ln r under Zipf(θ). L is concave, so the maximum
on [0, 10] is the root of E_θ[ln r] = S / N (clamped to the ends); E_θ[ln r] decreases in θ.
`zipf_theta_ranked_mle` solves it by safeguarded Newton (bisection fallback) to 1e-7. The
weights r^-θ are <= 1 with the largest (1) at r = 1, so H >= 1 and plain float64 neither
overflows nor loses the dominant terms at large θ (tiny terms underflow harmlessly): no
log-sum-exp is needed.

This "ranked MLE" is the joint MLE of θ and the rank -> key permutation, and it is biased
upward when counts are noisy: ranking by *observed* counts sorts the Poisson noise into a
decreasing profile, so a uniform trace looks skewed (order-statistic bias). Measured bias,
fitted - true, n = 10^5 keys, exact Zipf(θ) traces (`zipf_trace`), mean of 3 seeds (std <= 0.0002
except at θ = 0: 0.005 with 10^6 draws, 0.002 with 10^7):

    θ       plain MLE            final (below)        split-half (rejected)
            10^6      10^7       10^6      10^7       10^6      10^7 draws
    0       +0.2276   +0.0838    +0.0037   +0.0013    +0.0006   +0.0004
    0.25    +0.0660   +0.0095    -0.0004   +0.0000    -0.0717   -0.0148
    0.5     +0.0196   +0.0025    -0.0010   -0.0001    -0.0267   -0.0042
    0.75    +0.0061   +0.0007    -0.0004   -0.0001    -0.0087   -0.0013
    0.99    +0.0029   +0.0004    -0.0003   -0.0001    -0.0041   -0.0006
    1.0     +0.0029   +0.0004    -0.0003   -0.0001    -0.0038   -0.0006
    1.2     +0.0025   +0.0004    -0.0004   -0.0001    -0.0036   -0.0006

(`python3 -m acbench.skew` reprints the plain and final columns.) The plain estimator misses
±0.02 at θ <= 0.5 with 10 requests per key, so the reported θ is a bias-corrected one.

Rejected fix (split-half, measured with a prototype): split the trace into two halves, rank the
keys by the counts of one half and evaluate S on the other (tied keys get their tie group's
mean ln-rank, the expectation over random tie-breaking), pooled both ways. It removes the
order-statistic bias (uniform -> +0.001), but ranks taken from noisy half-counts regress to the
mean: an attenuation bias of its own, -0.072 at θ 0.25 (table). Not good enough at low θ.

Final estimator (``skew_fitted_theta``, `zipf_theta`): simulation-based bias correction
(indirect inference: Gouriéroux, Monfort & Renault, "Indirect inference", J. Applied
Econometrics 8, 1993; cf. the iterated-bootstrap bias correction of Kuk, "Asymptotically
unbiased estimation in generalized linear models with random effects", JRSS B 57, 1995).
The ranked statistic m = S / N stays the auxiliary statistic, and θ is chosen so that traces of
the same N requests over the same n keys drawn from Zipf(θ) have, in expectation, the same
ranked statistic: F(θ) = E[m(multinomial(N, p(θ)))] = m_observed. F is estimated by K
fixed-seed simulations (K = clamp(2^18 // n, 1, 16); the same seeds at every θ, so the result
is deterministic) and the decreasing F is solved by bracketing (start: the plain fit minus its
simulated bias) and the Illinois variant of regula falsi, to ~1e-4 in θ (4-9 evaluations).
Nothing is ranked on held-out data, so there is no attenuation; what remains is the noise of m.

Resolution near θ = 0: with the permutation unknown, keys are exchangeable and a trace only
shows the spread of the per-key rates, which grows like θ² (Var ln r ~ 1 over uniform ranks).
Even the optimal over-dispersion test (sum (c - mean)² / mean, sd sqrt(2n) under uniform)
needs n λ θ² ~ sqrt(2n), i.e. θ ~ (2/n)^(1/4) / sqrt(λ) ~ 0.02 for n = 10^5, λ = N/n = 10.
Measured on uniform traces (20 seeds): λ = 10 -> θ 0 .. 0.027 (mean 0.007, 12 of 20 exactly
0); λ = 100 -> 0 .. 0.010 (mean 0.001).

The model assumes i.i.d. requests. For traces that are not Zipf-shaped (YCSB's scrambled
zipfian hashes ranks of a 10^10-item Zipf onto the keys; hotspot; latest) θ is the Zipf
exponent with the same ranked log-rank statistic; the top-1 % / top-10 % shares are model-free.

Cost (2 shared cores, load ~3): 10^7 requests over 10^6 keys take 0.5-1.4 s (counting 0.07 s;
~0.1 s per simulated F(θ); most at θ < 0.3, where the root is flattest). The rank tables
(ln r and its prefix sums, 16 bytes per key) are cached for the last n.
"""
from __future__ import annotations

import math
import sys
import time
from typing import Sequence

import numpy as np

THETA_MAX = 10.0
SIM_SEED = 0x5EED_2E7A  # fixed: measured_skew is deterministic for a given trace
_NEWTON_TOL = 1e-7
_THETA_TOL = 1e-4
_SIM_CATEGORIES = 1 << 18  # simulations per F(θ) evaluation: K = clamp(2^18 // n, 1, 16)

__all__ = ["measured_skew", "key_counts", "top_share", "zipf_theta_ranked_mle", "zipf_theta",
           "zipf_trace", "bias_table", "THETA_MAX"]


class _Ranks:
    """ln r (r = 1..n) and its prefix sums: cum[j] = sum_{r<=j} ln r = ln j!."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.lnr = np.log(np.arange(1, n + 1, dtype=np.float64))
        self.cum = np.concatenate(([0.0], np.cumsum(self.lnr)))
        self._ends: tuple[float, float] | None = None

    def mean_lnr_at_ends(self) -> tuple[float, float]:
        """(E_0[ln r], E_THETA_MAX[ln r]), cached: the range of E_θ[ln r] on [0, THETA_MAX]."""
        if self._ends is None:
            self._ends = (float(self.cum[-1]) / self.n, self.moments(THETA_MAX)[0])
        return self._ends

    def moments(self, theta: float) -> tuple[float, float]:
        """(E_θ[ln r], Var_θ[ln r]) under Zipf(θ) over 1..n; weights r^-θ <= 1, H >= 1."""
        w = np.exp(-theta * self.lnr)
        h = float(w.sum())
        wl = w * self.lnr
        e1 = float(wl.sum()) / h
        e2 = float(wl @ self.lnr) / h
        return e1, max(e2 - e1 * e1, 0.0)


_RANKS_CACHE: list[_Ranks] = []


def _ranks(n: int) -> _Ranks:
    if _RANKS_CACHE and _RANKS_CACHE[0].n == n:
        return _RANKS_CACHE[0]
    _RANKS_CACHE[:] = [_Ranks(n)]
    return _RANKS_CACHE[0]


def key_counts(keys: Sequence[int] | np.ndarray, n_keys: int) -> np.ndarray:
    """Requests per key id (int64, length n_keys); validates the trace and the key space."""
    if isinstance(n_keys, bool) or not isinstance(n_keys, (int, np.integer)) or n_keys < 1:
        raise ValueError(f"n_keys={n_keys!r} is not accepted; accepted: an integer >= 1, the size "
                         "of the key space (recordcount, plus inserted keys)")
    n_keys = int(n_keys)
    arr = np.asarray(keys)
    if arr.ndim != 1:
        raise ValueError(f"keys has shape {arr.shape}; accepted: a 1-D array of integer key ids "
                         f"0..n_keys-1")
    if arr.size == 0:
        raise ValueError("the trace is empty; accepted: at least one request (key ids 0..n_keys-1)")
    if arr.dtype.kind not in "iu":
        raise ValueError(f"keys has dtype {arr.dtype}; accepted: integer key ids 0..n_keys-1 "
                         "(uint64 as in ACTRACE)")
    lo, hi = (0 if arr.dtype.kind == "u" else int(arr.min())), int(arr.max())
    if lo < 0:
        raise ValueError(f"key id {lo} is negative; accepted: key ids 0..n_keys-1")
    if hi >= n_keys:
        distinct = int(np.unique(arr).size)
        if distinct > n_keys:
            raise ValueError(f"n_keys={n_keys} is smaller than the trace's {distinct} distinct keys; "
                             "accepted: n_keys >= distinct keys, with key ids 0..n_keys-1")
        raise ValueError(f"key id {hi} >= n_keys={n_keys}; accepted: key ids 0..n_keys-1 (pass the "
                         "key space size, e.g. recordcount + inserted keys, or remap arbitrary ids "
                         "with np.unique(keys, return_inverse=True)[1])")
    if arr.dtype.kind == "u" and arr.dtype.itemsize == 8:
        arr = arr.view(np.int64)  # exact (all ids < n_keys < 2^63), no copy; bincount needs intp
    return np.bincount(arr, minlength=n_keys).astype(np.int64, copy=False)


def top_share(counts: np.ndarray, percent: int) -> float:
    """Share of all requests going to the top ceil(percent % * n) keys by count (n = len(counts))."""
    n = len(counts)
    total = int(counts.sum())
    if total <= 0:
        raise ValueError("no requests; accepted: counts with a positive total")
    k = -(-n * percent // 100)  # exact integer ceil(percent/100 * n)
    top = np.partition(counts, n - k)[n - k:] if k < n else counts
    return int(top.sum()) / total


def _ranked_stat(counts: np.ndarray, ranks: _Ranks) -> float:
    """m = S / N, S = sum_r c_r ln r with keys ranked by count (descending). O(n), no sort:
    the keys with count v take ranks a_v+1 .. a_v+g_v (a_v = #keys with count > v, g_v = #keys
    with count v), contributing v * (ln (a_v+g_v)! - ln a_v!)."""
    n = len(counts)
    if int(counts.max()) <= 4 * n + 1024:
        g = np.bincount(counts)
        v = np.flatnonzero(g)  # the count values present, ascending
        gv = g[v]
    else:  # a few very large counts: sort (O(n log n)) rather than a table of max-count entries
        v, gv = np.unique(counts, return_counts=True)
    above = n - np.cumsum(gv)  # keys with a larger count
    s = float(v.astype(np.float64) @ (ranks.cum[above + gv] - ranks.cum[above]))
    return s / float(counts.sum())


def _solve_mean_lnr(m: float, ranks: _Ranks, start: float = 1.0) -> float:
    """The root of E_θ[ln r] = m on [0, THETA_MAX] (clamped): the maximiser of the concave L."""
    if ranks.n == 1:
        return 0.0  # one key: every θ gives the same distribution
    e_lo, e_hi = ranks.mean_lnr_at_ends()
    if m >= e_lo:
        return 0.0
    if m <= e_hi:
        return THETA_MAX
    lo, hi, th = 0.0, THETA_MAX, min(max(start, 0.0), THETA_MAX)
    for _ in range(200):
        e, var = ranks.moments(th)
        if e > m:
            lo = th  # θ too small: the model is flatter than the trace
        else:
            hi = th
        nxt = th + (e - m) / var if var > 0 else 0.5 * (lo + hi)
        if not lo < nxt < hi:
            nxt = 0.5 * (lo + hi)
        if abs(nxt - th) < _NEWTON_TOL or hi - lo < _NEWTON_TOL:
            return nxt
        th = nxt
    return th


def zipf_theta_ranked_mle(counts: np.ndarray) -> float:
    """The plain MLE of θ over len(counts) ranks, keys ranked by observed count (biased up)."""
    ranks = _ranks(len(counts))
    return _solve_mean_lnr(_ranked_stat(counts, ranks), ranks)


def _zipf_p(theta: float, ranks: _Ranks) -> np.ndarray:
    p = np.exp(-theta * ranks.lnr)
    return p / p.sum()


def _sim_stat(theta: float, total: int, ranks: _Ranks, sims: int) -> float:
    """F(θ): mean ranked statistic of `sims` fixed-seed multinomial traces of `total` requests."""
    p = _zipf_p(theta, ranks)
    acc = 0.0
    for k in range(sims):
        rng = np.random.default_rng([SIM_SEED, k])
        acc += _ranked_stat(rng.multinomial(total, p), ranks)
    return acc / sims


def zipf_theta(counts: np.ndarray) -> float:
    """Bias-corrected θ (indirect inference on the ranked statistic; see the module docstring)."""
    n = len(counts)
    total = int(counts.sum())
    if total <= 0:
        raise ValueError("no requests; accepted: counts with a positive total")
    if n == 1:
        return 0.0
    ranks = _ranks(n)
    m_obs = _ranked_stat(counts, ranks)
    plain = _solve_mean_lnr(m_obs, ranks)
    if plain == 0.0:
        return 0.0  # m_obs >= E_0[ln r] >= F(0): sorting makes any simulated m <= E_0[ln r]
    sims = min(16, max(1, _SIM_CATEGORIES // n))

    def g(th: float) -> float:
        """F(θ) - m_observed: decreasing in θ (up to simulation noise)."""
        return _sim_stat(th, total, ranks, sims) - m_obs

    # Bracket the root. First guess: the plain fit minus its bias there, in θ units
    # (bias = the plain fit of the simulated traces at θ_plain, minus θ_plain), overshot by half;
    # then secant extrapolation with at least doubling steps, clamped to [0, THETA_MAX].
    a, g_a = plain, g(plain)
    if g_a == 0.0:  # e.g. one request: F is flat, any θ fits; take 0 if uniform already does
        return 0.0 if g(0.0) <= 0 else plain
    bias = _solve_mean_lnr(m_obs + g_a, ranks, start=plain) - plain
    b = min(max(plain - 1.5 * bias, 0.0), THETA_MAX)
    step = abs(b - a)
    for _ in range(64):
        g_b = g(b)
        if g_b == 0.0:
            return b
        if (g_b > 0) != (g_a > 0):
            break
        if g_b > 0 and b == THETA_MAX:
            return THETA_MAX
        if g_b <= 0 and b == 0.0:
            return 0.0  # a simulated uniform trace is at least as skewed as this one
        slope = (g_b - g_a) / (b - a) if b != a else 0.0
        step = max(2.0 * step, 1.5 * abs(g_b / slope) if slope < 0 else 0.0, _THETA_TOL)
        a, g_a = b, g_b
        b = min(max(b + step if g_b > 0 else b - step, 0.0), THETA_MAX)
    # Illinois regula falsi between a and b (g of opposite signs; a < b not assumed), in the
    # variable u = θ^2: near θ = 0 the ranked statistic moves with θ^2 (see the docstring), so
    # g is close to linear in u there; farther out the Illinois step handles the curvature.
    # Stops when the step or the bracket is below 1e-4 in θ (about the simulation noise).
    side = 0
    ua, ub = a * a, b * b
    for _ in range(100):
        if abs(b - a) < _THETA_TOL:
            return 0.5 * (a + b)
        uc = ub - g_b * (ub - ua) / (g_b - g_a)
        c = math.sqrt(max(uc, 0.0))
        g_c = g(c)
        if g_c == 0.0 or abs(c - b) < 0.5 * _THETA_TOL:
            return c
        if (g_c > 0) == (g_b > 0):
            if side == 1:
                g_a *= 0.5
            side = 1
        else:
            a, g_a, ua = b, g_b, ub
            side = -1
        b, g_b, ub = c, g_c, uc
    return 0.5 * (a + b)


def measured_skew(keys: np.ndarray, n_keys: int) -> dict[str, float]:
    """Top-1 %/top-10 % shares, fitted Zipf θ, request and distinct-key counts of a trace.

    keys: key ids 0..n_keys-1 of the measured window's read and write requests (any integer
    dtype; uint64 as in ACTRACE); n_keys: size of the key space (recordcount, plus inserted keys).
    """
    counts = key_counts(keys, n_keys)
    return {
        "skew_top1_share": top_share(counts, 1),
        "skew_top10_share": top_share(counts, 10),
        "skew_fitted_theta": zipf_theta(counts),
        "skew_requests": float(int(counts.sum())),
        "skew_distinct_keys": float(int(np.count_nonzero(counts))),
    }


def zipf_trace(n: int, theta: float, draws: int, seed: int) -> np.ndarray:
    """`draws` i.i.d. requests from an exact Zipf(θ) over n keys (inverse CDF, then a random
    rank -> key permutation), as uint64 key ids 0..n-1."""
    rng = np.random.default_rng(seed)
    cdf = np.cumsum(_zipf_p(theta, _ranks(n)))
    cdf /= cdf[-1]
    ranks = np.minimum(np.searchsorted(cdf, rng.random(draws), side="right"), n - 1)
    return rng.permutation(n).astype(np.uint64)[ranks]


def bias_table(n: int = 10**5, draws: Sequence[int] = (10**6, 10**7),
               thetas: Sequence[float] = (0.0, 0.25, 0.5, 0.75, 0.99, 1.0, 1.2),
               seeds: Sequence[int] = (0, 1, 2)) -> list[tuple[float, int, float, float, float, float]]:
    """(θ, draws, plain bias, plain std, final bias, final std) over `seeds` (fitted - true)."""
    out = []
    for d in draws:
        for th in thetas:
            plain, final = [], []
            for s in seeds:
                c = key_counts(zipf_trace(n, th, d, s), n)
                plain.append(zipf_theta_ranked_mle(c) - th)
                final.append(zipf_theta(c) - th)
            out.append((th, d, float(np.mean(plain)), float(np.std(plain)),
                        float(np.mean(final)), float(np.std(final))))
    return out


def _main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 10**5
    print(f"fitted - true, n = {n} keys, mean (std) of 3 seeds")
    print(f"{'theta':>6} {'draws':>9} {'plain':>16} {'final':>16}")
    for th, d, pb, ps, fb, fs in bias_table(n):
        print(f"{th:6g} {d:9d} {pb:+8.4f} ({ps:.4f}) {fb:+8.4f} ({fs:.4f})", flush=True)
    keys = zipf_trace(10**6, 0.99, 10**7, 7)
    t = time.perf_counter()
    res = measured_skew(keys, 10**6)
    print(f"10^7 requests over 10^6 keys (θ 0.99): {time.perf_counter() - t:.2f} s, {res}")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
