/**
 * Fleet mode (cluster.enabled): routers sharing one versioned policy through Vert.x's cluster manager
 * SPI over embedded Hazelcast. {@link io.nexuscore.fleet.PolicyDoc} is the shared document,
 * {@link io.nexuscore.fleet.FleetAgent} keeps a router's own stores ({@link io.nexuscore.fleet.LocalPolicy})
 * and the fleet's map ({@link io.nexuscore.fleet.SharedPolicy}) in step by compare-and-set on the version,
 * {@link io.nexuscore.fleet.FleetService} runs it and serves GET /fleet's view. RouterRuntime joins the
 * fleet after the control plane restored its state file and before the data plane listens.
 */
package io.nexuscore.fleet;
