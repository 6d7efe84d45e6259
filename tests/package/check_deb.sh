#!/bin/sh
# The Debian package as Debian expects it: cpack makes it from the built tree (into a folder of its own,
# so a concurrent `--target package` is left alone), then: Installed-Size under 15 MB, every shipped ELF
# stripped (no .symtab, no .debug_info), a man page per program, copyright and changelog.Debian.gz, a
# real maintainer, and no lintian error (exit 77 when lintian is not installed, once the rest passed).
# Arguments: the build folder (its CPackConfig.cmake), then, when the build makes no package, the reason
# (the test is skipped with it).
set -u
build=$1
skip_reason=${2:-}
if [ -n "$skip_reason" ]; then
  echo "SKIP: no Debian package from this build: $skip_reason"
  exit 77
fi
tmp=$(mktemp -d /tmp/check-deb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=1; }

if ! cpack --config "$build/CPackConfig.cmake" -G DEB -B "$tmp/out" >"$tmp/cpack.log" 2>&1; then
  echo "FAIL: cpack:"; cat "$tmp/cpack.log"; exit 1
fi
deb=$(find "$tmp/out" -maxdepth 1 -name '*.deb' | head -n 1)
[ -n "$deb" ] || { echo "FAIL: cpack made no .deb:"; cat "$tmp/cpack.log"; exit 1; }
echo "package: $(basename "$deb")"

dpkg-deb -I "$deb" >"$tmp/info" || { echo "FAIL: dpkg-deb -I $deb"; exit 1; }
grep -E '^ (Installed-Size|Maintainer):' "$tmp/info"
size=$(sed -n 's/^ Installed-Size: *\([0-9]*\).*/\1/p' "$tmp/info")
[ -n "$size" ] || fail "no Installed-Size"
[ -n "$size" ] && [ "$size" -ge 15360 ] && fail "Installed-Size ${size} KiB, want under 15 MB (15360 KiB)"
maintainer=$(sed -n 's/^ Maintainer: *//p' "$tmp/info")
case "$maintainer" in
  ""|*@localhost*) fail "maintainer '$maintainer': want the project's address, not @localhost" ;;
esac

dpkg-deb -x "$deb" "$tmp/root" || { echo "FAIL: dpkg-deb -x $deb"; exit 1; }
elves=0
find "$tmp/root" -type f >"$tmp/files"
while IFS= read -r f; do
  [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = "177ELF" ] || continue
  elves=$((elves + 1))
  sections=$(readelf -S --wide "$f")
  for s in .symtab .debug_info; do
    printf '%s\n' "$sections" | grep -qF " $s " && fail "${f#"$tmp/root"} is not stripped: it has $s"
  done
done <"$tmp/files"
[ "$elves" -ge 3 ] || fail "$elves ELF files in the package, want at least harness, netload and netserve"

for p in harness netload netserve; do
  page=$tmp/root/usr/share/man/man1/$p.1.gz
  if [ ! -f "$page" ]; then fail "no man page usr/share/man/man1/$p.1.gz"; continue; fi
  gzip -dc "$page" | grep -q '^\.TH' || fail "$p.1.gz is no gzip'd man page"
done
doc=$tmp/root/usr/share/doc/netbench
head -n 1 "$doc/copyright" 2>/dev/null | grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' ||
  fail "no machine-readable usr/share/doc/netbench/copyright"
gzip -dc "$doc/changelog.Debian.gz" 2>/dev/null | head -n 1 | grep -q '^netbench (.*) unstable; urgency=medium$' ||
  fail "no usr/share/doc/netbench/changelog.Debian.gz with an entry for unstable"

if ! command -v lintian >/dev/null; then
  [ "$fails" -eq 0 ] || exit 1
  echo "SKIP: lintian is not installed (apt install lintian, or scripts/bootstrap); every other check passed"
  exit 77
fi
lintian "$deb" >"$tmp/lintian" 2>&1
echo "lintian:"; cat "$tmp/lintian"
grep -q '^E: ' "$tmp/lintian" && fail "lintian reports errors (E: lines above)"
exit "$fails"
