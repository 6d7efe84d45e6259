#!/usr/bin/env python3
"""Renders a report page in headless Chromium and checks what a reader would see.

    render_check.py CHROMIUM PAGE.html SCREENSHOT.png CHART_NAME...   (the DOM is kept as SCREENSHOT.dom.html)
    CHART_NAME=N: the chart also draws exactly N point markers off its key rows (all its panels together)
    render_check.py --dom DOM.html CHART_NAME...                      (the DOM checks alone, on a kept DOM)
    render_check.py --layout CHROMIUM PAGE.html                        (the layout checks alone)

- Chromium loads the file (no network: the page must not need one) and prints the DOM it built: every
  chart named on the command line is there as <figure class="chart" data-chart=NAME>, not marked
  missing, with one <svg> whose first gnuplot plot group, and half of them at least, drew data off
  their key rows (two points of a line or a bar, or a point marker); a stacked chart of shares (cpu)
  needs one plot group that drew;
- the page has no script and fetches nothing (no http(s) address in a src or href);
- the screenshot Chromium takes is not blank: enough of it is not white, in enough colours;
- laid out in a window 1280 px wide (a copy of the page with a measuring script added; the page itself has
  none): nothing scrolls sideways, neither the page (document.documentElement.scrollWidth <= 1280) nor a
  table or <pre> in it; no <details> is closed; every chart's <svg> or <img> is rendered, at least 200 px
  wide and 100 px high; and the page has a print stylesheet (@media print), so it also reads on paper.
Exit status 0 when all hold, 1 with each failure on stdout otherwise.
"""
import html
import html.parser
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import zlib


NUMBER_PAIR = re.compile(r"(-?\d+(?:\.\d+)?)[ ,](-?\d+(?:\.\d+)?)")
TRANSLATE = re.compile(r"translate\((-?[\d.]+)[ ,](-?[\d.]+)\)")
KEY_ROW_PX = 8  # a key's sample sits within this many px of its title's baseline
STACKED = {"cpu"}


class Page(html.parser.HTMLParser):
    """The charts of a page: per chart, its SVGs, plot groups and the plot groups that drew data.

    A gnuplot plot group also holds its key entry: the title (a translated <g> with the text) and a
    sample line, box or marker beside it. Only what lies off every key row of the group counts as data,
    so a plot whose points all fell outside its axes (or were never there) has none."""

    def __init__(self):
        super().__init__()
        self.charts = []      # [name, missing, svgs, plot groups, plot groups with data, first one has data, markers]
        self.depth = 0        # depth inside a gnuplot plot group; 0 outside
        self.key_rows, self.points, self.markers = [], [], []
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
            self.charts.append([a.get("data-chart"), "missing" in a.get("class"), 0, 0, 0, False, 0])
        if not self.charts:
            return
        chart = self.charts[-1]
        if tag == "svg":
            chart[2] += 1
        if tag == "g" and "gnuplot-plot" in (a.get("class") or ""):
            chart[3] += 1
            self.depth, self.key_rows, self.points, self.markers = 1, [], [], []
            return
        if not self.depth:
            return
        if tag == "g":
            self.depth += 1
            moved = TRANSLATE.search(a.get("transform") or "")
            if moved:  # a key title is drawn in a translated group
                self.key_rows.append(float(moved.group(2)))
        elif tag in ("path", "polygon"):
            self.points += [float(y) for _, y in NUMBER_PAIR.findall(a.get("d") or a.get("points") or "")]
        elif tag == "use":  # a point marker: one is a data point by itself
            moved = TRANSLATE.search(a.get("transform") or "")
            if moved:
                self.points += [float(moved.group(2))] * 2
                # gnuplot draws a filled point over a larger white one (its border): one marker, not two.
                if (a.get("color") or "").upper() != "#FFFFFF":
                    self.markers.append(float(moved.group(2)))

    def handle_endtag(self, tag):
        if not self.depth or tag != "g":
            return
        self.depth -= 1
        if self.depth == 0:
            data = [y for y in self.points if all(abs(y - row) > KEY_ROW_PX for row in self.key_rows)]
            self.charts[-1][6] += sum(all(abs(y - row) > KEY_ROW_PX for row in self.key_rows) for y in self.markers)
            if len(data) >= 2:
                self.charts[-1][4] += 1
                self.charts[-1][5] |= self.charts[-1][3] == 1


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
    markers_wanted = dict(e.split("=", 1) for e in expected if "=" in e)
    expected = [e.split("=", 1)[0] for e in expected]
    for name, missing, svgs, groups, drawn, first, markers in parsed.charts:
        print(f"chart {name}: {svgs} svg, {groups} plot group(s), {drawn} with data, {markers} point marker(s)"
              f"{' MISSING' if missing else ''}")
        if name in markers_wanted and markers != int(markers_wanted[name]):
            problems.append(f"chart {name} draws {markers} point markers, not {markers_wanted[name]}")
        # The first plot (received, sent, offered, ...) must have drawn, and half of them at least: a plot of
        # losses that were all zero draws nothing, and rightly. A stacked chart of shares (cpu: user, system,
        # softirq, irq, steal) needs one bar: any share may be zero (no user tick in a 0.3 s trial).
        stacked = name in STACKED
        if missing or svgs != 1 or (drawn < 1 if stacked else not first or drawn * 2 < groups):
            problems.append(f"chart {name} is missing or empty")
    names = [c[0] for c in parsed.charts]
    return problems + [f"no chart {n} on the page" for n in expected if n not in names]


