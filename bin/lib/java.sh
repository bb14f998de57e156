# Sourced by the bin/ scripts: sets EDGELM_JAVA_HOME to a JDK whose major version is 25 or newer.
# Order: JAVA_HOME, the java on PATH, then the usual install folders.

edgelm_java_major() {
  # the JDK's release file names its version (JAVA_VERSION="25.0.3"); reading it costs nothing, where asking the
  # java binary starts a JVM (a third of a second of every command)
  local v=""
  if [ -f "$1/release" ]; then
    v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release" | head -n1)
  fi
  if [ -n "$v" ]; then
    echo "$v"
    return
  fi
  "$1/bin/java" -XshowSettings:properties -version 2>&1 \
    | sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p' | head -n1
}

edgelm_find_java() {
  local candidates=() d
  [ -n "${JAVA_HOME:-}" ] && candidates+=("$JAVA_HOME")
  if command -v java >/dev/null 2>&1; then
    d=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
    candidates+=("$d")
  fi
  # EDGELM_JDK_SEARCH replaces the usual install folders (a space-separated list of globs)
  local search=${EDGELM_JDK_SEARCH:-'/usr/lib/jvm/* /opt/java/* /opt/jdk* '"$HOME"'/.sdkman/candidates/java/* /Library/Java/JavaVirtualMachines/*/Contents/Home'}
  for d in $search; do
    [ -d "$d" ] && candidates+=("$d")
  done
  local seen=""
  for d in "${candidates[@]}"; do
    if [ -x "$d/bin/java" ]; then
      local major
      major=$(edgelm_java_major "$d")
      if [ -n "$major" ] && [ "$major" -ge 25 ] && [ -x "$d/bin/javac" ]; then
        EDGELM_JAVA_HOME="$d"
        return 0
      fi
      seen="$seen ${d} (Java ${major:-?}$([ -x "$d/bin/javac" ] || echo ', no javac: a JRE')),"
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
