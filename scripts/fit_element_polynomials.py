#!/usr/bin/env python3
"""Fits the coefficients of core/vectorisable_math.h and checks them as float32 evaluates them.

    python3 scripts/fit_element_polynomials.py      # numpy only

erf(x) = x * P(s) / Q(s), s = x^2 / 16, |x| <= 3.925 (beyond it erf rounds to +-1 in float):
a rational fit of erf(x)/x, P of degree 5, Q of degree 5 with Q(0) = 1. exp(r) = 1 + r +
r^2 * E(r) on |r| <= ln(2)/2, E of degree 4. Both fits minimise the largest relative error
by reweighted least squares (Lawson's iteration), in double; the script then rounds the
coefficients to float32, evaluates the formulas in float32 exactly as the header does (no
fused multiply-add) and prints the largest distance in ulps from the correctly rounded value.
"""
import math
import re

import numpy as np

ERF_LIMIT = 3.925


def lawson(design, target, weight_of_error, iterations=40):
    weights = np.ones(len(target))
    for _ in range(iterations):
        scaled = weights * weight_of_error
        coefficients, *_ = np.linalg.lstsq(design * scaled[:, None], target * scaled, rcond=None)
        error = np.abs(design @ coefficients - target) * weight_of_error
        weights = weights * np.maximum(error / error.max(), 1e-3) ** 0.5
    return coefficients, error.max()


def fit_erf(p_degree=5, q_degree=5):
    x = np.linspace(1e-4, ERF_LIMIT, 20000)
    s = x * x / 16
    f = np.array([math.erf(v) for v in x]) / x
    q_previous = np.ones_like(x)
    for _ in range(30):  # linearised: P(s) - f * (Q(s) - 1) = f, weighted by 1 / (f * Q)
        design = np.hstack([np.vstack([s**k for k in range(p_degree + 1)]).T,
                            -(f[:, None] * np.vstack([s**k for k in range(1, q_degree + 1)]).T)])
        coefficients, error = lawson(design, f, 1 / (f * q_previous), 10)
        p = coefficients[:p_degree + 1]
        q = np.concatenate([[1.0], coefficients[p_degree + 1:]])
        q_previous = np.polyval(q[::-1], s)
    return p.astype(np.float32), q.astype(np.float32)


def fit_exp(degree=6):
    half_ln2 = math.log(2) / 2
    r = np.cos(np.linspace(0, math.pi, 4000)) * half_ln2
    f = np.exp(r)
    design = np.vstack([r**k for k in range(2, degree + 1)]).T
    coefficients, _ = lawson(design, f - 1 - r, 1 / f)
    return coefficients.astype(np.float32)


def horner(coefficients, x):
    result = np.full_like(x, coefficients[-1])
    for c in coefficients[-2::-1]:
        result = (result * x + c).astype(np.float32)
    return result


def float_erf(x, p, q):
    clamped = np.clip(x, np.float32(-ERF_LIMIT), np.float32(ERF_LIMIT))
    s = (clamped * clamped).astype(np.float32) * np.float32(0.0625)
    r = (clamped * horner(p, s)).astype(np.float32) / horner(q, s)
    return np.clip(r.astype(np.float32), np.float32(-1), np.float32(1))


def float_exp(x, e):
    x = np.clip(x, np.float32(-110), np.float32(89))
    magic = np.float32(12582912.0)  # 1.5 * 2^23: adding it rounds to an integer
    n = ((x * np.float32(1.44269504088896341) + magic).astype(np.float32) - magic).astype(np.float32)
    r = ((x - n * np.float32(0.693145751953125)).astype(np.float32) - n * np.float32(1.428606765330187e-06))
    r = r.astype(np.float32)
    polynomial = ((horner(e, r) * r).astype(np.float32) * r + r).astype(np.float32) + np.float32(1)
    k = n.astype(np.int64)
    half = k >> 1
    scale_1 = ((half + 127) << 23).astype(np.uint32).view(np.float32)
    scale_2 = ((k - half + 127) << 23).astype(np.uint32).view(np.float32)
    return ((polynomial * scale_1).astype(np.float32) * scale_2).astype(np.float32)


def ulps(a, b):
    return np.abs(a.view(np.int32).astype(np.int64) - b.view(np.int32).astype(np.int64))


def main():
    p, q = fit_erf()
    e = fit_exp()
    for name, values in (("erf P", p), ("erf Q", q), ("exp E", e)):
        print(name, ", ".join(re.sub(r"0+p", "p", float(v).hex()) + "f" for v in values))
    rng = np.random.default_rng(0)
    x = np.concatenate([np.linspace(0, 5, 2_000_000, dtype=np.float32),
                        np.float32(10) ** rng.uniform(-40, 0, 500_000).astype(np.float32)])
    x = np.concatenate([x, -x])
    reference = np.array([math.erf(v) for v in x.astype(np.float64)]).astype(np.float32)
    print("erf: largest error", ulps(float_erf(x, p, q), reference).max(), "ulps")
    x = np.linspace(-110, 89, 3_000_000, dtype=np.float32)
    with np.errstate(over="ignore"):
        reference = np.exp(x.astype(np.float64)).astype(np.float32)
        print("exp: largest error", ulps(float_exp(x, e), reference).max(), "ulps")


if __name__ == "__main__":
    main()
