package io.nexuscore.config;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/** Typed, field-naming accessors over a config section. Unknown fields are errors, not ignored. */
final class Json {

    private final JsonObject object;
    private final String path;

    Json(JsonObject object, String path) {
        this.object = object == null ? new JsonObject() : object;
        this.path = path;
    }

    Json section(String name) {
        Object value = object.getValue(name);
        if (value != null && !(value instanceof JsonObject)) {
            throw new ConfigException(field(name) + " must be an object");
        }
        return new Json((JsonObject) value, field(name));
    }

    /** The names set in this section. */
    Set<String> keys() {
        return object.fieldNames();
    }

    boolean has(String name) {
        return object.getValue(name) != null;
    }

    String string(String name, String fallback) {
        Object value = object.getValue(name);
        if (value == null) {
            return fallback;
        }
        if (!(value instanceof String s)) {
            throw new ConfigException(field(name) + " must be a string");
        }
        return s;
    }

    long number(String name, long fallback, long min, long max) {
        Object value = object.getValue(name);
        if (value == null) {
            return fallback;
        }
        if (!(value instanceof Number n) || n.doubleValue() != Math.rint(n.doubleValue())) {
            throw new ConfigException(field(name) + " must be an integer");
        }
        long v = n.longValue();
        if (v < min || v > max) {
            throw new ConfigException(field(name) + " must be in " + min + ".." + max + ", got " + v);
        }
        return v;
    }

    int integer(String name, int fallback, int min, int max) {
        return (int) number(name, fallback, min, max);
    }

    boolean bool(String name, boolean fallback) {
        Object value = object.getValue(name);
        if (value == null) {
            return fallback;
        }
        if (!(value instanceof Boolean b)) {
            throw new ConfigException(field(name) + " must be true or false");
        }
        return b;
    }

    /** One of an enum's constants, written in lower case ({@code "io_uring"} for {@code IO_URING}). */
    <E extends Enum<E>> E choice(Class<E> type, String name, String fallback) {
        String value = string(name, fallback);
        try {
            return Enum.valueOf(type, value.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(field(name) + " must be one of "
                    + Arrays.toString(type.getEnumConstants()).toLowerCase(Locale.ROOT) + ", got '" + value + "'");
        }
    }

    List<Integer> integers(String name, List<Integer> fallback) {
        return list(name, fallback, Number.class, "integers", Number::intValue);
    }

    List<String> strings(String name, List<String> fallback) {
        return list(name, fallback, String.class, "strings", text -> text);
    }

    /** An array whose every element is a {@code type} (named {@code what} in the error), converted. */
    private <T, R> List<R> list(String name, List<R> fallback, Class<T> type, String what, Function<T, R> convert) {
        Object value = object.getValue(name);
        if (value == null) {
            return fallback;
        }
        if (!(value instanceof JsonArray array)) {
            throw new ConfigException(field(name) + " must be an array of " + what);
        }
        List<R> out = new ArrayList<>();
        for (Object o : array) {
            if (!type.isInstance(o)) {
                throw new ConfigException(field(name) + " must be an array of " + what);
            }
            out.add(convert.apply(type.cast(o)));
        }
        return List.copyOf(out);
    }

    /** An object of string values, e.g. extra headers; keys in the order the file gives them. */
    Map<String, String> stringMap(String name, Map<String, String> fallback) {
        Object value = object.getValue(name);
        if (value == null) {
            return fallback;
        }
        if (!(value instanceof JsonObject map)) {
            throw new ConfigException(field(name) + " must be an object of strings");
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (String key : map.fieldNames()) {
            if (!(map.getValue(key) instanceof String s)) {
                throw new ConfigException(field(name) + "." + key + " must be a string");
            }
            out.put(key, s);
        }
        return out;
    }

    /** Rejects fields this section does not know: a typo must not silently fall back to a default. */
    void allowOnly(Set<String> known) {
        for (String name : object.fieldNames()) {
            if (!known.contains(name)) {
                throw new ConfigException(field(name) + " is not a known setting (known: " + known + ")");
            }
        }
    }

    String field(String name) {
        return path.isEmpty() ? name : path + "." + name;
    }
}
