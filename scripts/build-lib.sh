# Build helpers shared by the root and bench scripts. Sourced, not run; they work from any
# directory (paths they print are absolute).

NX_BUILD_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# nx_jar: the router's shaded jar (not the -original one), or nothing.
nx_jar() {
  ls "$NX_BUILD_ROOT"/target/nexuscore-*.jar 2>/dev/null | grep -v -- '-original' | head -1 || true
}

# nx_fresh_jar: prints the router's shaded jar, building it first when it is missing or older than
# any source (NEXUSCORE_JAR names a ready jar instead). Build output goes to stderr.
nx_fresh_jar() {
  if [ -n "${NEXUSCORE_JAR:-}" ]; then
    echo "$NEXUSCORE_JAR"
    return
  fi
  local jar
  jar=$(nx_jar)
  if [ -z "$jar" ] || [ -n "$(find "$NX_BUILD_ROOT/pom.xml" "$NX_BUILD_ROOT/src" -type f -newer "$jar" -print -quit)" ]; then
    echo "building the jar (mvn package -DskipTests)" >&2
    (cd "$NX_BUILD_ROOT" && mvn -B -q -ntp package -DskipTests) >&2
    jar=$(nx_jar)
  fi
  echo "$jar"
}

# nx_bench_classpath MAIN_CLASS: prints a classpath holding the load generators and peer servers
# (src/bench/java, compiled to target/bench-classes), the main classes and the compile-scope
# dependencies (provided ones included: jtokkit for the routing evaluation),
# compiling first when MAIN_CLASS is missing or older than any source. No test classes: the load
# generators are a source set of their own.
nx_bench_classpath() {
  local root="$NX_BUILD_ROOT"
  local class_file="$root/target/bench-classes/${1//.//}.class" deps="$root/target/bench-classpath.txt"
  if [ ! -f "$class_file" ] || [ -n "$(find "$root/src/main" "$root/src/bench" "$root/pom.xml" -type f -newer "$class_file" -print -quit)" ] \
     || [ ! -f "$deps" ] || [ "$root/pom.xml" -nt "$deps" ]; then
    echo "compiling the load generators (mvn process-classes)" >&2
    (cd "$root" && mvn -B -q -ntp process-classes dependency:build-classpath \
      -Dmdep.outputFile="$deps" -Dmdep.includeScope=compile) >&2
  fi
  echo "$root/target/bench-classes:$root/target/classes:$(cat "$deps")"
}

# nx_test_classpath MAIN_CLASS: prints a classpath holding the compiled test classes (benchmarks that
# reuse test fixtures, e.g. kernel packets) and every dependency, compiling them first when
# MAIN_CLASS is missing or older than any source.
nx_test_classpath() {
  local root="$NX_BUILD_ROOT"
  local class_file="$root/target/test-classes/${1//.//}.class" deps="$root/target/test-classpath.txt"
  if [ ! -f "$class_file" ] || [ -n "$(find "$root/src" "$root/pom.xml" -type f -newer "$class_file" -print -quit)" ] \
     || [ ! -f "$deps" ] || [ "$root/pom.xml" -nt "$deps" ]; then
    echo "compiling the test classes (mvn test-compile)" >&2
    (cd "$root" && mvn -B -q -ntp test-compile dependency:build-classpath \
      -Dmdep.outputFile="$deps" -Dmdep.includeScope=test) >&2
  fi
  echo "$root/target/test-classes:$root/target/bench-classes:$root/target/classes:$(cat "$deps")"
}
