/**
 * One typed wrapper per kernel map, each with its codec (verdict slots and the routing-decision
 * map, thresholds, tier counters, the tenant LPM trie, the latency ring and event rings, the token
 * model, the adaptive loop's settings and stats), the values they carry, and
 * {@link io.nexuscore.kernel.maps.SharedStructs}: the one Java mirror of nexus_shared.h, checked
 * against the object's BTF. Imports the bindings and value types (classify, net, misroute) only.
 */
package io.nexuscore.kernel.maps;
