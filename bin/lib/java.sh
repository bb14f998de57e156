# Sourced by the bin/ scripts: sets EDGELM_JAVA_HOME to a JDK whose major version is 25 or newer.
# Order: JAVA_HOME, the java on PATH, then the usual install folders. Call it as `edgelm_find_java || exit 1`:
# a bare call under `set -e` would let any failing command inside end the script without a word. A folder whose
# bin/java is missing or not an executable file is skipped and named in the error when no JDK 25 is found.

edgelm_java_major() {
  # the JDK's release file names its version (JAVA_VERSION="25.0.3"); reading it costs nothing, where asking the
  # java binary starts a JVM (a third of a second of every command)
  local v=""
  if [ -f "$1/release" ] && [ -r "$1/release" ]; then
    v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release" 2>/dev/null | head -n1) || v=""
  fi
  if [ -n "$v" ]; then
    echo "$v"
    return 0
  fi
  # no release file: ask the java itself (one that does not run gives no version, so the folder is skipped)
  ("$1/bin/java" -XshowSettings:properties -version 2>&1 || true) \
    | sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p' | head -n1
  return 0
}

edgelm_find_java() {
  local candidates=() d
  [ -n "${JAVA_HOME:-}" ] && candidates+=("$JAVA_HOME")
  if command -v java >/dev/null 2>&1; then
    d=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
    candidates+=("$d")
  fi
  # EDGELM_JDK_SEARCH replaces the usual install folders (a space-separated list of globs)
  local search=${EDGELM_JDK_SEARCH:-'/usr/lib/jvm/* /opt/java/* /opt/jdk* '"${HOME:-}"'/.sdkman/candidates/java/* /Library/Java/JavaVirtualMachines/*/Contents/Home'}
  for d in $search; do
    [ -d "$d" ] && candidates+=("$d")
  done
  local seen="" major
  for d in "${candidates[@]}"; do
    if [ ! -f "$d/bin/java" ] || [ ! -x "$d/bin/java" ]; then
      # the install folders' globs match other folders too; JAVA_HOME, or a folder that says it is a JDK, is named
      if [ "$d" = "${JAVA_HOME:-}" ] || [ -f "$d/release" ]; then
        seen="$seen ${d} ($([ -e "$d/bin/java" ] && echo 'bin/java is not an executable file' || echo 'no bin/java')),"
      fi
      continue
    fi
    major=$(edgelm_java_major "$d") || major=""
    case "$major" in *[!0-9]*) major="" ;; esac
    if [ -n "$major" ] && [ "$major" -ge 25 ] && [ -f "$d/bin/javac" ] && [ -x "$d/bin/javac" ]; then
      EDGELM_JAVA_HOME="$d"
      return 0
    fi
    if [ -z "$major" ]; then
      seen="$seen ${d} (bin/java gave no version: a broken install?),"
    else
      seen="$seen ${d} (Java ${major}$([ -x "$d/bin/javac" ] || echo ', no javac: a JRE')),"
    fi
  done
  cat >&2 <<MSG
edgelm: EdgeLM needs a JDK 25 (or newer); none was found in JAVA_HOME, the java on the PATH or the usual install folders.
${seen:+  found instead:${seen%,}
}Install one, then run this again (or set JAVA_HOME to it):
  Debian, Ubuntu:  sudo apt-get install openjdk-25-jdk
  Fedora, RHEL:    sudo dnf install java-25-openjdk-devel
  macOS:           brew install openjdk@25
  Windows:         winget install EclipseAdoptium.Temurin.25.JDK
  any system:      https://adoptium.net/temurin/releases/?version=25  or  https://jdk.java.net/25/
MSG
  return 1
}
