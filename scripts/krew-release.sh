#!/usr/bin/env bash
# Package kubectl-crd release archives for krew and fill in the krew manifest.
#
# For each Rust target triple, takes target/<triple>/release/kubectl-crd (for the
# host triple, target/release/kubectl-crd is accepted too), packages it with LICENSE,
# README.md and krew/kubectl_complete-crd (kubectl's plugin completion) into DIR/kubectl-crd_<VERSION>_<os>_<arch>.tar.gz (deterministically:
# sorted names, mtime 0, owner and group 0, gzip without name or timestamp), and
# rewrites the manifest's spec.version and each platform's uri and sha256.
#
# Needs only bash, GNU tar, gzip, sha256sum (or shasum) and python3 (standard library).
# Run with --help for the options.
set -euo pipefail

readonly PROG="krew-release"
readonly ALL_TARGETS="x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu x86_64-apple-darwin aarch64-apple-darwin"
readonly DEFAULT_BASE_URL="https://github.com/kubectl-crd/kubectl-crd/releases/download"

usage() {
    cat <<EOF
Usage: scripts/krew-release.sh VERSION [options]

Package kubectl-crd for krew and fill krew/crd.yaml's spec.version, uri and sha256.

VERSION is a semantic version, with or without the leading "v" (0.1.0 or v0.1.0);
archives and the manifest always use the "v" form.

Options:
  --targets "TRIPLE ..."  Rust target triples to package (default: all of
                          $ALL_TARGETS)
  --out DIR               where to write the archives (default: dist/)
  --manifest FILE         manifest to read and rewrite (default: krew/crd.yaml)
  --target-dir DIR        cargo target directory holding the binaries (default:
                          \$KUBECTL_CRD_TARGET_DIR, else \$CARGO_TARGET_DIR, else target/)
  --base-url URL          release download URL prefix; the uri is
                          URL/VERSION/ARCHIVE (default: \$KUBECTL_CRD_RELEASE_BASE_URL,
                          else $DEFAULT_BASE_URL)
  --build                 run 'cargo build --release --target TRIPLE' first, for the
                          targets whose Rust standard library is installed
  --allow-missing         do not fail when a platform has no binary (or is not among
                          --targets): its uri and sha256 keep their previous values
                          and a warning is printed
  -h, --help              show this help

Platforms: x86_64-unknown-linux-gnu=linux/amd64, aarch64-unknown-linux-gnu=linux/arm64,
x86_64-apple-darwin=darwin/amd64, aarch64-apple-darwin=darwin/arm64.
EOF
}

die() {
    echo "$PROG: error: $*" >&2
    exit 1
}

warn() {
    echo "$PROG: warning: $*" >&2
}

# Prints "os arch" for a supported target triple; fails for any other.
platform_of() {
    case "$1" in
        x86_64-unknown-linux-gnu) echo "linux amd64" ;;
        aarch64-unknown-linux-gnu) echo "linux arm64" ;;
        x86_64-apple-darwin) echo "darwin amd64" ;;
        aarch64-apple-darwin) echo "darwin arm64" ;;
        *) return 1 ;;
    esac
}

sha256_of() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | awk '{print $1}'
    else
        shasum -a 256 "$1" | awk '{print $1}'
    fi
}

