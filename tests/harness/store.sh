#!/bin/sh
# The results store with the real harness, one case per ctest entry:
#   history      three loopback runs into a fresh store: `harness history --json` has three points whose
#                figures equal each run's summary.json; `db import` of the folders (twice) into a second
#                store gives the same rows and the same history
#   concurrent   two harnesses recording into one store at once, then importers racing: every folder
#                recorded once, PRAGMA integrity_check ok
#   corrupt      a store of junk bytes: --no-db leaves it alone; a run's files are written, its status is
#                unchanged, one line names the file and `harness db import`; an import into a new file repairs it;
#                report.html says in one line why it has no history (--no-db, the damaged store)
#   interrupted  a run stopped by SIGINT is recorded as interrupted, with no figures (not zeros)
#   regression   the same plan at a packet rate lowered by 30 % is flagged and --fail-on-regression exits 4;
#                back at the first rate, judged against the first folder marked with `db baseline`, it is not
#   untrusted    files and databases from elsewhere (issue 40): a folder whose started_utc is 1e300 is refused at
#                import, one line naming it, and history (text, JSON, CSV) of the others reads; run.json or
#                plan.toml a symlink to /dev/zero, and run.json a FIFO, refused at once (within 5 s, max RSS under
#                128 MiB) by `db import` and `report`; a store with a trigger is refused and its folder kept, one
#                with a recursive view refused within 5 s; names with ESC and BEL escaped on the terminal (the
#                import's lines, its error line and the history table), kept as data in JSON; a
#                summary.json.tmp symlink in the folder is not written through
# Runs are 1 s on 127.0.0.1 / 127.0.0.2 with free ports; nothing leaves loopback.
set -eu
case_name=$1
harness=$2
build=$3
tmp=$(mktemp -d /tmp/harness-store.XXXXXX)
pids_to_clean=""
cleanup() {
  for p in $pids_to_clean; do kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$tmp/err" ] && cat "$tmp/err"; exit 1; }
. "$(dirname "$0")/common.sh"

# run PLAN [ARGS...]: the harness on $tmp/PLAN.toml, results under $tmp/results; sets $status.
run() {
  plan=$1
  shift
  status=0
  "$harness" run "$tmp/$plan.toml" --results "$tmp/results" --bin-dir "$build" --no-live "$@" > "$tmp/out" 2> "$tmp/err" ||
    status=$?
}
sql() { sqlite3 "$1" "$2"; }
# bounded SECONDS CMD...: CMD with stdout in $tmp/out and stderr in $tmp/err, killed after SECONDS; sets $status
# ("timeout" when killed), $rss_kb (its largest resident set) and $secs.
bounded() {
  set -- $(OUT="$tmp/out" ERR="$tmp/err" python3 - "$@" <<'PY'
import os, resource, subprocess, sys, time
start = time.monotonic()
with open(os.environ["OUT"], "wb") as out, open(os.environ["ERR"], "wb") as err:
    try:
        status = subprocess.run(sys.argv[2:], stdout=out, stderr=err, timeout=float(sys.argv[1])).returncode
    except subprocess.TimeoutExpired:
        status = "timeout"
print(status, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "%.2f" % (time.monotonic() - start))
PY
)
  status=$1 rss_kb=$2 secs=$3
}
# controls FILE: the control bytes in FILE but line feeds (ESC, BEL, CR, ...).
controls() { tr -d '\n' < "$1" | tr -dc '\000-\037\177' | wc -c; }

case $case_name in
history)
  fan_in_plan lb 1
  for i in 1 2 3; do
    run lb
    [ $status -eq 0 ] || fail "run $i exited $status"
  done
  db=$tmp/results/netbench.sqlite
  [ -f "$db" ] || fail "no store at the default place $db"
  "$harness" history --db "$db" --json > "$tmp/h1.json" || fail "history --json"
  python3 - "$tmp/h1.json" "$tmp/results" <<'PY' || fail "history does not equal summary.json"