WINDOW_PX = 1280

# Measures the page as laid out and writes what it found into the DOM, which Chromium then prints.
MEASURE = """<script id="render-check">(function () {
  var doc = document.documentElement, out = {innerWidth: window.innerWidth, scrollWidth: doc.scrollWidth,
    closed: [], hidden: [], charts: 0, overflowing: [], print: false};
  document.querySelectorAll("details").forEach(function (d) { if (!d.open) out.closed.push(d.textContent.slice(0, 60)); });
  document.querySelectorAll("figure.chart").forEach(function (f) {
    out.charts++;
    var g = f.querySelector("svg, img"), r = g ? g.getBoundingClientRect() : null;
    // A closed <details> keeps its content laid out but not rendered: checkVisibility() tells.
    if (!g || g.getClientRects().length === 0 || r.width < 200 || r.height < 100 || f.closest("details:not([open])") ||
        (g.checkVisibility && !g.checkVisibility({opacityProperty: true, visibilityProperty: true})))
      out.hidden.push(f.getAttribute("data-chart"));
  });
  document.querySelectorAll("div.table, pre").forEach(function (e) {
    if (e.scrollWidth > e.clientWidth + 1) out.overflowing.push(e.tagName.toLowerCase() + " " +
      e.scrollWidth + " px in " + e.clientWidth + ": " + e.textContent.replace(/\\s+/g, " ").slice(0, 60));
  });
  for (var k = 0; k < document.styleSheets.length; k++)
    for (var rules = document.styleSheets[k].cssRules, i = 0; i < rules.length; i++)
      if (rules[i].media && rules[i].media.mediaText.indexOf("print") >= 0) out.print = true;
  var p = document.createElement("pre");
  p.id = "render-check-result";
  p.textContent = JSON.stringify(out);
  document.body.appendChild(p);
})();</script>"""


def layout_problems(chromium, page):
    """The page laid out at WINDOW_PX: what a reader at that width, or of the printed page, would miss."""
    text = open(page).read()
    at = text.rfind("</body>")
    # The measured copy goes to a file of its own (the page is self-contained: nothing it refers to moves).
    with tempfile.NamedTemporaryFile("w", suffix=".html", prefix="render-check-", delete=False) as measured:
        measured.write(text[:at] + MEASURE + text[at:])
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
             "--disable-background-networking", f"--window-size={WINDOW_PX},2400", "--force-device-scale-factor=1"]
    try:
        run = subprocess.run([chromium, *flags, "--dump-dom", "file://" + measured.name], capture_output=True,
                             text=True, timeout=120)
    finally:
        os.unlink(measured.name)
    found = re.search(r'<pre id="render-check-result">(.*?)</pre>', run.stdout, re.S)
    if not found:
        return ["the layout check printed nothing (did the page load?)"]
    out = json.loads(html.unescape(found.group(1)))
    print(f"layout at {out['innerWidth']} px: scroll width {out['scrollWidth']} px, {out['charts']} chart(s), "
          f"{len(out['hidden'])} not shown, {len(out['closed'])} closed <details>, "
          f"{len(out['overflowing'])} scrolling table(s), print stylesheet: {out['print']}")
    problems = []
    if out["innerWidth"] != WINDOW_PX:
        problems.append(f"the window is {out['innerWidth']} px wide, not {WINDOW_PX}: the check measured nothing")
    if out["scrollWidth"] > WINDOW_PX:
        problems.append(f"the page scrolls sideways: {out['scrollWidth']} px wide in a {WINDOW_PX} px window")
    problems += [f"a closed <details> hides: {c!r}" for c in out["closed"]]
    problems += [f"chart {c} is not shown" for c in out["hidden"]]
    problems += [f"scrolls sideways: {o}" for o in out["overflowing"]]
    if not out["print"]:
        problems.append("the page has no print stylesheet (@media print)")
    return problems


def main():
    if sys.argv[1] == "--dom":
        problems = dom_problems(open(sys.argv[2]).read(), sys.argv[3:])
    elif sys.argv[1] == "--layout":
        problems = layout_problems(sys.argv[2], sys.argv[3])
    else:
        chromium, page, shot, *expected = sys.argv[1:]
        # One Chromium both prints the DOM it built and takes the screenshot (each start costs seconds).
        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                 "--disable-background-networking", "--window-size=1280,2400",
                 "--force-device-scale-factor=0.5"]  # half the pixels to decode, as telling
        run = subprocess.run([chromium, *flags, f"--screenshot={shot}", "--dump-dom", "file://" + page],
                             capture_output=True, text=True, timeout=120)
        open(shot + ".dom.html", "w").write(run.stdout)
        problems = dom_problems(run.stdout, expected) + screenshot_problems(shot) + layout_problems(chromium, page)
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
