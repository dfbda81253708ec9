package io.nexuscore.kernel;

import io.nexuscore.kernel.libbpf.BpfMap;
import io.nexuscore.kernel.maps.AdaptiveLoop;
import io.nexuscore.kernel.maps.KernelVerdicts;
import io.nexuscore.kernel.maps.LatencyRing;
import io.nexuscore.kernel.maps.PinnedTokenModel;
import io.nexuscore.kernel.maps.RoutingDecisionsMap;
import io.nexuscore.kernel.maps.ScoreThresholdsMap;
import io.nexuscore.kernel.maps.SharedStructs;
import io.nexuscore.kernel.maps.TenantLimitMaps;
import io.nexuscore.kernel.maps.TenantPolicyMap;
import io.nexuscore.kernel.maps.TierCountersMap;
import io.nexuscore.kernel.maps.VerdictSlots;
import java.nio.file.Path;
import java.util.List;

/**
 * The classifier's pinned maps, opened by name under the pin directory, and their typed wrappers:
 * what a loaded {@link KernelDataPath} reads and writes, and what outlives a reload (the maps are
 * the object's state; the programs are replaceable). Opened once per data path, closed with it.
 */
final class PinnedMaps {

    final BpfMap routingDecisionsMap;
    final BpfMap routingDecisions6Map;
    final BpfMap verdictSlotsMap;
    final BpfMap verdictSlots6Map;
    final VerdictSlots verdictSlots;
    final VerdictSlots verdictSlots6;
    final BpfMap scoreThresholdsMap;
    final BpfMap tierCountersMap;
    final BpfMap tenantPolicyMap;
    final BpfMap tcChainMap;
    final BpfMap tenantLimitsMap;
    final BpfMap tenantWindowsMap;
    final TenantLimitMaps tenantLimits;
    final BpfMap adaptiveSettingsMap;
    final BpfMap adaptiveStatsMap;
    final BpfMap tokenModelMap;
    final PinnedTokenModel tokenModel;
    final AdaptiveLoop adaptive;
    final LatencyRing latencyRing;
    final RoutingDecisionsMap routingDecisions;
    final KernelVerdicts verdicts;
    final ScoreThresholdsMap thresholds;
    final TierCountersMap tierCounters;
    final TenantPolicyMap tenantPolicy;

    PinnedMaps(Path pinDir) {
        this.routingDecisionsMap = BpfMap.openPinned(pinDir, "routing_decisions",
                SharedStructs.FLOW_KEY.size(), SharedStructs.ROUTING_DECISION.size());
        this.routingDecisions6Map = BpfMap.openPinned(pinDir, "routing_decisions6",
                SharedStructs.FLOW_KEY6.size(), SharedStructs.ROUTING_DECISION.size());
        this.verdictSlotsMap = BpfMap.openPinned(pinDir, "verdict_slots", 4, SharedStructs.VERDICT_SLOT.size());
        this.verdictSlots6Map = BpfMap.openPinned(pinDir, "verdict_slots6", 4, SharedStructs.VERDICT_SLOT6.size());
        this.verdictSlots = VerdictSlots.map(verdictSlotsMap, SharedStructs.VERDICT_SLOT, SharedStructs.VERDICT_SLOTS);
        this.verdictSlots6 = VerdictSlots.map(verdictSlots6Map, SharedStructs.VERDICT_SLOT6, SharedStructs.VERDICT_SLOTS6);
        this.scoreThresholdsMap = BpfMap.openPinned(pinDir, "score_thresholds", 4, SharedStructs.SCORE_THRESHOLDS.size());
        this.tierCountersMap = BpfMap.openPinned(pinDir, "tier_counters", 4, TierCountersMap.valueSize());
        this.tenantPolicyMap = BpfMap.openPinned(pinDir, "tenant_policy",
                SharedStructs.TENANT_KEY.size(), SharedStructs.TENANT_FLOOR.size());
        this.tcChainMap = BpfMap.openPinned(pinDir, "tc_chain", 4, 4);
        this.tenantLimitsMap = BpfMap.openPinned(pinDir, "tenant_limits",
                SharedStructs.TENANT_KEY.size(), SharedStructs.TENANT_LIMIT.size());
        this.tenantWindowsMap = BpfMap.openPinned(pinDir, "tenant_windows", 4, SharedStructs.TENANT_WINDOW.size());
        this.tenantLimits = TenantLimitMaps.map(tenantLimitsMap, tenantWindowsMap);
        this.adaptiveSettingsMap = BpfMap.openPinned(pinDir, "adaptive_settings", 4, SharedStructs.ADAPTIVE_SETTINGS.size());
        this.adaptiveStatsMap = BpfMap.openPinned(pinDir, "adaptive_stats", 4, SharedStructs.ADAPTIVE_STATS.size());
        this.tokenModelMap = BpfMap.openPinned(pinDir, "token_model", 4, SharedStructs.TOKEN_MODEL.size());
        this.tokenModel = PinnedTokenModel.map(tokenModelMap);
        this.adaptive = new AdaptiveLoop(adaptiveSettingsMap, adaptiveStatsMap, tokenModel);
        this.latencyRing = LatencyRing.openPinned(pinDir);
        this.routingDecisions = new RoutingDecisionsMap(routingDecisionsMap, routingDecisions6Map, verdictSlots, verdictSlots6);
        this.verdicts = new KernelVerdicts(verdictSlots, verdictSlots6, routingDecisions);
        this.thresholds = ScoreThresholdsMap.map(scoreThresholdsMap);
        this.tierCounters = new TierCountersMap(tierCountersMap);
        this.tenantPolicy = new TenantPolicyMap(tenantPolicyMap);
    }

    /** Unmaps and closes everything, each step tried whatever the others did. */
    void close(List<RuntimeException> failures) {
        KernelDataPath.run(failures, latencyRing::close);
        KernelDataPath.run(failures, verdictSlots::close);
        KernelDataPath.run(failures, thresholds::close);
        KernelDataPath.run(failures, tokenModel::close);
        KernelDataPath.run(failures, verdictSlots6::close);
        KernelDataPath.run(failures, tenantLimits::close);
    }

    /** Closes the map fds; after the object, whose programs hold their own references. */
    void closeMaps(List<RuntimeException> failures) {
        for (BpfMap map : List.of(routingDecisionsMap, routingDecisions6Map, verdictSlotsMap, verdictSlots6Map,
                scoreThresholdsMap, tierCountersMap, tenantPolicyMap, tcChainMap, tokenModelMap, adaptiveSettingsMap,
                adaptiveStatsMap, tenantLimitsMap, tenantWindowsMap)) {
            KernelDataPath.run(failures, map::close);
        }
    }
}
