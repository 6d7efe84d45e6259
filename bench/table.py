"""The bench table's rows and how figures are written in them (report.py, report_tcp.py)."""
import json
import os

from parsers import ParseError, _read, parse_netload, safe


def read_record(raw, name, what):
    """A section's record raw/NAME, or {"ran": False, "reason": ...} saying why there is none."""
    try:
        return json.loads(_read(os.path.join(raw, name)))
    except (ParseError, ValueError) as e:
        return {"ran": False, "reason": f"no record of {what} ({e})"}


def fmt_pps(x):
    if x is None:
        return "-"
    if x >= 1e6:
        return f"{x/1e6:.3f} Mpps"
    return f"{x/1e3:.1f} kpps"


def fmt_mbps(x):
    return "-" if x is None else f"{x:,.0f} Mbit/s"


class Table:
    def __init__(self, raw):
        self.raw = raw
        self.rows = []
        self.results = {}

    def netload(self, name):
        return safe(parse_netload, self.raw, name)

    def row(self, measure, nl, other, ratio, target, verdict, note=""):
        self.rows.append({"measure": measure, "netload": nl, "other": other, "ratio": ratio,
                          "target": target, "result": verdict, "note": note})

    def ratio_row(self, measure, a, b, key, fmt, target_ratio, other_label):
        """a/b on `key`; graded against target_ratio when it is set (0 or None: an info row)."""
        target = f">= {target_ratio}x" if target_ratio else "info"
        if not a["ok"] or not b["ok"]:
            err = a.get("error") if not a["ok"] else b.get("error")
            self.row(measure, fmt(a.get(key)) if a["ok"] else "FAILED", fmt(b.get(key)) if b["ok"] else "FAILED",
                     "-", target, "FAIL" if target_ratio else "error", err)
            return
        r = a[key] / b[key] if b[key] else float("inf")
        self.row(measure, fmt(a[key]), f"{other_label} {fmt(b[key])}", f"{r:.2f}x", target,
                 ("PASS" if r >= target_ratio else "FAIL") if target_ratio else "info")
