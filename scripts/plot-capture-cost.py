#!/usr/bin/env python3
"""Cost growth of reading large captures: seconds and peak memory against the file's size, one
line per command, from the Markdown table scripts/bench-capture.sh prints.

    scripts/bench-capture.sh | tee capture.md
    python3 scripts/plot-capture-cost.py < capture.md > assets/capture-cost.svg

Plain SVG, no plotting library. Each panel's axes start at zero, and a dotted line per command
continues its smallest capture's cost in proportion to size: a line that stays on its dotted
line grows linearly.
"""

import re
import sys

COLOURS = {
    "tshark": "#b44",
    "inspect": "#27a",
    "convert": "#3a5",
}


def parse(lines):
    """{command: [(file MB, seconds, peak MiB)]} from the table's rows."""
    series = {}
    size = None
    for line in lines:
        head = re.match(r"\|\s*\*\*([\d,]+) MB capture\*\*", line)
        if head:
            size = int(head.group(1).replace(",", ""))
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if size is None or len(cells) < 4:
            continue
        name = cells[0].strip("`")
        try:
            secs = float(cells[1].replace(",", ""))
            mib = float(cells[2].replace(",", ""))
        except ValueError:
            continue
        key = next((k for k in COLOURS if k in name), name)
        series.setdefault(key, []).append((size, secs, mib))
    return series


def panel(x0, title, unit, series, which):
    """One panel's SVG: `which` is 1 (seconds) or 2 (MiB)."""
    w, h, left, bottom = 420, 300, 60, 40
    xmax = max(p[0] for s in series.values() for p in s) * 1.05
    ymax = max(p[which] for s in series.values() for p in s) * 1.1
    sx = lambda v: x0 + left + v / xmax * (w - left - 20)
    sy = lambda v: 20 + (h - bottom - 20) * (1 - v / ymax)
    out = [
        f'<text x="{x0 + w / 2}" y="14" text-anchor="middle" font-weight="bold">{title}</text>',
        f'<line x1="{sx(0)}" y1="{sy(0)}" x2="{sx(xmax)}" y2="{sy(0)}" stroke="#444"/>',
        f'<line x1="{sx(0)}" y1="{sy(0)}" x2="{sx(0)}" y2="{sy(ymax)}" stroke="#444"/>',
        f'<text x="{x0 + w / 2}" y="{h - 5}" text-anchor="middle">capture size (MB)</text>',
        f'<text x="{x0 + 12}" y="{sy(ymax / 2)}" text-anchor="middle" '
        f'transform="rotate(-90 {x0 + 12} {sy(ymax / 2)})">{unit}</text>',
    ]
    for i in range(5):
        v = ymax / 1.1 * i / 4
        out.append(
            f'<text x="{sx(0) - 4}" y="{sy(v) + 4}" text-anchor="end" font-size="10">{v:,.0f}</text>'
        )
    for size in sorted({p[0] for s in series.values() for p in s}):
        out.append(
            f'<text x="{sx(size)}" y="{sy(0) + 14}" text-anchor="middle" font-size="10">{size:,}</text>'
        )
    labels = []
    for name, points in series.items():
        colour = COLOURS.get(name, "#888")
        points = sorted(points)
        first = points[0]
        last_size = points[-1][0]
        linear = first[which] / first[0] * last_size
        out.append(
            f'<line x1="{sx(first[0])}" y1="{sy(first[which])}" x2="{sx(last_size)}" '
            f'y2="{sy(min(linear, ymax))}" stroke="{colour}" stroke-dasharray="2,3"/>'
        )
        path = " ".join(f"{sx(p[0]):.1f},{sy(p[which]):.1f}" for p in points)
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for p in points:
            out.append(f'<circle cx="{sx(p[0]):.1f}" cy="{sy(p[which]):.1f}" r="3" fill="{colour}"/>')
        end = points[-1]
        y = sy(end[which]) - 6
        while any(abs(y - used) < 12 for used in labels):
            y += 12
        labels.append(y)
        out.append(
            f'<text x="{sx(end[0]) - 6}" y="{y:.1f}" text-anchor="end" '
            f'fill="{colour}" font-size="11">{name} {end[which]:,.0f}</text>'
        )
    return out


def main():
    series = parse(sys.stdin)
    if not series:
        sys.exit("no table rows on standard input (the output of scripts/bench-capture.sh)")
    body = panel(0, "time", "seconds", series, 1) + panel(440, "peak memory", "MiB", series, 2)
    print(
        '<svg xmlns="http://www.w3.org/2000/svg" width="880" height="300" '
        'font-family="sans-serif" font-size="12">'
    )
    print('<rect width="880" height="300" fill="white"/>')
    print("\n".join(body))
    print("</svg>")


if __name__ == "__main__":
    main()
