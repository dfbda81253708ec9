package io.nexuscore.config;

import java.util.Set;

/**
 * How far the adaptive loop's decisions reach. The loop's own settings (period, target, step) are
 * run-time settings of the control plane (PATCH /adaptive), not configuration.
 *
 * @param scope {@link Scope#NODE}: each router's kernel loop moves its own thresholds;
 *              {@link Scope#FLEET}: a step one router's loop takes is proposed to the fleet as a
 *              compare-and-set on the policy version, so routers reacting to the same overload step once
 */
public record AdaptiveConfig(Scope scope) {

    public enum Scope { NODE, FLEET }

    public static final AdaptiveConfig DEFAULT = new AdaptiveConfig(Scope.NODE);

    static AdaptiveConfig from(Json json) {
        json.allowOnly(Set.of("scope"));
        return new AdaptiveConfig(json.choice(Scope.class, "scope", "node"));
    }
}