# GNU tar is needed for --sort=name; on macOS it is usually installed as gtar.
find_gnu_tar() {
    local candidate
    for candidate in tar gtar; do
        if command -v "$candidate" >/dev/null 2>&1 \
            && "$candidate" --version 2>/dev/null | head -n 1 | grep -q 'GNU tar'; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

host_triple() {
    if command -v rustc >/dev/null 2>&1; then
        rustc -vV | sed -n 's/^host: //p'
    fi
}

target_installed() {
    local triple="$1"
    if command -v rustup >/dev/null 2>&1; then
        rustup target list --installed 2>/dev/null | grep -qx "$triple"
    else
        [ "$triple" = "$HOST_TRIPLE" ]
    fi
}

# Prints the path of the binary for a triple, or nothing when there is none.
find_binary() {
    local triple="$1"
    if [ -f "$TARGET_DIR/$triple/release/kubectl-crd" ]; then
        echo "$TARGET_DIR/$triple/release/kubectl-crd"
    elif [ "$triple" = "$HOST_TRIPLE" ] && [ -f "$TARGET_DIR/release/kubectl-crd" ]; then
        echo "$TARGET_DIR/release/kubectl-crd"
    fi
}

# package BINARY OS ARCH: writes the archive and prints its path.
package() {
    local binary="$1" os="$2" arch="$3"
    local stage="$WORK_DIR/${os}_${arch}"
    local archive="$OUT_DIR/kubectl-crd_${VERSION}_${os}_${arch}.tar.gz"
    mkdir -p "$stage"
    cp "$binary" "$stage/kubectl-crd"
    cp "$ROOT/LICENSE" "$stage/LICENSE"
    cp "$ROOT/README.md" "$stage/README.md"
    cp "$ROOT/krew/kubectl_complete-crd" "$stage/kubectl_complete-crd"
    chmod 0755 "$stage/kubectl-crd" "$stage/kubectl_complete-crd"
    chmod 0644 "$stage/LICENSE" "$stage/README.md"
    LC_ALL=C "$TAR" --create --file=- --directory="$stage" --format=gnu \
        --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
        LICENSE README.md kubectl-crd kubectl_complete-crd \
        | gzip -n -9 >"$archive.partial"
    mv "$archive.partial" "$archive"
    echo "$archive"
}

# rewrite_manifest check|write MANIFEST VERSION ALLOW_MISSING [OS ARCH URI SHA256]...
# Edits the YAML text line by line so that comments and layout are kept; the
# platforms are found by their selector.matchLabels os and arch. "check" does
# every validation but writes nothing, so problems surface before packaging.
rewrite_manifest() {
    python3 - "$@" <<'PY'
import os
import re
import sys
import tempfile

mode, manifest, version = sys.argv[1], sys.argv[2], sys.argv[3]
allow_missing = sys.argv[4] == "1"
rest = sys.argv[5:]
updates = [tuple(rest[i:i + 4]) for i in range(0, len(rest), 4)]


def fail(message):
    print(f"krew-release: error: {manifest}: {message}", file=sys.stderr)
    sys.exit(1)


def indent_of(line):
    return len(line) - len(line.lstrip(" "))


def is_content(line):
    stripped = line.strip()
    return stripped != "" and not stripped.startswith("#")


def scalar(value):
    value = re.sub(r"\s+#.*$", "", value).strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    return value


with open(manifest, encoding="utf-8") as f:
    lines = f.read().splitlines(keepends=True)

# spec: the top-level mapping, up to the next top-level key.
spec_start = next((i for i, l in enumerate(lines) if re.match(r"^spec:\s*(#.*)?$", l)), None)
if spec_start is None:
    fail("no top-level `spec:` key")
spec_end = next(
    (i for i in range(spec_start + 1, len(lines)) if is_content(lines[i]) and indent_of(lines[i]) == 0),
    len(lines),
)
first_child = next((i for i in range(spec_start + 1, spec_end) if is_content(lines[i])), None)
if first_child is None:
    fail("`spec:` is empty")
child = indent_of(lines[first_child])


def child_key(i, key):
    return indent_of(lines[i]) == child and re.match(rf"^\s*{key}:(\s|$)", lines[i])


versions = [i for i in range(spec_start + 1, spec_end) if child_key(i, "version")]
if len(versions) != 1:
    fail(f"expected exactly one spec.version, found {len(versions)}")
lines[versions[0]] = " " * child + f"version: {version}\n"

platforms = [i for i in range(spec_start + 1, spec_end) if child_key(i, "platforms")]
if len(platforms) != 1:
    fail(f"expected exactly one spec.platforms, found {len(platforms)}")

# The platform items: "- " lines at one indent, each running to the next item.
items = []
item_indent = None
for i in range(platforms[0] + 1, spec_end):
    line = lines[i]
    if not is_content(line):
        continue
    if item_indent is None:
        if not re.match(r"^\s*-(\s|$)", line):
            fail("spec.platforms is not a block list of platforms")
        item_indent = indent_of(line)
    if indent_of(line) < item_indent or (indent_of(line) == item_indent and not line.lstrip().startswith("-")):
        break
    if indent_of(line) == item_indent:
        items.append([i, i + 1])
    else:
        items[-1][1] = i + 1
if not items:
    fail("spec.platforms is empty")

# uri and sha256 are block keys of the item (replaced whole line); os and arch
# may also sit in a flow mapping such as `matchLabels: {os: linux, arch: amd64}`.
KEY = r"^(\s*(?:-\s+)?){key}:\s*(.*?)\s*$"
LABEL = r"(?:^|[\s{{,-])({key}):\s*([\"']?[\w.-]+[\"']?)"
platforms_by_label = {}
for number, (start, end) in enumerate(items):
    found = {}
    for key, pattern, find in (
        ("os", LABEL, re.search),
        ("arch", LABEL, re.search),
        ("uri", KEY, re.match),
        ("sha256", KEY, re.match),
    ):
        hits = [(i, m) for i in range(start, end) if (m := find(pattern.format(key=key), lines[i].rstrip("\n")))]
        if len(hits) != 1:
            fail(f"spec.platforms[{number}] must have exactly one `{key}:` entry, found {len(hits)}")
        found[key] = hits[0]
    label = (scalar(found["os"][1].group(2)), scalar(found["arch"][1].group(2)))
    if label in platforms_by_label:
        fail(f"two platforms select {label[0]}/{label[1]}")
    platforms_by_label[label] = found

updated = set()
for os_name, arch, uri, sha in updates:
    label = (os_name, arch)
    if label not in platforms_by_label:
        fail(f"no platform with selector os={os_name}, arch={arch}")
    for key, value in (("uri", uri), ("sha256", sha)):
        i, m = platforms_by_label[label][key]
        lines[i] = f"{m.group(1)}{key}: {value}\n"
    updated.add(label)

stale = [f"{o}/{a}" for (o, a) in platforms_by_label if (o, a) not in updated]
if stale:
    names = ", ".join(stale)
    if not allow_missing:
        fail(f"platforms not packaged: {names} (pass --allow-missing to keep their previous uri and sha256)")
    if mode == "check":
        sys.exit(0)
    print(f"krew-release: warning: kept the previous uri and sha256 of: {names}", file=sys.stderr)
if mode == "check":
    sys.exit(0)

directory = os.path.dirname(os.path.abspath(manifest))
fd, tmp = tempfile.mkstemp(prefix=".crd.yaml.", dir=directory)
with os.fdopen(fd, "w", encoding="utf-8") as f:
    f.write("".join(lines))
os.chmod(tmp, 0o644)
os.replace(tmp, manifest)
PY
}

# --- arguments --------------------------------------------------------------

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VERSION=""
TARGETS="$ALL_TARGETS"
OUT_DIR="$ROOT/dist"
MANIFEST="$ROOT/krew/crd.yaml"
TARGET_DIR="${KUBECTL_CRD_TARGET_DIR:-${CARGO_TARGET_DIR:-$ROOT/target}}"
BASE_URL="${KUBECTL_CRD_RELEASE_BASE_URL:-$DEFAULT_BASE_URL}"
BUILD=0
ALLOW_MISSING=0

need_value() {
    [ "$2" -ge 2 ] || die "$1 needs a value"
}

while [ $# -gt 0 ]; do
    case "$1" in
        -h | --help) usage; exit 0 ;;
        --targets) need_value "$1" $#; TARGETS="$2"; shift 2 ;;
        --targets=*) TARGETS="${1#*=}"; shift ;;
        --out) need_value "$1" $#; OUT_DIR="$2"; shift 2 ;;
        --out=*) OUT_DIR="${1#*=}"; shift ;;
        --manifest) need_value "$1" $#; MANIFEST="$2"; shift 2 ;;
        --manifest=*) MANIFEST="${1#*=}"; shift ;;
        --target-dir) need_value "$1" $#; TARGET_DIR="$2"; shift 2 ;;
        --target-dir=*) TARGET_DIR="${1#*=}"; shift ;;
        --base-url) need_value "$1" $#; BASE_URL="$2"; shift 2 ;;
        --base-url=*) BASE_URL="${1#*=}"; shift ;;
        --build) BUILD=1; shift ;;
        --allow-missing) ALLOW_MISSING=1; shift ;;
        -*) usage >&2; die "unknown option: $1" ;;
        *)
            [ -z "$VERSION" ] || die "more than one VERSION given: $VERSION and $1"
            VERSION="$1"
            shift
            ;;
    esac
