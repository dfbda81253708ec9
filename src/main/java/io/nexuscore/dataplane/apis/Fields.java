package io.nexuscore.dataplane.apis;

import io.nexuscore.http.JsonBodies;
import io.nexuscore.http.ProblemException;
import io.nexuscore.http.ProblemType;
import io.nexuscore.http.Problems;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Collection;

/** Field readers shared by the translated APIs' parsers: every error names the field. */
final class Fields {

    private Fields() {
    }

    static ProblemException invalid(String detail) {
        return new ProblemException(Problems.invalidRequest(detail));
    }

    /** A feature of the client's API this router does not carry: refused, never silently dropped. */
    static ProblemException unsupported(String api, String detail) {
        return new ProblemException(ProblemType.UNSUPPORTED_FEATURE.problem(api + ": " + detail
                + " (docs/api.md lists what this router translates)"));
    }

    static int optionalCount(JsonObject json, String field) {
        Object value = json.getValue(field);
        if (value == null) {
            return 0;
        }
        if (!(value instanceof Number n) || n.doubleValue() != Math.rint(n.doubleValue()) || n.doubleValue() < 1
                || n.doubleValue() > Integer.MAX_VALUE) {
            throw invalid(field + " must be a positive integer, got " + JsonBodies.echoed(String.valueOf(value)));
        }
        return n.intValue();
    }


    static String optionalString(JsonObject json, String field) {
        Object value = json.getValue(field);
        if (value == null) {
            return null;
        }
        if (!(value instanceof String s)) {
            throw invalid(field + " must be a string, got " + JsonBodies.echoed(String.valueOf(value)));
        }
        return s;
    }

    /** Copies the sampling fields both APIs share with chat (temperature, top_p) when present. */
    static void copyNumbers(JsonObject from, JsonObject to, Collection<String> fields) {
        for (String field : fields) {
            Object value = from.getValue(field);
            if (value == null) {
                continue;
            }
            if (!(value instanceof Number)) {
                throw invalid(field + " must be a number, got " + JsonBodies.echoed(String.valueOf(value)));
            }
            to.put(field, value);
        }
    }

    /** True when the field is present and not an empty array / null. */
    static boolean present(JsonObject json, String field) {
        Object value = json.getValue(field);
        return value != null && !(value instanceof JsonArray a && a.isEmpty());
    }
}
