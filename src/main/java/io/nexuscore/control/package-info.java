/**
 * The control plane: the operator's REST API, event stream and metrics on their own listener
 * ({@link io.nexuscore.control.ControlVerticle}, default 127.0.0.1:8081; contract: {@code openapi.yaml}).
 *
 * <p>What it needs from the rest of the router, each as a small interface defined here:
 * <ul>
 *   <li>{@link io.nexuscore.control.KernelControl}: thresholds, tier counters, tenant floors, reload,
 *       program stats, mode and attachment. {@link io.nexuscore.control.UserSpaceKernelControl} is the
 *       user-space implementation; kernel mode adapts {@code io.nexuscore.bpf.KernelDataPath}
 *       (its tenant map through {@link io.nexuscore.tenants.PrefixFloors} and
 *       {@link io.nexuscore.tenants.PrefixTenantPolicies}).</li>
 *   <li>{@link io.nexuscore.control.TierStateView}: pool state per tier
 *       ({@link io.nexuscore.control.TierStateView#ofRecords} renders snapshot records).</li>
 *   <li>{@link io.nexuscore.events.EventHub}: the {@link io.nexuscore.events.EventSink} every feature
 *       publishes into; GET /events streams it.</li>
 * </ul>
 * Threshold changes, whoever makes them (PATCH, bpftool on the pinned map, the kernel), go through
 * {@code ThresholdKeeper}: one {@code threshold} event each, saved to the state file.
 */
package io.nexuscore.control;