done

[ -n "$VERSION" ] || { usage >&2; die "VERSION is required"; }
SEMVER='^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$'
echo "${VERSION#v}" | grep -Eq "$SEMVER" \
    || die "VERSION '$VERSION' is not a semantic version such as v0.1.0"
VERSION="v${VERSION#v}"

CARGO_VERSION="$(sed -n 's/^version *= *"\(.*\)"/\1/p' "$ROOT/Cargo.toml" | head -n 1)"
if [ -n "$CARGO_VERSION" ] && [ "v$CARGO_VERSION" != "$VERSION" ]; then
    warn "VERSION $VERSION differs from Cargo.toml's package version $CARGO_VERSION"
fi

[ -f "$ROOT/LICENSE" ] || die "$ROOT/LICENSE is missing; it is packaged in every archive (krew requires a license file)"
[ -f "$ROOT/README.md" ] || die "$ROOT/README.md is missing; it is packaged in every archive"
[ -x "$ROOT/krew/kubectl_complete-crd" ] || die "$ROOT/krew/kubectl_complete-crd is missing or not executable; it is packaged in every archive"
[ -f "$MANIFEST" ] || die "manifest $MANIFEST does not exist"
[ -n "${TARGETS//[[:space:]]/}" ] || die "--targets is empty"
TAR="$(find_gnu_tar)" || die "GNU tar is required (install it as tar or gtar)"
command -v gzip >/dev/null 2>&1 || die "gzip is required"
command -v python3 >/dev/null 2>&1 || die "python3 is required"
command -v sha256sum >/dev/null 2>&1 || command -v shasum >/dev/null 2>&1 \
    || die "sha256sum (or shasum) is required"

