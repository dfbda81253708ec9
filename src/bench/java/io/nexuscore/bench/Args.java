package io.nexuscore.bench;

import java.util.HashMap;
import java.util.Map;

/** {@code --name value} command-line options for the benchmark mains. */
final class Args {

    private final Map<String, String> values;

    private Args(Map<String, String> values) {
        this.values = values;
    }

    static Args parse(String[] args) {
        Map<String, String> values = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException("expected --name value, got '" + args[i] + "'");
            }
            values.put(args[i].substring(2), args[++i]);
        }
        return new Args(values);
    }

    String value(String name, String fallback) {
        return values.getOrDefault(name, fallback);
    }

    int intValue(String name, int fallback) {
        String v = values.get(name);
        if (v == null) {
            return fallback;
        }
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + " must be an integer, got '" + v + "'");
        }
    }
}