import glob, json, os, sys
h = json.load(open(sys.argv[1]))
dirs = sorted(d for d in glob.glob(sys.argv[2] + "/lb-*") if os.path.isdir(d))
assert len(dirs) == 3, dirs
[s] = h["series"]
assert (s["plan"], s["test"], s["message_size"]) == ("lb", "t", 64), s
assert [p["folder"] for p in s["points"]] == [os.path.basename(d) for d in dirs], s["points"]
for p, d in zip(s["points"], dirs):
    [run] = json.load(open(d + "/summary.json"))["runs"]
    [r] = p["runs"]
    assert r["run"] == run["run"] and r["ok"] and p["status"] == "ok", (r, run["run"])
    for ours, theirs in [(r["received_pps"], run["sum"]["receiver"]["pps"]), (r["sent_pps"], run["sum"]["sender"]["pps"]),
                         (r["received_bits_per_second"], run["sum"]["receiver"]["bits_per_second"]),
                         (r["sent_bits_per_second"], run["sum"]["sender"]["bits_per_second"]),
                         (r["loss_percent"], run["sum"]["loss"]["percent"]),
                         (p["received_pps"]["mean"], run["sum"]["receiver"]["pps"])]:
        assert ours == theirs, (p["folder"], ours, theirs)
    assert run["sum"]["receiver"]["pps"] > 1500, run["sum"]
print("ok: three points equal to summary.json:", [p["runs"][0]["received_pps"] for p in s["points"]])
PY
  "$harness" history --db "$db" --csv > "$tmp/h.csv"
  [ "$(grep -c '^lb,t-m64,t,' "$tmp/h.csv")" = 3 ] || { cat "$tmp/h.csv"; fail "csv: not three rows"; }
  "$harness" history --db "$db" --plan lb --test t > "$tmp/h.txt"
  grep -q "3 point(s)" "$tmp/h.txt" || { cat "$tmp/h.txt"; fail "text: not three points"; }
  [ "$("$harness" history --db "$db" --test other)" = "no runs in the store match" ] || fail "--test filter"
  "$harness" history --db "$db" --since 2000-01-01 --json | grep -q '"folder"' || fail "--since 2000 left runs out"
  "$harness" history --db "$db" --since 2999-01-01 | grep -q "no runs" || fail "--since 2999 kept runs"
  # The files are the source of truth: the same folders imported (twice) give the same store.
  "$harness" db import --db "$tmp/second.sqlite" "$tmp"/results/lb-*/ > "$tmp/out" || fail "db import"
  "$harness" db import --db "$tmp/second.sqlite" "$tmp"/results/lb-* >> "$tmp/out" || fail "db import again"
  [ "$(grep -c '^imported lb-' "$tmp/out")" = 6 ] || { cat "$tmp/out"; fail "import output"; }
  # A folder of the same name elsewhere (two results roots, one store) is a folder of its own.
  first=$(ls -d "$tmp"/results/lb-* | head -n 1)
  mkdir "$tmp/copy" && cp -r "$first" "$tmp/copy/"
  "$harness" db import --db "$tmp/same.sqlite" "$first" "$tmp/copy/$(basename "$first")" > "$tmp/out" || fail "db import of the copy"
  [ "$(sql "$tmp/same.sqlite" "SELECT count(*) FROM folders")" = 2 ] || fail "same name: $(sql "$tmp/same.sqlite" "SELECT path FROM folders")"
  [ "$("$harness" history --db "$tmp/same.sqlite" --json | grep -c '"folder":')" = 2 ] || fail "same name: history has not two points"
  # CSV fields with a comma, a quote and a line break are quoted (RFC 4180): Python's reader gets them back.
  sql "$db" "UPDATE runs SET test = 'a,b \"c\"' || char(10) || 'd'"
  "$harness" history --db "$db" --csv > "$tmp/q.csv"
  python3 - "$tmp/q.csv" <<'PY' || { cat "$tmp/q.csv"; fail "csv: not read back by a CSV reader"; }
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
assert len(rows) == 4 and all(len(r) == len(rows[0]) for r in rows), rows
assert [r[2] for r in rows[1:]] == ['a,b "c"\nd'] * 3, rows
PY
  # A folder that is not a results folder is named; the others are imported all the same.
  mkdir "$tmp/notresults"
  status=0
  "$harness" db import --db "$tmp/third.sqlite" "$tmp/notresults" "$tmp"/results/lb-* > "$tmp/out" 2> "$tmp/err" || status=$?
  [ $status -eq 1 ] && grep -q "notresults: not imported: .*no raw/ folder" "$tmp/err" || fail "a bad folder: exit $status"
  [ "$(sql "$tmp/third.sqlite" "SELECT count(*) FROM folders")" = 3 ] || fail "a bad folder stopped the import"
  rm -f "$tmp/err"
  "$harness" history --db "$tmp/second.sqlite" --json > "$tmp/h2.json"
  cmp "$tmp/h1.json" "$tmp/h2.json" || { diff "$tmp/h1.json" "$tmp/h2.json" | head; fail "imported history differs"; }
  rows="SELECT f.name, f.status, r.run, r.ok, r.sent_pps, r.received_pps, r.received_bps, r.loss_percent, r.summary,
        i.name, i.received_pps, i.kernel_drops FROM runs r JOIN folders f ON f.id = r.folder_id
        JOIN instances i ON i.run_id = r.id ORDER BY f.name, r.seq, i.name"
  sql "$db" "$rows" > "$tmp/rows1"
  sql "$tmp/second.sqlite" "$rows" > "$tmp/rows2"
  [ "$(wc -l < "$tmp/rows1")" = 6 ] || fail "not six instance rows: $(cat "$tmp/rows1")"
  cmp "$tmp/rows1" "$tmp/rows2" || fail "imported rows differ"
  [ "$(sql "$db" "SELECT count(*) FROM hosts WHERE kernel LIKE 'Linux %' AND address LIKE '127.0.0.%'")" = 6 ] ||
    fail "hosts: $(sql "$db" "SELECT * FROM hosts")"
  for t in folders runs instances hosts; do
    [ "$(sql "$db" "SELECT count(*) FROM $t")" = "$(sql "$tmp/second.sqlite" "SELECT count(*) FROM $t")" ] ||
      fail "table $t: counts differ after a double import"
  done
  echo "ok: history equals summary.json; a double import gives the same rows"
  ;;
