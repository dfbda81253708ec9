package io.nexuscore.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The kernel layers import only the layers below them (issue 49): the bindings nothing of the
 * project, the map wrappers the bindings and value types, the lifecycle those and its config. Read
 * from the sources, so a new import that runs back up the layers fails here, naming the file.
 */
class KernelBoundaryTest {

    private static final Path MAIN = Path.of("src/main/java/io/nexuscore");
    private static final Pattern IMPORT = Pattern.compile("^import (?:static )?io\\.nexuscore\\.([a-z.]+)\\.[A-Z]", Pattern.MULTILINE);
    private static final Pattern FQN = Pattern.compile("\\bio\\.nexuscore\\.([a-z.]+)\\.[A-Z]");

    /** Value packages: records and enums with no dependency on any layer (checked below). */
    private static final Set<String> VALUES = Set.of("classify", "net", "misroute");

    private static final Map<String, Set<String>> ALLOWED = Map.of(
            "kernel.libbpf", Set.of(),
            "kernel.maps", union(Set.of("kernel.libbpf"), VALUES),
            "kernel", union(Set.of("kernel.libbpf", "kernel.maps", "config"), VALUES));

    @Test
    void everyKernelLayerImportsOnlyTheLayersBelowIt() throws IOException {
        Map<String, Set<String>> violations = new TreeMap<>();
        for (Map.Entry<String, Set<String>> layer : ALLOWED.entrySet()) {
            for (Path file : javaFiles(layer.getKey())) {
                for (String used : projectPackagesUsedBy(file)) {
                    if (!used.equals(layer.getKey()) && !layer.getValue().contains(used)) {
                        violations.computeIfAbsent(MAIN.relativize(file).toString(), k -> new TreeSet<>()).add(used);
                    }
                }
            }
        }
        assertEquals(Map.of(), violations, "files of a kernel layer that use a package above it");
    }

    @Test
    void valuePackagesUseNoLayer() throws IOException {
        for (String values : VALUES) {
            for (Path file : javaFiles(values)) {
                for (String used : projectPackagesUsedBy(file)) {
                    assertFalse(used.startsWith("kernel") || !VALUES.contains(used) && !used.equals(values),
                            MAIN.relativize(file) + " uses io.nexuscore." + used);
                }
            }
        }
    }

    @Test
    void theCheckSeesTheImportsItChecks() throws IOException {
        // A guard against a vacuous pass: the lifecycle really imports the maps and the bindings.
        Set<String> used = new TreeSet<>();
        for (Path file : javaFiles("kernel")) {
            used.addAll(projectPackagesUsedBy(file));
        }
        assertEquals(true, used.containsAll(List.of("kernel.libbpf", "kernel.maps", "config")), used.toString());
    }

    /** The files directly in a package (not its sub-packages). */
    private static List<Path> javaFiles(String pkg) throws IOException {
        Path dir = MAIN.resolve(pkg.replace('.', '/'));
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.toString().endsWith(".java")).sorted().toList();
        }
    }

    private static Set<String> projectPackagesUsedBy(Path file) throws IOException {
        String text = Files.readString(file);
        Set<String> used = new TreeSet<>();
        for (Pattern p : List.of(IMPORT, FQN)) {
            Matcher m = p.matcher(text);
            while (m.find()) {
                used.add(m.group(1));
            }
        }
        return used;
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        Set<String> all = new TreeSet<>(a);
        all.addAll(b);
        return all;
    }
}
