# Sourced by the bin/ scripts: sets EDGELM_JAVA_HOME to a JDK whose major version is 25 or newer.
# Order: JAVA_HOME, the java on PATH, then the usual install folders.

edgelm_java_major() {
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
  for d in /usr/lib/jvm/* /opt/java/* /opt/jdk* "$HOME"/.sdkman/candidates/java/* \
           /Library/Java/JavaVirtualMachines/*/Contents/Home; do
    [ -d "$d" ] && candidates+=("$d")
  done
  for d in "${candidates[@]}"; do
    if [ -x "$d/bin/java" ] && [ -x "$d/bin/javac" ]; then
      local major
      major=$(edgelm_java_major "$d")
      if [ -n "$major" ] && [ "$major" -ge 25 ]; then
        EDGELM_JAVA_HOME="$d"
        return 0
      fi
    fi
  done
  echo "edgelm: no JDK 25 found (looked at JAVA_HOME, java on PATH and the usual install folders); install one or set JAVA_HOME" >&2
  return 1
}
