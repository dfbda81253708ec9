package io.nexuscore.dataplane;

import io.nexuscore.classify.Tier;

/**
 * The tier a request is assigned.
 *
 * @param tier   the assigned tier, tenant floor applied
 * @param score  the complexity score that chose it
 * @param source whether the kernel verdict or the Java scorer decided
 */
public record Resolution(Tier tier, int score, RouteSource source) {
}
