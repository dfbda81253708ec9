package io.nexuscore.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.config.ConfigException;
import io.nexuscore.config.RouterConfig;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/configuration.md documents exactly the keys the configuration accepts: none missing, none
 * that the code lacks.
 *
 * <p>The key set comes from the code itself, not from a list kept beside it: every config section
 * rejects a field it does not know with "x.y is not a known setting (known: [...])", so the test
 * hands {@link RouterConfig#fromJson} a probe field in each section and reads the section's keys off
 * the error; a key whose value, given an object holding the probe, is refused the same way is a
 * section of its own and is walked in turn. A key added to a record is therefore a key this test
 * expects in the document, and a key removed from the code fails a document that still lists it.
 * The three tiers accept the same keys and are documented once as {@code tiers.<tier>.*}.
 */
class ConfigReferenceTest {

    private static final String PROBE = "__undocumented_probe__";
    private static final Pattern KNOWN = Pattern.compile("is not a known setting \\(known: \\[([^\\]]*)\\]\\)");
    private static final Set<String> TIERS = Set.of("nano", "small", "large");

    /** Leaf keys and section keys of the configuration, with tier names folded into {@code <tier>}. */
    record Keys(Set<String> leaves, Set<String> sections) {
    }

    static Keys fromCode() {
        Map<String, Set<String>> leavesPerTier = new TreeMap<>();
        Set<String> leaves = new TreeSet<>();
        Set<String> sections = new TreeSet<>();
        walk(List.of(), leaves, sections);
        // Fold tiers.nano.x, tiers.small.x, tiers.large.x into tiers.<tier>.x, once the three agree.
        Set<String> folded = new TreeSet<>();
        for (String key : leaves) {
            String[] parts = key.split("\\.");
            if (parts.length > 2 && parts[0].equals("tiers") && TIERS.contains(parts[1])) {
                String rest = String.join(".", Arrays.copyOfRange(parts, 2, parts.length));
                leavesPerTier.computeIfAbsent(parts[1], t -> new TreeSet<>()).add(rest);
                folded.add("tiers.<tier>." + rest);
            } else {
                folded.add(key);
            }
        }
        assertEquals(TIERS, leavesPerTier.keySet(), "every tier has settings");
        assertEquals(1, Set.copyOf(leavesPerTier.values()).size(), "the three tiers accept the same keys: " + leavesPerTier);
        Set<String> foldedSections = new TreeSet<>();
        for (String section : sections) {
            foldedSections.add(section.replaceFirst("^tiers\\.(nano|small|large)(?=$|\\.)", "tiers.<tier>"));
        }
        return new Keys(folded, foldedSections);
    }

    private static void walk(List<String> path, Set<String> leaves, Set<String> sections) {
        Set<String> known = knownAt(path);
        assertTrue(known != null && !known.isEmpty(), "section '" + String.join(".", path) + "' names its keys when refusing a field");
        for (String key : known) {
            List<String> child = new ArrayList<>(path);
            child.add(key);
            if (knownAt(child) != null) {
                sections.add(String.join(".", child));
                walk(child, leaves, sections);
            } else {
                leaves.add(String.join(".", child));
            }
        }
    }

    /** The keys the section at {@code path} accepts, or null when that value is not a section refusing unknown fields. */
    static Set<String> knownAt(List<String> path) {
        JsonObject section = new JsonObject().put(PROBE, 1);
        JsonObject root = section;
        for (int i = path.size() - 1; i >= 0; i--) {
            root = new JsonObject().put(path.get(i), root);
        }
        try {
            RouterConfig.fromJson(root);
        } catch (ConfigException e) {
            String where = path.isEmpty() ? PROBE : String.join(".", path) + "." + PROBE;
            Matcher m = KNOWN.matcher(e.getMessage());
            if (e.getMessage().startsWith(where + " ") && m.find()) {
                Set<String> keys = new TreeSet<>();
                for (String key : m.group(1).split(",")) {
                    keys.add(key.strip());
                }
                return keys;
            }
        }
        return null;
    }

    /**
     * The setting names in the first column of docs/configuration.md's setting tables. The first name
     * in a cell is written whole; the others in the same cell may be siblings written short
     * ({@code control.host} / {@code port}); {@code a.{b,c}} stands for a.b and a.c.
     */
    static Set<String> documented() {
        Set<String> names = new TreeSet<>();
        boolean inSettingTable = false;
        for (String line : Docs.read(Docs.root().resolve("docs/configuration.md")).split("\n")) {
            if (!line.startsWith("|")) {
                inSettingTable = false;
                continue;
            }
            if (line.matches("\\|\\s*setting\\s*\\|.*")) {
                inSettingTable = true;
                continue;
            }
            if (!inSettingTable || line.matches("\\|[-\\s|]+\\|?")) {
                continue;
            }
            String cell = line.substring(1, line.indexOf('|', 1));
            Matcher code = Pattern.compile("`([^`]+)`").matcher(cell);
            String parent = null;
            while (code.find()) {
                String name = code.group(1);
                if (name.contains(".")) {
                    parent = name.substring(0, name.lastIndexOf('.', name.contains("{") ? name.indexOf('{') : name.length()));
                    names.addAll(expand(name));
                } else if (parent != null) {
                    names.addAll(expand(parent + "." + name));
                } else {
                    throw new AssertionError("docs/configuration.md: '" + name + "' in a setting table without its section: " + line);
                }
            }
        }
        return names;
    }

    private static List<String> expand(String name) {
        Matcher brace = Pattern.compile("^(.*)\\{([^}]*)\\}$").matcher(name);
        if (!brace.matches()) {
            return List.of(name);
        }
        List<String> out = new ArrayList<>();
        for (String part : brace.group(2).split(",")) {
            out.add(brace.group(1) + part.strip());
        }
        return out;
    }

    @Test
    void theCodeNamesItsKeys() {
        Keys keys = fromCode();
        // Spot checks that the walk went everywhere: a root key, a nested record, a tier, an upstream.
        assertTrue(keys.leaves().containsAll(Set.of("dataPlane.port", "telemetry.otlp.endpoint", "tiers.<tier>.engine",
                "tiers.<tier>.upstream.baseUrls", "scoring.weights.sum", "cluster.kubernetes.namespace")), keys.leaves().toString());
        assertTrue(keys.sections().containsAll(Set.of("dataPlane", "tiers", "tiers.<tier>", "tiers.<tier>.upstream")), keys.sections().toString());
    }

    @Test
    void everyKeyTheCodeAcceptsIsDocumented() {
        Set<String> missing = new TreeSet<>(fromCode().leaves());
        missing.removeAll(documented());
        assertEquals(Set.of(), missing, "keys the config records accept that docs/configuration.md does not document");
    }

    @Test
    void everyDocumentedKeyExistsInTheCode() {
        Keys keys = fromCode();
        Set<String> unknown = new TreeSet<>(documented());
        unknown.removeAll(keys.leaves());
        unknown.removeAll(keys.sections()); // a row may describe a whole section (tiers.<tier>.upstream)
        assertEquals(Set.of(), unknown, "keys docs/configuration.md documents that the config records do not accept");
    }
}