concurrent)
  fan_in_plan one 1
  fan_in_plan two 1
  db=$tmp/shared.sqlite
  "$harness" run "$tmp/one.toml" --results "$tmp/r1" --db "$db" --bin-dir "$build" --no-live > "$tmp/out1" 2> "$tmp/err1" &
  p1=$!
  "$harness" run "$tmp/two.toml" --results "$tmp/r2" --db "$db" --bin-dir "$build" --no-live > "$tmp/out2" 2> "$tmp/err2" &
  p2=$!
  pids_to_clean="$p1 $p2"
  s1=0; s2=0
  wait $p1 || s1=$?
  wait $p2 || s2=$?
  [ $s1 -eq 0 ] && [ $s2 -eq 0 ] || { cat "$tmp/err1" "$tmp/err2"; fail "runs exited $s1 and $s2"; }
  ! grep -h "not recorded" "$tmp/err1" "$tmp/err2" || fail "a run was not recorded"
  # Importers racing on the same store: each waits its turn (busy timeout, IMMEDIATE transactions).
  pids=""
  for k in 1 2 3 4; do
    ( for n in 1 2 3; do "$harness" db import --db "$db" "$tmp"/r1/one-* "$tmp"/r2/two-* > /dev/null || exit 1; done ) 2> "$tmp/imp$k" &
    pids="$pids $!"
  done
  for p in $pids; do wait "$p" || { cat "$tmp"/imp*; fail "a concurrent import failed"; }; done
  [ "$(sql "$db" "SELECT group_concat(plan, ',') FROM (SELECT plan FROM folders ORDER BY plan)")" = "one,two" ] ||
    fail "folders: $(sql "$db" "SELECT name FROM folders")"
  [ "$(sql "$db" "SELECT count(*) FROM runs")" = 2 ] || fail "runs duplicated"
  [ "$(sql "$db" "PRAGMA integrity_check")" = ok ] || fail "integrity_check: $(sql "$db" "PRAGMA integrity_check")"
  echo "ok: two harnesses and four importers on one store: both runs once each, integrity ok"
  ;;
