/**
 * The control plane: the operator's REST API, event stream and metrics on their own listener
 * ({@link io.nexuscore.control.ControlVerticle}, default 127.0.0.1:8081; contract: {@code openapi.yaml}).
 *
 * <p>What it needs from the rest of the router, one port per feature, bundled in
 * {@link io.nexuscore.control.ControlPorts}:
 * <ul>
 *   <li>{@link io.nexuscore.classify.ThresholdStore}: the live thresholds;</li>
 *   <li>{@link io.nexuscore.tenants.TenantPolicies}: tenant floors (kernel mode: {@code tenant_policy}
 *       through {@link io.nexuscore.tenants.KernelPrefixFloors});</li>
 *   <li>{@link io.nexuscore.kernel.maps.AdaptiveControl}: the kernel's latency feedback loop;</li>
 *   <li>{@link io.nexuscore.kernel.DataPathControl}: mode, attachment, tier counters, program stats, reload.</li>
 *   <li>{@link io.nexuscore.control.TierStateView}: pool state per tier
 *       ({@link io.nexuscore.control.TierStateView#ofRecords} renders snapshot records).</li>
 *   <li>{@link io.nexuscore.events.EventHub}: the {@link io.nexuscore.events.EventSink} every feature
 *       publishes into; GET /events streams it.</li>
 * </ul>
 * Threshold changes, whoever makes them (PATCH, bpftool on the pinned map, the kernel), go through
 * {@code ThresholdKeeper}: one {@code threshold} event each, saved to the state file.
 *
 * <p>{@code DashboardRoutes} serves the operator dashboard at {@code /} (static files from the jar's
 * {@code dashboard/} folder): a page that only calls this API, same origin, with the bearer token.
 */
package io.nexuscore.control;
