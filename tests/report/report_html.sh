#!/bin/sh
# report.html and compare.html as a reader sees them: two short runs of one plan on 127.0.0.x (two sizes,
# two repeats, paced; the first also with a small rate search), `harness compare` of the two, and both
# pages rendered in headless Chromium; a third run (the second plan again) whose report.html draws its
# measurements over the results database's runs, and `harness history --html` of that database, rendered too (render_check.py: every chart there with plotted data, no script,
# nothing fetched, a screenshot that is not blank, and laid out at 1280 px: no sideways scroll, no closed
# section, every chart shown, a print stylesheet). A page with its plots taken out, or one with a closed
# section and a table wider than the window, must fail the check.
#   report_html.sh HARNESS BIN_DIR OUT_DIR
set -eu
harness=$1 bin=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
chromium=$(command -v chromium || true)
[ -n "$chromium" ] || { echo "SKIP: no chromium (scripts/bootstrap installs it)"; exit 77; }
tmp=$(mktemp -d /tmp/report-html.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"

plan() {  # plan NAME WITH_SEARCH
  cat <<PLAN
name = "$1"
[defaults]
duration = 1
interval = 0.5         # two samples per run: a timeline to draw
warmup = 0
repeats = 2
lead = 0.3
settle = 0.2
ports = [0, 0]
[hosts]
device = { address = "127.0.0.1" }
a = { address = "127.0.0.2" }
b = { address = "127.0.0.3" }
[groups]
instances = ["a", "b"]
[[tests]]
name = "sweep"
message_size = [64, 1400]
pps = 20000
topology = "fan-in"
server = "device"
clients = "instances"
PLAN
  [ "$2" = yes ] && cat <<PLAN
[[tests]]
name = "search"
message_size = 64
repeats = 1
topology = "fan-in"
server = "device"
clients = "instances"
search = { loss = [0.0, 0.5], trial = 0.3, final = 0.5, precision = 25, max_trials = 3 }
PLAN
  true
}
plan before yes > "$tmp/before.toml"
plan after no > "$tmp/after.toml"
cp "$tmp/after.toml" "$tmp/again.toml"
for p in before after again; do
  "$harness" run "$tmp/$p.toml" --results "$tmp/results" --bin-dir "$bin" --no-live > "$tmp/$p.out" 2> "$tmp/$p.err" ||
    { cat "$tmp/$p.err"; echo "FAIL: harness run $p"; exit 1; }
done
a=$(ls -d "$tmp"/results/before-*) b=$(ls -d "$tmp"/results/after-* | head -1) b2=$(ls -d "$tmp"/results/after-* | tail -1)
grep -q "^report: $a/report.html" "$tmp/before.out" || { echo "FAIL: the run does not name its report.html"; exit 1; }
"$harness" compare "$a" "$b" --out "$tmp" > "$tmp/compare.out" || { echo "FAIL: harness compare"; exit 1; }
cat "$tmp/compare.out"

status=0
python3 "$here/render_check.py" "$chromium" "$a/report.html" "$out/report.png" \
  sweep-pps sweep-mbps timeline instances cpu search || status=1
python3 "$here/render_check.py" "$chromium" "$tmp/compare.html" "$out/compare.png" compare || status=1
# The plan's second run (`again`: the plan `after` once more): its report.html draws each measurement over
# the two runs in the store, one point marker per run; the first run of a plan says it has no history yet.
grep -q "First run of sweep-m1400, sweep-m64 in the results database: no history to draw yet" "$a/report.html" ||
  { echo "FAIL: the first run's report.html does not say it has no history"; status=1; }
python3 "$here/render_check.py" "$chromium" "$b2/report.html" "$out/report-again.png" \
  history-after-sweep-m64-device_as_server=2 history-after-sweep-m1400-device_as_server=2 || status=1
# `harness history --html` (its default path: ./history.html): one chart per measurement of each plan,
# two panels (pps, Mbit/s) of one marker per results folder; the search is named, not drawn.
(cd "$tmp" && "$harness" history --db results/netbench.sqlite --html) > "$tmp/history.out" ||
  { echo "FAIL: harness history --html"; status=1; }
cat "$tmp/history.out"
charts=$(grep -c '<figure class="chart" data-chart="history-' "$tmp/history.html" || true)
[ "$charts" -eq 4 ] || { echo "FAIL: history.html has $charts charts, not 4 (two measurements of two plans)"; status=1; }
python3 "$here/render_check.py" "$chromium" "$tmp/history.html" "$out/history.png" \
  history-before-sweep-m64-device_as_server=2 history-before-sweep-m1400-device_as_server=2 \
  history-after-sweep-m64-device_as_server=4 history-after-sweep-m1400-device_as_server=4 || status=1
# The marker count is checked: a chart of the wrong number of points fails.
python3 "$here/render_check.py" --dom "$out/history.png.dom.html" history-after-sweep-m64-device_as_server=3 \
  > "$tmp/wrong-count.out" && { echo "FAIL: render_check.py passed a chart of 4 markers as 3"; status=1; }
# The check itself must catch a chart with nothing plotted: plot groups gone, or a plot whose every point
# fell outside its axes (only its key entry drawn).
sed 's/class="gnuplot-plot"/class="emptied"/g' "$out/report.png.dom.html" > "$tmp/broken.html"
if python3 "$here/render_check.py" --dom "$tmp/broken.html" sweep-pps > "$tmp/broken.out"; then
  echo "FAIL: render_check.py passed a page whose charts hold no plot"; status=1
fi
{
  echo '<figure class="chart" data-chart="sweep-pps">'
  printf '%s\n' "set terminal svg" "set xrange [0:1]" "set yrange [0:1]" '$D << EOD' "5 5" "6 6" "EOD" \
    "plot \$D using 1:2 with linespoints pt 7 title 'received'" | gnuplot | sed 's/id="gnuplot_plot_1"/class="gnuplot-plot"/'
  echo '</figure>'
} > "$tmp/key-only.html"
if python3 "$here/render_check.py" --dom "$tmp/key-only.html" sweep-pps > "$tmp/key-only.out"; then
  echo "FAIL: render_check.py passed a chart that drew only its key"; status=1
fi
# The layout check must catch what a reader would miss: a section collapsed under a click, a table and a
# page wider than the window.
python3 - "$a/report.html" "$tmp/collapsed.html" <<'BREAK'
import sys
page = open(sys.argv[1]).read()
wide = "<div class=\"table\"><table><tr><td style=\"white-space: nowrap\">" + "wide " * 400 + "</td></tr></table></div>"
hidden = ("<details><summary>closed</summary><figure class=\"chart\" data-chart=\"hidden\">"
          "<svg width=\"600\" height=\"300\"></svg></figure></details><div style=\"width: 1600px\">x</div>")
at = page.index("<h2>Runs</h2>")
open(sys.argv[2], "w").write(page[:at] + wide + hidden + page[at:])
BREAK
python3 "$here/render_check.py" --layout "$chromium" "$tmp/collapsed.html" > "$tmp/collapsed.out" &&
  { echo "FAIL: render_check.py passed a page with a closed section and a page-wide table"; status=1; }
for want in "closed <details> hides" "chart hidden is not shown" "scrolls sideways: div" "the page scrolls sideways"; do
  grep -q "$want" "$tmp/collapsed.out" || { cat "$tmp/collapsed.out"; echo "FAIL: the layout check missed: $want"; status=1; }
done
[ $status -eq 0 ] && echo "ok: both pages rendered; screenshots in $out"
exit $status