corrupt)
  fan_in_plan lb 1
  mkdir -p "$tmp/results"
  head -c 8192 /dev/urandom > "$tmp/results/netbench.sqlite"
  cp "$tmp/results/netbench.sqlite" "$tmp/junk"
  run lb --no-db
  [ $status -eq 0 ] || fail "--no-db: exit $status"
  ! grep -q "results database" "$tmp/err" || fail "--no-db still opened the database"
  ! grep -q "^store:" "$tmp/out" || fail "--no-db still recorded"
  grep -q "No history: not recorded in a results database (--no-db)." "$(ls -d "$tmp"/results/lb-* | tail -n 1)/report.html" ||
    fail "--no-db: report.html does not say why it has no history"
  run lb
  [ $status -eq 0 ] || fail "a damaged store changed the run's status to $status"
  dir=$(ls -d "$tmp"/results/lb-* | tail -n 1)
  for f in summary.json summary.csv report.md report.html environment.json; do
    [ -s "$dir/$f" ] || fail "$f not written"
  done
  grep -q "No history: not recorded in the results database: results database .* is damaged" "$dir/report.html" ||
    fail "a damaged store: report.html does not say why it has no history"
  grep "results database" "$tmp/err" > "$tmp/line" || fail "no store error on stderr"
  [ "$(wc -l < "$tmp/line")" = 1 ] || fail "more than one line: $(cat "$tmp/line")"
  grep -q "$tmp/results/netbench.sqlite" "$tmp/line" && grep -q "harness db import" "$tmp/line" ||
    fail "the line does not name the file and the repair: $(cat "$tmp/line")"
  cmp -s "$tmp/junk" "$tmp/results/netbench.sqlite" || fail "the damaged file was changed"
  cat "$tmp/line"
  status=0
  "$harness" history --db "$tmp/results/netbench.sqlite" > "$tmp/out" 2> "$tmp/err" || status=$?
  [ $status -eq 1 ] && grep -q "harness db import" "$tmp/err" || fail "history on the damaged store: $status"
  mv "$tmp/results/netbench.sqlite" "$tmp/aside"
  "$harness" db import "$dir" --db "$tmp/results/netbench.sqlite" > /dev/null || fail "the repair import"
  "$harness" history --db "$tmp/results/netbench.sqlite" | grep -q "1 point(s)" || fail "the repaired store"
  echo "ok: a damaged store is named with its repair; the run's files and status are untouched"
  ;;
interrupted)
  fan_in_plan long 20
  "$harness" run "$tmp/long.toml" --results "$tmp/results" --bin-dir "$build" --no-live > "$tmp/out" 2> "$tmp/err" &
  pid=$!
  pids_to_clean=$pid
  for i in $(seq 100); do
    [ "$(pgrep -P $pid | wc -l)" -ge 3 ] && break
    sleep 0.1
  done
  sleep 1
  kill -INT $pid
  status=0
  wait $pid || status=$?
  [ $status -eq 130 ] || fail "exit $status, not 130"
  db=$tmp/results/netbench.sqlite
  [ "$(sql "$db" "SELECT status FROM folders")" = interrupted ] || fail "folder: $(sql "$db" "SELECT status, error FROM folders")"
  [ "$(sql "$db" "SELECT ok, interrupted, received_pps IS NULL, sent_pps IS NULL FROM runs")" = "0|1|1|1" ] ||
    fail "run: $(sql "$db" "SELECT ok, interrupted, received_pps, sent_pps, error FROM runs")"
  "$harness" history --db "$db" | grep -q "1 of 1 failed (interrupted)" || fail "history: $("$harness" history --db "$db")"
  # Nothing could be judged against it: refused, one line, exit 1, no mark left.
  dir=$(ls -d "$tmp"/results/long-*)
  status=0
  "$harness" db baseline "$dir" --db "$db" > "$tmp/mark" 2> "$tmp/err" || status=$?
  [ $status -eq 1 ] || fail "db baseline of an interrupted folder exited $status"
  [ "$(wc -l < "$tmp/err")" = 1 ] && grep -q "interrupted" "$tmp/err" || fail "db baseline said: $(cat "$tmp/err")"
  [ "$(sql "$db" "SELECT count(*) FROM baselines")" = 0 ] || fail "the interrupted folder was marked"
  echo "ok: an interrupted run is recorded as interrupted, without figures, and is refused as a baseline"
  ;;
