"""Statistics for two sets of runs, standard library only.

- Welch's t-test (unequal variances): the p-value from Student's t
  distribution via the regularized incomplete beta function (a continued
  fraction, as in Numerical Recipes' betacf), checked against published
  tables in tests/http/test_500_compare_honesty.py.
- A percentile bootstrap 95% confidence interval of the difference of the
  means (new - base), with a fixed seed so that a report is reproducible.
- The kernel test robot's rule (lkp-tests' compare): the two sets of runs
  do not overlap, and the change is at least a minimum ratio.

A change is called beyond noise only when the robot's rule AND the sound
test agree: p < alpha and the confidence interval excludes zero.
"""

import math
import random

ALPHA = 0.05
MIN_CHANGE = 0.01
BOOTSTRAP = 4000


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def stdev(xs):
    """Sample standard deviation (n - 1)."""
    n = len(xs)
    if n < 2:
        return 0.0
    m = mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))


def median(xs):
    s = sorted(xs)
    n = len(s)
    if n == 0:
        return float("nan")
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2.0


def _betacf(a, b, x):
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        de = d * c
        h *= de
        if abs(de - 1.0) < 1e-15:
            break
    return h


def betainc(a, b, x):
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
           + a * math.log(x) + b * math.log(1.0 - x))
    bt = math.exp(lbt)
    if x < (a + 1.0) / (a + b + 2.0):
        return bt * _betacf(a, b, x) / a
    return 1.0 - bt * _betacf(b, a, 1.0 - x) / b


def t_two_sided_p(t, df):
    """P(|T| >= |t|) for Student's t with @df degrees of freedom."""
    if math.isnan(t) or df <= 0:
        return float("nan")
    if math.isinf(t):
        return 0.0
    return betainc(df / 2.0, 0.5, df / (df + t * t))


def welch(a, b):
    """Welch's t-test of mean(b) - mean(a): (t, df, p). Needs two values a side.

    Both sides without spread: p = 1 if the means are equal, else 0 (the
    figure is deterministic, as callgrind's instruction counts are)."""
    na, nb = len(a), len(b)
    if na < 2 or nb < 2:
        return float("nan"), float("nan"), float("nan")
    ma, mb = mean(a), mean(b)
    va, vb = stdev(a) ** 2, stdev(b) ** 2
    se2 = va / na + vb / nb
    if se2 <= 0.0:
        if ma == mb:
            return 0.0, float("inf"), 1.0
        return math.copysign(float("inf"), mb - ma), float("inf"), 0.0
    t = (mb - ma) / math.sqrt(se2)
    df = se2 ** 2 / ((va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1))
    return t, df, t_two_sided_p(t, df)


def bootstrap_ci(a, b, level=0.95, n=BOOTSTRAP, seed=1):
    """Percentile bootstrap CI of mean(b) - mean(a), each side resampled on its own."""
    if not a or not b:
        return float("nan"), float("nan")
    rnd = random.Random(seed)
    na, nb = len(a), len(b)
    diffs = []
    for _ in range(n):
        sa = sum(a[rnd.randrange(na)] for _ in range(na)) / na
        sb = sum(b[rnd.randrange(nb)] for _ in range(nb)) / nb
        diffs.append(sb - sa)
    diffs.sort()
    lo = diffs[int(math.floor((1.0 - level) / 2.0 * n))]
    hi = diffs[min(n - 1, int(math.ceil((1.0 + level) / 2.0 * n)) - 1)]
    return lo, hi


def robot_rule(a, b, min_change=MIN_CHANGE, min_abs=0.0):
    """lkp's rule: the runs do not overlap and |change| >= @min_change of the base
    (and, for counts per request, |difference| >= @min_abs)."""
    if not a or not b:
        return False
    ma = mean(a)
    change = (mean(b) - ma) / abs(ma) if ma else (float("inf") if mean(b) else 0.0)
    disjoint = max(a) < min(b) or max(b) < min(a)
    return disjoint and abs(change) >= min_change and abs(mean(b) - ma) >= min_abs


def compare(a, b, alpha=ALPHA, min_change=MIN_CHANGE, seed=1, min_abs=0.0):
    """Everything the report prints about one metric, base @a vs new @b."""
    a = [float(x) for x in a if x is not None and not math.isnan(x)]
    b = [float(x) for x in b if x is not None and not math.isnan(x)]
    ma, mb = mean(a), mean(b)
    sa, sb = stdev(a), stdev(b)
    out = {
        "base": a, "new": b, "base_mean": ma, "new_mean": mb,
        "base_stddev": sa, "new_stddev": sb,
        "base_stddev_pct": 100.0 * sa / abs(ma) if a and ma else 0.0,
        "new_stddev_pct": 100.0 * sb / abs(mb) if b and mb else 0.0,
        "diff": mb - ma if a and b else float("nan"),
        "change_pct": (100.0 * (mb - ma) / abs(ma)) if a and b and ma else
                      (0.0 if a and b and mb == ma else float("nan")),
    }
    t, df, p = welch(a, b)
    lo, hi = bootstrap_ci(a, b, seed=seed)
    robot = robot_rule(a, b, min_change, min_abs)
    sound = (not math.isnan(p)) and p < alpha and (lo > 0 or hi < 0)
    if len(a) >= 2 and len(b) >= 2 and sa == 0 and sb == 0:
        # Deterministic figures: no interval to speak of, the test decides.
        sound = p < alpha
    out.update({"t": t, "df": df, "p": p, "ci95": [lo, hi], "robot": robot, "sound": sound,
                "significant": robot and sound, "alpha": alpha, "min_change": min_change,
                "min_abs": min_abs})
    return out


def fmt_p(p):
    if p is None or math.isnan(p):
        return "   n/a"
    if p < 1e-4:
        return "<1e-4"
    return "%.4f" % p
