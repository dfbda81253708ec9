package io.nexuscore.tenants.limits;

import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.time.LocalDate;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What each tenant used on this router since it started: requests, prompt and completion tokens (the
 * answers' real usage), per tier and per UTC day (the last {@link #DAYS_KEPT} days), and refusals by
 * limit. Held in memory, per router: GET /tenants/{id}/usage of one router is that router's part
 * (Prometheus sums a fleet's). Tenant names are bounded ({@link BoundedTenants}).
 */
public final class TenantUsage {

    static final int DAYS_KEPT = 31;

    private final BoundedTenants names;
    private final Map<String, Record> byTenant = new ConcurrentHashMap<>();
    private final Instant since = Instant.now();

    TenantUsage(BoundedTenants names) {
        this.names = names;
    }

    private static final class Counts {
        long requests;
        long promptTokens;
        long completionTokens;

        void add(long prompt, long completion) {
            requests++;
            promptTokens += prompt;
            completionTokens += completion;
        }

        JsonObject toJson() {
            return new JsonObject().put("requests", requests).put("prompt_tokens", promptTokens)
                    .put("completion_tokens", completionTokens);
        }
    }

    /** One tenant's usage; guarded by itself. */
    private static final class Record {
        final Counts total = new Counts();
        final TreeMap<String, Counts> tiers = new TreeMap<>();
        /** By UTC day, days since the epoch. */
        final TreeMap<Long, Counts> days = new TreeMap<>();
        final EnumMap<LimitCounter.Reason, Long> refusals = new EnumMap<>(LimitCounter.Reason.class);
    }

    private Record record(String tenant) {
        return byTenant.computeIfAbsent(names.nameOf(tenant), n -> new Record());
    }

    /** A request that a tier served or failed; tokens 0 when its answer carried no usage. */
    void served(String tenant, String tier, long promptTokens, long completionTokens, long epochMillis) {
        Record r = record(tenant);
        long day = Math.floorDiv(epochMillis, WindowLimiter.DAY_MILLIS);
        synchronized (r) {
            r.total.add(promptTokens, completionTokens);
            r.tiers.computeIfAbsent(tier, t -> new Counts()).add(promptTokens, completionTokens);
            r.days.computeIfAbsent(day, d -> new Counts()).add(promptTokens, completionTokens);
            while (r.days.size() > DAYS_KEPT) {
                r.days.pollFirstEntry();
            }
        }
    }

    void refused(String tenant, LimitCounter.Reason reason) {
        Record r = record(tenant);
        synchronized (r) {
            r.refusals.merge(reason, 1L, Long::sum);
        }
    }

    /** The usage of a tenant this router has not seen. */
    JsonObject empty() {
        JsonObject refusals = new JsonObject();
        for (LimitCounter.Reason reason : LimitCounter.Reason.values()) {
            refusals.put(reason.label(), 0L);
        }
        return new Counts().toJson().put("since", since.toString()).put("tiers", new JsonObject()).put("days", new JsonObject())
                .put("refusals", refusals);
    }

    /** The tenant's usage as GET /tenants/{id}/usage shows it; empty when it has none on this router. */
    public Optional<JsonObject> toJson(String tenant) {
        Record r = byTenant.get(tenant);
        if (r == null) {
            return Optional.empty();
        }
        synchronized (r) {
            JsonObject tiers = new JsonObject();
            r.tiers.forEach((tier, c) -> tiers.put(tier, c.toJson()));
            JsonObject days = new JsonObject();
            r.days.forEach((day, c) -> days.put(LocalDate.ofEpochDay(day).toString(), c.toJson()));
            JsonObject refusals = new JsonObject();
            for (LimitCounter.Reason reason : LimitCounter.Reason.values()) {
                refusals.put(reason.label(), r.refusals.getOrDefault(reason, 0L));
            }
            return Optional.of(r.total.toJson().put("since", since.toString()).put("tiers", tiers).put("days", days)
                    .put("refusals", refusals));
        }
    }
}