for triple in $TARGETS; do
    platform_of "$triple" >/dev/null \
        || die "unsupported target '$triple'; supported: $ALL_TARGETS"
done

HOST_TRIPLE="$(host_triple)"
BASE_URL="${BASE_URL%/}"

# --- build (optional) and locate the binaries ---------------------------------

if [ "$BUILD" = 1 ]; then
    command -v cargo >/dev/null 2>&1 || die "--build needs cargo"
    for triple in $TARGETS; do
        if target_installed "$triple"; then
            echo "$PROG: building $triple" >&2
            (cd "$ROOT" && cargo build --release --target "$triple" --target-dir "$TARGET_DIR")
        else
            warn "target $triple is not installed (rustup target add $triple); not building it"
        fi
    done
fi

FOUND_TRIPLES=()
FOUND_BINARIES=()
MISSING=""
for triple in $TARGETS; do
    binary="$(find_binary "$triple")"
    if [ -n "$binary" ]; then
        FOUND_TRIPLES+=("$triple")
        FOUND_BINARIES+=("$binary")
    else
        MISSING="$MISSING $triple"
    fi
done

if [ -n "$MISSING" ]; then
    message="no kubectl-crd binary for:$MISSING (looked for $TARGET_DIR/<triple>/release/kubectl-crd"
    message="$message, and $TARGET_DIR/release/kubectl-crd for the host triple)"
    if [ "$ALLOW_MISSING" = 1 ]; then
        warn "$message; their platforms keep their previous uri and sha256"
    else
        die "$message; build them (see --build) or pass --allow-missing"
    fi
fi
[ "${#FOUND_TRIPLES[@]}" -gt 0 ] || die "no kubectl-crd binary found for any of the targets; nothing to package"

# --- package and rewrite the manifest ----------------------------------------

# Check the manifest (platforms present, nothing left stale without
# --allow-missing) before any archive is written.
CHECKS=()
for triple in "${FOUND_TRIPLES[@]}"; do
    read -r os arch <<<"$(platform_of "$triple")"
    CHECKS+=("$os" "$arch" "-" "-")
done
rewrite_manifest check "$MANIFEST" "$VERSION" "$ALLOW_MISSING" "${CHECKS[@]}"

WORK_DIR="$(mktemp -d)"
trap 'rm -rf "$WORK_DIR"' EXIT
mkdir -p "$OUT_DIR"
OUT_DIR="$(cd "$OUT_DIR" && pwd)"

UPDATES=()
for index in "${!FOUND_TRIPLES[@]}"; do
    triple="${FOUND_TRIPLES[$index]}"
    binary="${FOUND_BINARIES[$index]}"
    read -r os arch <<<"$(platform_of "$triple")"
    archive="$(package "$binary" "$os" "$arch")"
    sha="$(sha256_of "$archive")"
    uri="$BASE_URL/$VERSION/$(basename "$archive")"
    echo "$PROG: $os/$arch: $archive sha256=$sha" >&2
    UPDATES+=("$os" "$arch" "$uri" "$sha")
done

rewrite_manifest write "$MANIFEST" "$VERSION" "$ALLOW_MISSING" ${UPDATES[@]+"${UPDATES[@]}"}
echo "$PROG: wrote $MANIFEST (version $VERSION)" >&2
