package io.nexuscore.config;

import io.nexuscore.classify.Tier;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** The whole configuration, parsed once at start and validated field by field. */
public record RouterConfig(
        DataPlaneConfig dataPlane,
        ControlConfig control,
        KernelConfig kernel,
        ScoringConfig scoring,
        Map<Tier, TierConfig> tiers,
        MetricsConfig metrics,
        TelemetryConfig telemetry,
        ClusterConfig cluster,
        AdaptiveConfig adaptive,
        EmbeddingsConfig embeddings) {

    /** The embedded default configuration, a classpath resource. */
    public static final String DEFAULT_RESOURCE = "nexuscore.json";

    public RouterConfig {
        tiers = Map.copyOf(tiers);
        if (adaptive.scope() == AdaptiveConfig.Scope.FLEET && !cluster.enabled()) {
            throw new ConfigException("adaptive.scope \"fleet\" needs cluster.enabled: a router alone has no fleet to step");
        }
    }

    public TierConfig tier(Tier tier) {
        return tiers.get(tier);
    }

    /** The embedded defaults, overlaid with the given file when present (a deep merge of JSON objects). */
    public static RouterConfig load(Optional<Path> overrides) {
        JsonObject json = embeddedDefaults();
        if (overrides.isPresent()) {
            Path file = overrides.get();
            try {
                json.mergeIn(new JsonObject(Files.readString(file)), true);
            } catch (IOException e) {
                throw new ConfigException("cannot read config file " + file + ": " + e.getMessage(), e);
            } catch (DecodeException e) {
                throw new ConfigException("config file " + file + " is not valid JSON: " + e.getMessage(), e);
            }
        }
        return fromJson(json);
    }

    public static RouterConfig fromJson(JsonObject json) {
        Json root = new Json(json, "");
        root.allowOnly(Set.of("dataPlane", "control", "kernel", "scoring", "tiers", "metrics", "telemetry",
                "cluster", "adaptive", "embeddings"));
        Json tierSection = root.section("tiers");
        tierSection.allowOnly(Set.of("nano", "small", "large"));
        Map<Tier, TierConfig> tiers = new EnumMap<>(Tier.class);
        for (Tier tier : Tier.values()) {
            tiers.put(tier, TierConfig.from(tier, tierSection.section(tier.label()), TierConfig.defaults(tier)));
        }
        return new RouterConfig(
                DataPlaneConfig.from(root.section("dataPlane")),
                ControlConfig.from(root.section("control")),
                KernelConfig.from(root.section("kernel")),
                ScoringConfig.from(root.section("scoring")),
                tiers,
                MetricsConfig.from(root.section("metrics")),
                TelemetryConfig.from(root.section("telemetry")),
                ClusterConfig.from(root.section("cluster")),
                AdaptiveConfig.from(root.section("adaptive")),
                EmbeddingsConfig.from(root.section("embeddings")));
    }

    static JsonObject embeddedDefaults() {
        try (InputStream in = RouterConfig.class.getClassLoader().getResourceAsStream(DEFAULT_RESOURCE)) {
            if (in == null) {
                throw new ConfigException("embedded " + DEFAULT_RESOURCE + " is missing from the classpath");
            }
            return new JsonObject(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
