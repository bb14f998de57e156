#!/usr/bin/env bash
# Fuzzes one target with Jazzer (coverage-guided, libFuzzer) for a set time:
#   tools/fuzz/run.sh TARGET [SECONDS]        e.g. tools/fuzz/run.sh ggufRead 600
# TARGET is a @FuzzTest method of */src/test/java/dev/edgelm/fuzz/*FuzzTest.java (tools/fuzz/run.sh --list names
# them). New coverage goes to .cifuzz-corpus/ (not committed); an input that breaks the property is written as
# crash-<sha1> into the target's inputs folder under src/test/resources/dev/edgelm/fuzz/, where
# `bin/mvn -B test` replays it from then on. The fuzzing JVM gets a 1 GiB heap, so an allocation sized by a
# lying header shows up as an OutOfMemoryError, and each input gets 60 s of wall-clock time before it counts as a hang (generous: a niced JVM on a loaded machine runs slowly).
# Set FUZZ_NO_COMPILE=1 to reuse the modules' target/ as built (lets two targets run side by side).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
src="edgelm-core/src/test/java/dev/edgelm/fuzz edgelm-server/src/test/java/dev/edgelm/fuzz"
if [ "${1:-}" = "--list" ] || [ $# -lt 1 ]; then
  grep -B1 -h "^    void " $(for d in $src; do echo $d/*FuzzTest.java; done) | grep -A1 "@FuzzTest" | sed -n 's/^    void \([A-Za-z0-9]*\)(.*/\1/p'
  [ $# -ge 1 ] || { echo "usage: tools/fuzz/run.sh TARGET [SECONDS]" >&2; exit 2; }
  exit 0
fi
target=$1
seconds=${2:-600}
file=$(grep -l "^    void $target(" $(for d in $src; do echo $d/*FuzzTest.java; done) | head -1 || true)
if [ -z "$file" ]; then
  echo "run.sh: no fuzz target '$target' (tools/fuzz/run.sh --list)" >&2
  exit 2
fi
class=$(basename "$file" .java)
module=${file%%/*}
# edgelm-core runs alone; a module above it needs core's classes and test helpers from this build, which Maven
# hands over only when the build runs a phase (test-compile: nothing to do when the classes are up to date)
if [ "$module" = edgelm-core ]; then modules=(-pl edgelm-core); else modules=(-pl "$module" -am test-compile); fi
if [ -z "${FUZZ_NO_COMPILE:-}" ]; then
  bin/mvn -B -q test-compile
fi
export JAZZER_FUZZ=1
export JAZZER_MAX_DURATION="${seconds}s"
exec bin/mvn -B -q -o "${modules[@]}" surefire:test -Dtest="$class#$target" -Dsurefire.failIfNoSpecifiedTests=false \
  -DreportsDirectory="target/fuzz-reports/$target" \
  -Djvm.flags="--add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -Xmx1g -XX:+EnableDynamicAgentLoading" \
  -Djunit.jupiter.execution.timeout.default=60s
