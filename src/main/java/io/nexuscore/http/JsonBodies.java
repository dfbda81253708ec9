package io.nexuscore.http;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.math.BigDecimal;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;

/** Reading request bodies strictly: JSON objects only, known fields only, typed values, named errors. */
public final class JsonBodies {

    private JsonBodies() {
    }

    /**
     * The body as a JSON object; empty when the body is empty and {@code optional}.
     *
     * @param mediaTypes accepted Content-Types (parameters such as charset are ignored)
     */
    public static Optional<JsonObject> object(RoutingContext ctx, boolean optional, Set<String> mediaTypes) {
        Buffer body = ctx.body().buffer();
        if (body == null || body.length() == 0) {
            if (optional) {
                return Optional.empty();
            }
            throw new ProblemException(ProblemType.MALFORMED_JSON, "a JSON object body is required");
        }
        String contentType = ctx.request().getHeader("Content-Type");
        String mediaType = contentType == null ? "" : contentType.split(";", 2)[0].strip().toLowerCase(java.util.Locale.ROOT);
        if (!mediaTypes.contains(mediaType)) {
            throw new ProblemException(ProblemType.UNSUPPORTED_MEDIA_TYPE, "Content-Type must be one of " + mediaTypes
                    + ", got " + (contentType == null ? "none" : "'" + contentType + "'"));
        }
        Object value;
        try {
            value = Json.decodeValue(body);
        } catch (DecodeException e) {
            throw new ProblemException(ProblemType.MALFORMED_JSON, "body is not valid JSON: " + firstLine(e.getMessage()));
        }
        if (!(value instanceof JsonObject object)) {
            throw new ProblemException(ProblemType.INVALID_REQUEST, "body must be a JSON object");
        }
        return Optional.of(object);
    }

    public static void allowOnly(JsonObject object, Set<String> known) {
        for (String name : object.fieldNames()) {
            if (!known.contains(name)) {
                throw new ProblemException(ProblemType.INVALID_REQUEST, "unknown field '" + name + "' (known: " + known + ")", name);
            }
        }
    }

    /** An integer field in 0..255; absent when not in the object. Null means "remove", which scores cannot. */
    public static OptionalInt score(JsonObject object, String field) {
        OptionalLong value = integer(object, field, 0, 255);
        return value.isPresent() ? OptionalInt.of((int) value.getAsLong()) : OptionalInt.empty();
    }

    /**
     * An integer field in min..max; absent when not in the object; null is refused (nothing can be
     * removed). A number that is no 64-bit integer is 400 naming the field (fractions, huge values,
     * and 1e400, which decodes to Infinity); an integer outside min..max is 422 naming the field.
     */
    public static OptionalLong integer(JsonObject object, String field, long min, long max) {
        if (!object.containsKey(field)) {
            return OptionalLong.empty();
        }
        Object value = object.getValue(field);
        if (value == null) {
            throw new ProblemException(ProblemType.INVALID_VALUE, field + " cannot be removed (null); give an integer in "
                    + min + ".." + max, field);
        }
        if (!(value instanceof Number n)) {
            throw new ProblemException(ProblemType.INVALID_REQUEST, field + " must be an integer, got " + echoed(Json.encode(value)), field);
        }
        BigDecimal decimal = decimal(field, n);
        if (decimal.signum() != 0 && decimal.stripTrailingZeros().scale() > 0) {
            throw new ProblemException(ProblemType.INVALID_REQUEST, field + " must be an integer, got " + n, field);
        }
        if (decimal.compareTo(BigDecimal.valueOf(min)) < 0 || decimal.compareTo(BigDecimal.valueOf(max)) > 0) {
            throw new ProblemException(ProblemType.INVALID_VALUE, field + " must be in " + min + ".." + max + ", got "
                    + abbreviated(decimal), field);
        }
        return OptionalLong.of(decimal.longValueExact());
    }

    /** The exact value of a decoded JSON number; a non-finite double (an overflowing literal) is refused. */
    private static BigDecimal decimal(String field, Number n) {
        if ((n instanceof Double d && !Double.isFinite(d)) || (n instanceof Float f && !Float.isFinite(f))) {
            throw new ProblemException(ProblemType.INVALID_REQUEST, field + " must be a finite integer, got a number "
                    + "beyond the range of a double", field);
        }
        BigDecimal decimal;
        try {
            decimal = new BigDecimal(n.toString());
        } catch (NumberFormatException e) {
            throw new ProblemException(ProblemType.INVALID_REQUEST, field + " must be an integer, got " + n, field);
        }
        if (decimal.abs().compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
            throw new ProblemException(ProblemType.INVALID_REQUEST, field + " must be a 64-bit integer, got "
                    + abbreviated(decimal), field);
        }
        return decimal;
    }

    /** Longest part of a client's value an error detail repeats. */
    static final int ECHO_CHARS = 64;

    /**
     * A client's value as an error detail repeats it: at most {@value #ECHO_CHARS} characters, then
     * how long it was. A detail that echoed a megabyte value whole would send the megabyte back.
     */
    public static String echoed(String value) {
        return value.length() <= ECHO_CHARS ? value
                : value.substring(0, ECHO_CHARS) + "... (" + value.length() + " characters)";
    }

    /** Huge values are echoed in scientific notation, never as thousands of digits. */
    private static String abbreviated(BigDecimal value) {
        String plain = value.toString();
        return plain.length() <= 32 ? plain : value.round(new java.math.MathContext(6)).toString();
    }

    /** A boolean field; absent when not in the object. */
    public static Optional<Boolean> bool(JsonObject object, String field) {
        if (!object.containsKey(field)) {
            return Optional.empty();
        }
        Object value = object.getValue(field);
        if (!(value instanceof Boolean b)) {
            throw new ProblemException(ProblemType.INVALID_REQUEST, field + " must be true or false, got " + echoed(Json.encode(value)), field);
        }
        return Optional.of(b);
    }

    /** A required (or optional) string field. */
    public static Optional<String> string(JsonObject object, String field, boolean required) {
        Object value = object.getValue(field);
        if (value == null) {
            if (required) {
                throw new ProblemException(ProblemType.INVALID_REQUEST, field + " is required", field);
            }
            return Optional.empty();
        }
        if (!(value instanceof String s)) {
            throw new ProblemException(ProblemType.INVALID_REQUEST, field + " must be a string, got " + echoed(Json.encode(value)), field);
        }
        return Optional.of(s);
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "";
        }
        int nl = message.indexOf('\n');
        return nl < 0 ? message : message.substring(0, nl);
    }

    /**
     * An optional boolean field of a request body: absent or null is false; anything but a boolean
     * is a 400 naming the field and a bounded echo of the value.
     */
    public static boolean optionalBoolean(JsonObject json, String field) {
        Object value = json.getValue(field);
        if (value == null) {
            return false;
        }
        if (!(value instanceof Boolean b)) {
            throw new ProblemException(Problems.invalidRequest(field + " must be true or false, got "
                    + echoed(String.valueOf(value))));
        }
        return b;
    }
}