regression)
  fan_in_plan reg 1
  run reg
  run reg
  grep -q "no regression" "$tmp/out" || fail "second run: $(cat "$tmp/out")"
  sed -i 's/^pps = 1000$/pps = 700/' "$tmp/reg.toml"
  run reg --fail-on-regression
  [ $status -eq 4 ] || { cat "$tmp/out"; fail "a 30 % drop exited $status, not 4"; }
  grep "^REGRESSION: t-m64 " "$tmp/out" || fail "no REGRESSION line: $(cat "$tmp/out")"
  grep -q "1 regression(s)" "$tmp/err" || fail "stderr does not say it"
  dir=$(ls -d "$tmp"/results/reg-* | tail -n 1)
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["regression"] and j["measurements"][0]["change_percent"] < -25, j' \
    "$dir/regressions.json" || fail "regressions.json"
  sed -i 's/^pps = 700$/pps = 1000/' "$tmp/reg.toml"
  first=$(ls -d "$tmp"/results/reg-* | head -n 1)
  "$harness" db baseline "$first/" --db "$tmp/results/netbench.sqlite" > "$tmp/mark" || fail "db baseline"
  grep -q "^baseline of plan reg: $(basename "$first")$" "$tmp/mark" || fail "db baseline said: $(cat "$tmp/mark")"
  run reg --fail-on-regression
  [ $status -eq 0 ] || { cat "$tmp/out"; fail "back at the first rate exited $status"; }
  grep -q "^no regression: t-m64 .*1 folder(s), the marked baseline $(basename "$first")" "$tmp/out" ||
    fail "third run, against the marked baseline: $(cat "$tmp/out")"
  echo "ok: a 30 % lower rate is a regression (exit 4), the first rate again is not"
  ;;
untrusted)
  fan_in_plan lb 1
  run lb --no-db
  [ $status -eq 0 ] || fail "the run exited $status"
  good=$(ls -d "$tmp"/results/lb-*)
  copy() { rm -rf "$tmp/in/$1"; mkdir -p "$tmp/in" && cp -r "$good" "$tmp/in/$1"; echo "$tmp/in/$1"; }
  # A time no date can show: refused at import with one line naming the folder, the others imported and readable.
  big=$(copy big-20260101T000000Z)
  python3 - "$big/environment.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); j["started_utc"] = "1e300"; json.dump(j, open(sys.argv[1], "w"))
