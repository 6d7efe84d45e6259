#!/usr/bin/env python3
"""Renders a report page in headless Chromium and checks what a reader would see.

    render_check.py CHROMIUM PAGE.html SCREENSHOT.png CHART_NAME...   (the DOM is kept as SCREENSHOT.dom.html)
    render_check.py --dom DOM.html CHART_NAME...                      (the DOM checks alone, on a kept DOM)

- Chromium loads the file (no network: the page must not need one) and prints the DOM it built: every
  chart named on the command line is there as <figure class="chart" data-chart=NAME>, not marked
  missing, with an <svg> that has at least one gnuplot plot group holding drawn data (a path of three
  points or more, or point markers);
- the page has no script and fetches nothing (no http(s) address in a src or href);
- the screenshot Chromium takes is not blank: enough of it is not white, in enough colours.
Exit status 0 when all hold, 1 with each failure on stdout otherwise.
"""
import html.parser
import re
import struct
import subprocess
import sys
import zlib


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.charts = []      # [name, missing, svgs, plot groups, plot groups with data]
        self.stack = []       # open tags (of the charts only)
        self.in_plot = 0      # depth inside a gnuplot plot group
        self.plot_has_data = False
        self.scripts = 0
        self.fetches = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script":
            self.scripts += 1
        for key in ("src", "href", "xlink:href"):
            if re.match(r"\s*(https?:)?//", a.get(key) or ""):
                self.fetches.append(f"<{tag} {key}={a[key]}>")
        if tag == "figure" and "chart" in (a.get("class") or "").split():
            self.charts.append([a.get("data-chart"), "missing" in a.get("class"), 0, 0, 0])
        if not self.charts:
            return
        chart = self.charts[-1]
        if tag == "svg":
            chart[2] += 1
        if tag == "g" and "gnuplot-plot" in (a.get("class") or ""):
            chart[3] += 1
            self.in_plot = 1
            self.plot_has_data = False
        elif self.in_plot and tag == "g":
            self.in_plot += 1
        if self.in_plot:
            points = len(re.findall(r"-?\d+(?:\.\d+)?,-?\d+(?:\.\d+)?", a.get("d") or ""))
            points += len(re.findall(r"-?\d+(?:\.\d+)?,-?\d+(?:\.\d+)?", a.get("points") or ""))
            if (tag in ("path", "polygon") and points >= 3) or tag == "use":
                self.plot_has_data = True

    def handle_endtag(self, tag):
        if self.in_plot and tag == "g":
            self.in_plot -= 1
            if self.in_plot == 0 and self.plot_has_data:
                self.charts[-1][4] += 1


def png_pixels(path):
    """Width, height and rows of RGB(A) bytes of an 8-bit, non-interlaced PNG (what Chromium writes)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and interlace == 0 and colour in (2, 6), f"unexpected PNG format {header}"
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up = prev[i]
            up_left = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else up_left)) & 255
        rows.append(line)
        prev = line
    return width, height, bpp, rows


def screenshot_problems(path):
    width, height, bpp, rows = png_pixels(path)
    colours, inked, seen = set(), 0, 0
    for line in rows[::4]:  # every fourth row and column is plenty to tell a blank page
        for x in range(0, width * bpp, bpp * 4):
            px = tuple(line[x:x + 3])
            seen += 1
            colours.add(px)
            inked += px != (255, 255, 255)
    share = inked / max(seen, 1)
    print(f"screenshot {width}x{height}: {share:.1%} not white, {len(colours)} colours")
    if share < 0.02 or len(colours) < 16:
        return [f"the screenshot looks blank ({share:.1%} not white, {len(colours)} colours)"]
    return []


def dom_problems(dom, expected):
    parsed = Page()
    parsed.feed(dom)
    problems = []
    if not dom.strip():
        problems.append("Chromium printed no DOM")
    if parsed.scripts:
        problems.append(f"the page has {parsed.scripts} script element(s)")
    problems += [f"the page fetches {f}" for f in parsed.fetches]
    for name, missing, svgs, groups, drawn in parsed.charts:
        print(f"chart {name}: {svgs} svg, {groups} plot group(s), {drawn} with data{' MISSING' if missing else ''}")
        if missing or svgs != 1 or drawn == 0:
            problems.append(f"chart {name} is missing or empty")
    names = [c[0] for c in parsed.charts]
    return problems + [f"no chart {n} on the page" for n in expected if n not in names]


def main():
    if sys.argv[1] == "--dom":
        problems = dom_problems(open(sys.argv[2]).read(), sys.argv[3:])
    else:
        chromium, page, shot, *expected = sys.argv[1:]
        # One Chromium both prints the DOM it built and takes the screenshot (each start costs seconds).
        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                 "--disable-background-networking", "--window-size=1280,2400",
                 "--force-device-scale-factor=0.5"]  # half the pixels to decode, as telling
        run = subprocess.run([chromium, *flags, f"--screenshot={shot}", "--dump-dom", "file://" + page],
                             capture_output=True, text=True, timeout=120)
        open(shot + ".dom.html", "w").write(run.stdout)
        problems = dom_problems(run.stdout, expected) + screenshot_problems(shot)
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
