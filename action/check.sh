#!/usr/bin/env bash
# The shell part of action.yml: installs folio's release archive for this runner and runs
# `folio check`. Also usable on any CI with bash, curl (or wget) and tar:
#
#   FOLIO_VERSION=v0.1.0 FOLIO_ROOT=docs action/check.sh
#
# Environment: FOLIO_VERSION (the release tag, required), FOLIO_ROOT (default .),
# FOLIO_FORMAT (github, text or json; default github), FOLIO_DOWNLOAD_URL (the folder of
# the release's archives; default the GitHub release), RUNNER_OS / RUNNER_ARCH (GitHub's
# names; else uname), RUNNER_TEMP (where folio is unpacked; else a temporary folder),
# GITHUB_OUTPUT (the `folio` output is written there when set).
# Exit status: folio check's (0 clean, 1 broken links, 2 a fatal error, 3 skipped files),
# or 2 when the archive cannot be fetched or does not match its checksum.
set -euo pipefail

fail() {
  echo "folio check action: $*" >&2
  exit 2
}

version=${FOLIO_VERSION:-}
[ -n "$version" ] || fail "FOLIO_VERSION must name a folio release tag, such as v0.1.0"
# A tag as the releases are named: v, then MAJOR.MINOR.PATCH, then an optional pre-release.
if ! printf '%s' "$version" | grep -Eqx 'v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?'; then
  fail "version '$version' is not a release tag (v0.1.0, …)"
fi
root=${FOLIO_ROOT:-.}
format=${FOLIO_FORMAT:-github}
base=${FOLIO_DOWNLOAD_URL:-https://github.com/folio-kb/folio/releases/download/$version}
base=${base%/}

os=${RUNNER_OS:-$(uname -s)}
arch=${RUNNER_ARCH:-$(uname -m)}
case "$os/$arch" in
  Linux/X64 | Linux/x86_64) target=x86_64-unknown-linux-gnu ext=tar.xz ;;
  Linux/ARM64 | Linux/aarch64) target=aarch64-unknown-linux-gnu ext=tar.xz ;;
  macOS/X64 | Darwin/x86_64) target=x86_64-apple-darwin ext=tar.xz ;;
  macOS/ARM64 | Darwin/arm64) target=aarch64-apple-darwin ext=tar.xz ;;
  Windows/X64 | MINGW*/x86_64 | MSYS*/x86_64) target=x86_64-pc-windows-msvc ext=zip ;;
  *) fail "no folio release for $os/$arch" ;;
esac
archive="folio-md-$target.$ext"

work=${RUNNER_TEMP:-$(mktemp -d)}/folio-$version
mkdir -p "$work"
fetch() { # url file
  if command -v curl >/dev/null; then
    curl --fail --silent --show-error --location --retry 3 --output "$2" "$1"
  else
    wget --quiet --output-document="$2" "$1"
  fi
}
fetch "$base/$archive" "$work/$archive" || fail "cannot download $base/$archive"
fetch "$base/$archive.sha256" "$work/$archive.sha256" || fail "cannot download $base/$archive.sha256"
expected=$(tr -d '\r' < "$work/$archive.sha256" | cut -d' ' -f1 | tr 'A-F' 'a-f')
printf '%s' "$expected" | grep -Eqx '[0-9a-f]{64}' || fail "$archive.sha256 does not start with a SHA-256"
if command -v sha256sum >/dev/null; then
  got=$(sha256sum "$work/$archive" | cut -d' ' -f1)
else
  got=$(shasum -a 256 "$work/$archive" | cut -d' ' -f1)
fi
[ "$got" = "$expected" ] || fail "$archive has SHA-256 $got, the release says $expected"

case "$ext" in
  tar.xz) tar -xJf "$work/$archive" -C "$work" || fail "cannot unpack $archive" ;;
  zip) unzip -q -o "$work/$archive" -d "$work" || fail "cannot unpack $archive" ;;
esac
folio=$(find "$work" -type f \( -name folio -o -name folio.exe \) | head -n 1)
[ -n "$folio" ] || fail "$archive holds no folio executable"
chmod +x "$folio"
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "folio=$folio" >> "$GITHUB_OUTPUT"
fi
echo "folio check action: $("$folio" --version) from $archive" >&2
exec "$folio" check --root "$root" --format "$format"
