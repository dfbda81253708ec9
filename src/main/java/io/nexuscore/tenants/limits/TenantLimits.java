package io.nexuscore.tenants.limits;

import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.function.LongUnaryOperator;

/**
 * One tenant's limits, each optional: {@link #UNLIMITED} (0) where a limit is absent. As the control
 * plane takes and shows them, and as the fleet shares them: {@code requests_per_minute},
 * {@code tokens_per_minute}, {@code max_concurrent}, {@code tokens_per_day}, positive integers.
 *
 * @param requestsPerMinute requests counted per anchored 60 s window
 * @param tokensPerMinute   estimated-then-settled tokens per anchored 60 s window
 * @param maxConcurrent     requests in flight at once
 * @param tokensPerDay      tokens per UTC calendar day
 */
public record TenantLimits(long requestsPerMinute, long tokensPerMinute, long maxConcurrent, long tokensPerDay) {

    public static final long UNLIMITED = 0;
    /** The largest value a limit may take: a token count a year of traffic does not reach, far from overflow. */
    public static final long MAX_VALUE = 1_000_000_000_000L;
    public static final TenantLimits NONE = new TenantLimits(0, 0, 0, 0);

    public static final String REQUESTS_PER_MINUTE = "requests_per_minute";
    public static final String TOKENS_PER_MINUTE = "tokens_per_minute";
    public static final String MAX_CONCURRENT = "max_concurrent";
    public static final String TOKENS_PER_DAY = "tokens_per_day";
    /** The fields in the order the API shows them. */
    public static final List<String> FIELDS = List.of(REQUESTS_PER_MINUTE, TOKENS_PER_MINUTE, MAX_CONCURRENT, TOKENS_PER_DAY);

    public TenantLimits {
        check(REQUESTS_PER_MINUTE, requestsPerMinute);
        check(TOKENS_PER_MINUTE, tokensPerMinute);
        check(MAX_CONCURRENT, maxConcurrent);
        check(TOKENS_PER_DAY, tokensPerDay);
    }

    private static void check(String field, long value) {
        if (value < 0 || value > MAX_VALUE) {
            throw new Invalid(field, field + " must be a positive integer up to " + MAX_VALUE + ", got " + value);
        }
    }

    /** A limits document the caller got wrong; {@link #field} names what. */
    public static final class Invalid extends IllegalArgumentException {
        public final String field;

        public Invalid(String field, String message) {
            super(message);
            this.field = field;
        }
    }

    /** True when no limit is set: the data plane then counts nothing for the tenant. */
    public boolean none() {
        return requestsPerMinute == 0 && tokensPerMinute == 0 && maxConcurrent == 0 && tokensPerDay == 0;
    }

    /**
     * This router's share in a fleet of {@code members} live routers: ceil(limit / members) of each
     * limit (at least 1 of a limit that is set), so the members' shares add up to the limit or a little
     * above it (at most members - 1 over).
     */
    public TenantLimits share(int members) {
        if (members <= 1) {
            return this;
        }
        LongUnaryOperator part = limit -> limit == UNLIMITED ? UNLIMITED : (limit + members - 1) / members;
        return new TenantLimits(part.applyAsLong(requestsPerMinute), part.applyAsLong(tokensPerMinute),
                part.applyAsLong(maxConcurrent), part.applyAsLong(tokensPerDay));
    }

    /**
     * The limits in {@code json}, taken strictly: only the four fields, each absent, null (unlimited)
     * or a positive integer.
     *
     * @throws Invalid naming the field at fault
     */
    public static TenantLimits fromJson(JsonObject json) {
        for (String name : json.fieldNames()) {
            if (!FIELDS.contains(name)) {
                throw new Invalid(name, "unknown field '" + name + "' (known: " + FIELDS + ")");
            }
        }
        return new TenantLimits(field(json, REQUESTS_PER_MINUTE), field(json, TOKENS_PER_MINUTE),
                field(json, MAX_CONCURRENT), field(json, TOKENS_PER_DAY));
    }

    private static long field(JsonObject json, String name) {
        Object value = json.getValue(name);
        if (value == null) {
            return UNLIMITED;
        }
        boolean integral = value instanceof Integer || value instanceof Long
                || value instanceof Short || value instanceof Byte;
        if (!integral || ((Number) value).longValue() < 1 || ((Number) value).longValue() > MAX_VALUE) {
            throw new Invalid(name, name + " must be a positive integer up to " + MAX_VALUE + " (absent or null: unlimited), got "
                    + io.nexuscore.http.JsonBodies.echoed(String.valueOf(value)));
        }
        return ((Number) value).longValue();
    }

    /** The limits that are set; an unlimited one is absent. */
    public JsonObject toJson() {
        JsonObject json = new JsonObject();
        put(json, REQUESTS_PER_MINUTE, requestsPerMinute);
        put(json, TOKENS_PER_MINUTE, tokensPerMinute);
        put(json, MAX_CONCURRENT, maxConcurrent);
        put(json, TOKENS_PER_DAY, tokensPerDay);
        return json;
    }

    private static void put(JsonObject json, String name, long value) {
        if (value != UNLIMITED) {
            json.put(name, value);
        }
    }
}
