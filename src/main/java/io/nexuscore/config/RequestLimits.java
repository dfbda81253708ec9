package io.nexuscore.config;

import io.nexuscore.classify.Tier;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What a data-plane request may ask an upstream to spend, applied before anything is forwarded
 * (key {@code dataPlane.requestLimits}). Every tier forwards with the router's own API key, so a
 * client that could set {@code n: 128} or {@code max_tokens: 32000} on a nano-sized prompt would
 * multiply the operator's bill.
 *
 * @param tiers         per tier: the largest {@code max_tokens} / {@code max_completion_tokens}
 *                      and {@code n} (also {@code best_of}) a request may carry; more is 400 {@code request-limit}
 * @param unknownFields what happens to a top-level body field that is not one of the endpoint's
 *                      OpenAI fields (nor in {@code extraFields}): {@code refuse} (default, 400
 *                      {@code unknown-field}), {@code drop} (removed before forwarding) or {@code pass}
 * @param extraFields   top-level fields to accept besides the OpenAI ones (e.g. a server's own
 *                      options, or {@code service_tier}, which is refused by default because it
 *                      picks a pricier processing tier)
 */
public record RequestLimits(Map<Tier, TierLimits> tiers, UnknownFields unknownFields, List<String> extraFields) {

    public enum UnknownFields { REFUSE, DROP, PASS }

    private static final Pattern FIELD = Pattern.compile("[A-Za-z0-9_.-]{1,64}");

    /**
     * @param maxTokens the largest max_tokens / max_completion_tokens (1..1,000,000)
     * @param n         the largest n / best_of (1..128)
     */
    public record TierLimits(int maxTokens, int n) {
        public TierLimits {
            if (maxTokens < 1 || n < 1) {
                throw new ConfigException("dataPlane.requestLimits: maxTokens and n must be at least 1, got "
                        + maxTokens + " and " + n);
            }
        }
    }

    /** Defaults: nano 1,024 tokens, small 4,096, large 16,384; one choice each except large (4). */
    public static final Map<Tier, TierLimits> DEFAULT_TIERS = Map.of(
            Tier.NANO, new TierLimits(1_024, 1),
            Tier.SMALL, new TierLimits(4_096, 1),
            Tier.LARGE, new TierLimits(16_384, 4));

    public RequestLimits {
        tiers = Map.copyOf(tiers);
        for (Tier t : Tier.values()) {
            if (!tiers.containsKey(t)) {
                throw new ConfigException("dataPlane.requestLimits has no limits for tier " + t.label());
            }
        }
        extraFields = List.copyOf(extraFields);
        for (String f : extraFields) {
            if (!FIELD.matcher(f).matches()) {
                throw new ConfigException("dataPlane.requestLimits.extraFields: '" + f + "' is not a field name");
            }
        }
    }

    public static RequestLimits defaults() {
        return new RequestLimits(DEFAULT_TIERS, UnknownFields.REFUSE, List.of());
    }

    public TierLimits of(Tier tier) {
        return tiers.get(tier);
    }

    static RequestLimits from(Json json) {
        json.allowOnly(Set.of("unknownFields", "extraFields", "nano", "small", "large"));
        Map<Tier, TierLimits> tiers = new EnumMap<>(Tier.class);
        for (Tier t : Tier.values()) {
            Json section = json.section(t.label());
            section.allowOnly(Set.of("maxTokens", "n"));
            TierLimits d = DEFAULT_TIERS.get(t);
            tiers.put(t, new TierLimits(section.integer("maxTokens", d.maxTokens(), 1, 1_000_000),
                    section.integer("n", d.n(), 1, 128)));
        }
        return new RequestLimits(tiers, json.choice(UnknownFields.class, "unknownFields", "refuse"),
                json.strings("extraFields", List.of()));
    }
}
