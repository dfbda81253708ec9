package io.nexuscore.fleet;

import io.nexuscore.kernel.maps.AdaptiveSettings;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import io.nexuscore.net.Ipv4Prefix;
import io.nexuscore.tenants.TenantId;
import io.nexuscore.tenants.TenantKeys;
import io.nexuscore.tenants.TenantPolicies.TenantPolicy;
import io.nexuscore.tenants.limits.TenantLimits;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * One version of the fleet's policy, as held in the replicated map. Versions only grow: a node
 * writes version N+1 with a compare-and-set against the document of version N it read.
 *
 * @param version          the fleet's policy version
 * @param origin           the node whose change made it
 * @param cause            what made it: api, external (bpftool), adaptive, join
 * @param atMs             when the origin wrote it (epoch ms): orders two documents of one version
 * @param adaptiveStepAtMs when an adaptive loop last stepped the fleet's thresholds (epoch ms, 0 = never)
 * @param content          the policy itself
 */
public record PolicyDoc(long version, String origin, String cause, long atMs, long adaptiveStepAtMs,
                        PolicyContent content) {

    public static final String CAUSE_API = "api";
    public static final String CAUSE_EXTERNAL = "external";
    public static final String CAUSE_ADAPTIVE = "adaptive";
    public static final String CAUSE_JOIN = "join";

    /** Last writer wins: the higher version, then the later write, then the greater origin name. */
    public static final Comparator<PolicyDoc> LAST_WRITER = Comparator.comparingLong(PolicyDoc::version)
            .thenComparingLong(PolicyDoc::atMs).thenComparing(PolicyDoc::origin);

    public boolean newerThan(PolicyDoc other) {
        return LAST_WRITER.compare(this, other) > 0;
    }

    /** The next version of this document, written by {@code origin}. */
    public PolicyDoc next(String origin, String cause, long nowMs, PolicyContent content) {
        return new PolicyDoc(Math.addExact(version, 1), origin, cause, nowMs, adaptiveStepAtMs, content);
    }

    public PolicyDoc withAdaptiveStepAt(long ms) {
        return new PolicyDoc(version, origin, cause, atMs, ms, content);
    }

    /** Canonical JSON: equal documents encode to equal strings (the map's compare-and-set compares them). */
    public String encode() {
        return toJson().encode();
    }

    public JsonObject toJson() {
        PolicyContent c = content;
        JsonObject tenants = new JsonObject();
        c.tenants().forEach((id, p) -> tenants.put(id, new JsonObject()
                .put("prefix", p.prefix().toString()).put("floor", p.floor().label())));
        JsonObject keys = new JsonObject();
        c.keys().forEach((id, hashes) -> keys.put(id, new JsonArray(hashes)));
        JsonObject limits = new JsonObject();
        c.limits().forEach((id, l) -> limits.put(id, l.toJson()));
        return new JsonObject()
                .put("version", version)
                .put("origin", origin)
                .put("cause", cause)
                .put("at_ms", atMs)
                .put("adaptive_step_at_ms", adaptiveStepAtMs)
                .put("thresholds", thresholdsJson(c.thresholds()))
                .put("tenants", tenants)
                .put("keys", keys)
                .put("limits", limits)
                .put("adaptive", c.adaptive().map(PolicyDoc::adaptiveJson).orElse(null));
    }

    static JsonObject thresholdsJson(Thresholds t) {
        return new JsonObject().put("nano_max", t.nanoMax()).put("small_max", t.smallMax());
    }

    /** Versions stay below this: one written past it by another tool is refused, so {@link #next} never wraps. */
    static final long MAX_VERSION = 1L << 62;

    /**
     * The document in {@code text}, checked as hostile input (anything that reaches the cluster's port
     * can write the map): besides the types, the values the local stores would refuse are refused here,
     * before any of the document is applied, so a document is taken whole or not at all.
     *
     * @throws IllegalArgumentException (or a JSON type error) naming what is wrong
     */
    public static PolicyDoc decode(String text) {
        PolicyDoc doc = parse(text);
        doc.check();
        return doc;
    }

    private void check() {
        require(version >= 1 && version < MAX_VERSION, "version " + version + " is outside 1.." + (MAX_VERSION - 1));
        require(origin != null && !origin.isBlank(), "origin is missing");
        require(cause != null, "cause is missing");
        require(atMs >= 0, "at_ms " + atMs + " is negative");
        require(adaptiveStepAtMs >= 0, "adaptive_step_at_ms " + adaptiveStepAtMs + " is negative");
        Map<Ipv4Prefix, String> prefixes = new HashMap<>();
        content.tenants().forEach((id, policy) -> {
            require(TenantId.valid(id), "tenant id '" + id + "' is not " + TenantId.RULE);
            String other = prefixes.putIfAbsent(policy.prefix(), id);
            require(other == null, "tenants '" + other + "' and '" + id + "' hold the same prefix " + policy.prefix());
        });
        Map<String, String> owners = new HashMap<>();
        content.keys().forEach((id, hashes) -> {
            require(TenantId.valid(id), "tenant id '" + id + "' of keys is not " + TenantId.RULE);
            for (String hash : hashes) {
                require(TenantKeys.isHash(hash), "a key hash of tenant '" + id + "' is not sha256: and 64 lower-case hex digits");
                String owner = owners.putIfAbsent(hash, id);
                require(owner == null || owner.equals(id), "tenants '" + owner + "' and '" + id + "' hold the same key hash");
            }
        });
        content.limits().forEach((id, l) -> require(TenantId.valid(id), "tenant id '" + id + "' of limits is not "
                + TenantId.RULE));
    }

    private static void require(boolean ok, String what) {
        if (!ok) {
            throw new IllegalArgumentException(what);
        }
    }

    private static PolicyDoc parse(String text) {
        JsonObject json = new JsonObject(text);
        JsonObject t = json.getJsonObject("thresholds");
        TreeMap<String, TenantPolicy> tenants = new TreeMap<>();
        json.getJsonObject("tenants").forEach(e -> {
            JsonObject p = (JsonObject) e.getValue();
            tenants.put(e.getKey(), new TenantPolicy(Ipv4Prefix.parse(p.getString("prefix")),
                    Tier.fromLabel(p.getString("floor"))));
        });
        TreeMap<String, List<String>> keys = new TreeMap<>();
        json.getJsonObject("keys").forEach(e -> {
            List<String> hashes = new ArrayList<>();
            ((JsonArray) e.getValue()).forEach(h -> hashes.add((String) h));
            keys.put(e.getKey(), hashes);
        });
        // Absent in the documents of routers from before tenant limits: none.
        TreeMap<String, TenantLimits> limits = new TreeMap<>();
        JsonObject limitsJson = json.getJsonObject("limits");
        if (limitsJson != null) {
            limitsJson.forEach(e -> limits.put(e.getKey(), TenantLimits.fromJson((JsonObject) e.getValue())));
        }
        JsonObject adaptive = json.getJsonObject("adaptive");
        PolicyContent content = new PolicyContent(new Thresholds(t.getInteger("nano_max"), t.getInteger("small_max")),
                tenants, keys, Optional.ofNullable(adaptive).map(PolicyDoc::adaptive), limits);
        return new PolicyDoc(json.getLong("version"), json.getString("origin"), json.getString("cause"),
                json.getLong("at_ms"), json.getLong("adaptive_step_at_ms"), content);
    }

    /** Every setting under its record component name: the document carries all of them. */
    private static JsonObject adaptiveJson(AdaptiveSettings s) {
        return new JsonObject()
                .put("enabled", s.enabled()).put("periodMs", s.periodMs()).put("nanoTargetP95Us", s.nanoTargetP95Us())
                .put("step", s.step()).put("floor", s.floor()).put("minSamples", s.minSamples())
                .put("maxEvents", s.maxEvents()).put("ceiling", s.ceiling()).put("raiseBelowPct", s.raiseBelowPct())
                .put("raiseAfter", s.raiseAfter()).put("calibrate", s.calibrate()).put("gainMinQ10", s.gainMinQ10())
                .put("gainMaxQ10", s.gainMaxQ10()).put("gainStepMaxQ10", s.gainStepMaxQ10())
                .put("calibrationMinSamples", s.calibrationMinSamples());
    }

    private static AdaptiveSettings adaptive(JsonObject j) {
        return new AdaptiveSettings(j.getBoolean("enabled"), j.getInteger("periodMs"), j.getInteger("nanoTargetP95Us"),
                j.getInteger("step"), j.getInteger("floor"), j.getInteger("minSamples"), j.getInteger("maxEvents"),
                j.getInteger("ceiling"), j.getInteger("raiseBelowPct"), j.getInteger("raiseAfter"),
                j.getBoolean("calibrate"), j.getInteger("gainMinQ10"), j.getInteger("gainMaxQ10"),
                j.getInteger("gainStepMaxQ10"), j.getInteger("calibrationMinSamples"));
    }
}
