"""Charts: small ones in the terminal and SVG files, no plotting library needed.

term_chart draws a metric's value per round, the base side as `*` and the
new side as `O` (`@` where both fall in the same cell), like the plots of
the kernel test robot's reports. svg_chart writes a plain SVG line chart
that any browser shows.
"""

import html
import math

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
MARKS = ["*", "O", "+", "x", "#", "%"]


def nice_num(v):
    if v == 0 or math.isnan(v):
        return "0"
    if float(v).is_integer() and abs(v) < 1e6:
        return "%d" % v
    a = abs(v)
    if a >= 1e6:
        return "%.3gM" % (v / 1e6)
    if a >= 1e4:
        return "%.0f" % v
    if a >= 100:
        return "%.1f" % v
    if a >= 1:
        return "%.3f" % v
    return "%.4g" % v


def term_chart(title, series, height=8, col_w=5):
    """@series: [(label, [value per round])]; the first is the base. Returns lines."""
    vals = [v for _l, vs in series for v in vs if v is not None and not math.isnan(v)]
    if not vals:
        return []
    lo, hi = min(vals), max(vals)
    if hi == lo:
        pad = abs(hi) * 0.01 or 1.0
        lo, hi = lo - pad, hi + pad
    rounds = max(len(vs) for _l, vs in series)
    width = rounds * col_w
    grid = [[" "] * width for _ in range(height)]
    for si, (_label, vs) in enumerate(series):
        for r, v in enumerate(vs):
            if v is None or math.isnan(v):
                continue
            row = height - 1 - int(round((v - lo) / (hi - lo) * (height - 1)))
            col = r * col_w + col_w // 2
            cell = grid[row][col]
            grid[row][col] = MARKS[si % len(MARKS)] if cell == " " else "@"
    labw = max(len(nice_num(hi)), len(nice_num(lo)))
    legend = "  ".join("%s %s" % (MARKS[i % len(MARKS)], l) for i, (l, _v) in enumerate(series))
    lines = ["  %s   (%s)" % (title, legend)]
    for i, row in enumerate(grid):
        if i == 0:
            lab = nice_num(hi)
        elif i == height - 1:
            lab = nice_num(lo)
        else:
            lab = ""
        lines.append("  %*s |%s|" % (labw, lab, "".join(row)))
    lines.append("  %*s +%s+" % (labw, "", "-" * width))
    axis = "".join(("%d" % (r + 1)).center(col_w) for r in range(rounds))
    lines.append("  %*s  %s  round" % (labw, "", axis))
    return lines


def svg_chart(path, title, xlabel, ylabel, series, xticks=None, w=640, h=380):
    """@series: [(label, [(x, y)])]; writes an SVG line chart to @path."""
    pts = [(x, y) for _l, s in series for x, y in s
           if y is not None and not math.isnan(y)]
    if not pts:
        return None
    x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
    y0, y1 = min(p[1] for p in pts), max(p[1] for p in pts)
    if x1 == x0:
        x0, x1 = x0 - 1, x1 + 1
    pad = (y1 - y0) * 0.08 or (abs(y1) * 0.02 or 1.0)
    y0, y1 = y0 - pad, y1 + pad
    if y0 < 0 <= min(p[1] for p in pts):
        y0 = 0.0
    ml, mr, mt, mb = 70, 20, 36 + 16 * len(series), 50
    pw, ph = w - ml - mr, h - mt - mb

    def sx(x):
        return ml + (x - x0) / (x1 - x0) * pw

    def sy(y):
        return mt + ph - (y - y0) / (y1 - y0) * ph

    e = html.escape
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="12">' % (w, h),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="22" font-size="14" font-weight="bold">%s</text>' % (ml, e(title))]
    for i in range(6):
        yv = y0 + (y1 - y0) * i / 5
        yy = sy(yv)
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>'
                   % (ml, yy, ml + pw, yy))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>'
                   % (ml - 6, yy + 4, e(nice_num(yv))))
    ticks = xticks or sorted({p[0] for p in pts})
    for xv in ticks:
        xx = sx(xv)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#999"/>'
                   % (xx, mt + ph, xx, mt + ph + 4))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>'
                   % (xx, mt + ph + 18, e(nice_num(xv))))
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>'
               % (ml, mt, pw, ph))
    out.append('<text x="%d" y="%d" text-anchor="middle">%s</text>'
               % (ml + pw // 2, h - 10, e(xlabel)))
    out.append('<text x="14" y="%d" transform="rotate(-90 14 %d)" text-anchor="middle">%s'
               '</text>' % (mt + ph // 2, mt + ph // 2, e(ylabel)))
    for si, (label, s) in enumerate(series):
        c = COLORS[si % len(COLORS)]
        good = [(x, y) for x, y in s if y is not None and not math.isnan(y)]
        if len(good) > 1:
            out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' % (
                c, " ".join("%.1f,%.1f" % (sx(x), sy(y)) for x, y in good)))
        for x, y in good:
            if si % 2 == 0:
                out.append('<circle cx="%.1f" cy="%.1f" r="4" fill="%s"/>' % (sx(x), sy(y), c))
            else:
                out.append('<rect x="%.1f" y="%.1f" width="8" height="8" fill="none" '
                           'stroke="%s" stroke-width="2"/>' % (sx(x) - 4, sy(y) - 4, c))
        ly = 44 + 16 * si
        out.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/>' % (ml, ly - 9, c))
        out.append('<text x="%d" y="%d">%s</text>' % (ml + 15, ly, e(label[:80])))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    return path