PY
  db=$tmp/u.sqlite
  bounded 10 "$harness" db import --db "$db" "$good" "$big"
  [ "$status" = 1 ] && [ "$(wc -l < "$tmp/err")" = 1 ] && grep -q "big-20260101T000000Z: not imported: .*started_utc \"1e300\"" "$tmp/err" ||
    fail "started_utc 1e300: import exited $status: $(cat "$tmp/err")"
  cat "$tmp/err"
  for as in "" --json --csv; do
    bounded 10 "$harness" history --db "$db" $as
    [ "$status" = 0 ] && grep -q "lb-" "$tmp/out" || fail "history $as after a refused folder: exit $status: $(cat "$tmp/err")"
  done
  echo "ok: a folder with started_utc 1e300 refused at import; history, --json and --csv read the others"
  # Files that never end or never come: refused at once, memory bounded.
  zero_plan=$(copy zplan-20260101T000000Z) && ln -sf /dev/zero "$zero_plan/plan.toml"
  zero_run=$(copy zrun-20260101T000000Z) && ln -sf /dev/zero "$zero_run/raw/t-m64/run.json"
  fifo=$(copy fifo-20260101T000000Z) && rm "$fifo/raw/t-m64/run.json" && mkfifo "$fifo/raw/t-m64/run.json"
  # The bound: 128 MiB, 512 under ASan (its shadow memory and quarantine; the ctest asan preset sets
  # ASAN_OPTIONS); an unbounded read grew past 969 MiB within the 5 s.
  rss_mib=128
  [ -n "${ASAN_OPTIONS:-}" ] && rss_mib=512
  for dir in "$zero_plan" "$zero_run" "$fifo"; do
    for cmd in "db import --db $tmp/z.sqlite" report; do
      # shellcheck disable=SC2086
      bounded 5 "$harness" $cmd "$dir"
      echo "$cmd $(basename "$dir"): exit $status in $secs s, max RSS $((rss_kb / 1024)) MiB: $(tail -n 1 "$tmp/err")"
      [ "$status" = 1 ] || fail "$cmd $(basename "$dir"): exit $status, not 1"
      [ "$rss_kb" -lt $((rss_mib * 1024)) ] || fail "$cmd $(basename "$dir"): max RSS $rss_kb KiB, over $rss_mib MiB"
      grep -q "leads out of\|a FIFO, not a regular file" "$tmp/err" || fail "$cmd $(basename "$dir"): $(cat "$tmp/err")"
    done
  done
  echo "ok: /dev/zero behind a symlink and a FIFO refused at once, memory bounded"
  # Hostile stores: a trigger that deletes what is stored, a recursive view in the place of a table.
  "$harness" db import --db "$tmp/trigger.sqlite" "$good" > /dev/null || fail "import into a new store"
  cp "$tmp/trigger.sqlite" "$tmp/view.sqlite"
  sql "$tmp/trigger.sqlite" "CREATE TRIGGER wipe AFTER INSERT ON folders BEGIN DELETE FROM folders WHERE id <> NEW.id; END"
  other=$(copy other-20260101T000000Z)
  bounded 10 "$harness" db import --db "$tmp/trigger.sqlite" "$other"
  echo "import into a store with a trigger: exit $status, folders kept: $(sql "$tmp/trigger.sqlite" "SELECT group_concat(name) FROM folders")"
  [ "$status" = 1 ] && grep -q "trigger 'wipe' (not the store's)" "$tmp/err" || fail "trigger: exit $status: $(cat "$tmp/err")"
  [ "$(sql "$tmp/trigger.sqlite" "SELECT name FROM folders")" = "$(basename "$good")" ] || fail "the stored folder is gone"
  sql "$tmp/view.sqlite" "ALTER TABLE folders RENAME TO f0; CREATE VIEW folders AS WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT f0.* FROM f0, c"
  bounded 5 "$harness" history --db "$tmp/view.sqlite"
  echo "history of a store with a recursive view: exit $status in $secs s"
  [ "$status" = 1 ] && grep -q "view 'folders' (not the store's)" "$tmp/err" || fail "view: exit $status: $(cat "$tmp/err")"
  echo "ok: a store with a trigger or a view is refused when opened, naming it; nothing stored is deleted"
  # Names with ESC and BEL: escaped on the terminal, kept as data in JSON.
  evil=$(copy "$(printf 'ev\033]0;owned\007il')-20260101T000000Z")
  python3 - "$evil/raw/t-m64/run.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); j["test"] = "t\u001b[2J\u001b[H\u0007"; j["role"] = "r\u001b[31m\u0007"
json.dump(j, open(sys.argv[1], "w"))
PY
  evil_big="$tmp/in/$(printf 'big\033[2K\rFORGED\007')-20260101T000000Z"
  cp -r "$big" "$evil_big"
  bounded 10 "$harness" db import --db "$tmp/names.sqlite" "$evil" "$evil_big"
  cat "$tmp/out" "$tmp/err" > "$tmp/import"
  bounded 10 "$harness" history --db "$tmp/names.sqlite"
  echo "control bytes on the terminal: db import $(controls "$tmp/import"), history $(controls "$tmp/out")"
  [ "$(controls "$tmp/import")" = 0 ] && [ "$(controls "$tmp/out")" = 0 ] || fail "raw control bytes: $(cat -v "$tmp/import" "$tmp/out")"
  grep -q 'test t\\x1b\[2J' "$tmp/out" || fail "history does not show the escaped name: $(cat "$tmp/out")"
  "$harness" history --db "$tmp/names.sqlite" --json | grep -q '"t\\u001b\[2J' || fail "the JSON does not keep the name"
  echo "ok: names with ESC and BEL escaped on the terminal, kept in JSON"
  # A file the report writes is not written through a symlink the folder holds.
  echo "not a summary" > "$tmp/victim"
  ln -s "$tmp/victim" "$good/summary.json.tmp"
  "$harness" report "$good" > /dev/null 2>&1 || fail "report of the good folder"
  [ "$(cat "$tmp/victim")" = "not a summary" ] || fail "summary.json was written through a symlink"
  echo "ok: a summary.json.tmp symlink is not written through"
  ;;
*)
  echo "unknown case $case_name"; exit 2 ;;
esac
