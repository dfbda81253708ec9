package io.nexuscore.dataplane;

import io.nexuscore.classify.KernelVerdict;
import io.nexuscore.classify.ReadCost;
import io.nexuscore.classify.Scorer;
import io.nexuscore.classify.ThresholdStore;
import io.nexuscore.classify.Tier;
import io.nexuscore.classify.VerdictSource;
import java.util.Optional;

/**
 * Decides a request's tier: the kernel's verdict for the connection when it verifiably belongs to
 * this request, else the Java scorer; then the connection's tenant floor.
 *
 * Blocking in kernel mode (a map lookup syscall): {@link #blocking()} tells the caller to run
 * {@link #resolve} off the event loop. Thresholds are read per request, as {@link io.nexuscore.classify.LiveThresholds} says.
 */
public final class TierResolver {

    private final Scorer scorer;
    private final ThresholdStore thresholds;
    private final VerdictSource verdicts;
    private final ReadCost reads;
    private final DataPlaneMetrics metrics;

    /**
     * @param reads what reading {@code verdicts} and {@code thresholds} costs (syscalls in kernel mode)
     */
    public TierResolver(Scorer scorer, ThresholdStore thresholds, VerdictSource verdicts, ReadCost reads,
                        DataPlaneMetrics metrics) {
        this.scorer = scorer;
        this.thresholds = thresholds;
        this.verdicts = verdicts;
        this.reads = reads;
        this.metrics = metrics;
    }

    public boolean blocking() {
        return reads.blocking();
    }

    public Resolution resolve(byte[] requestLine, long bodyLength, ConnectionInfo connection) {
        Resolution decided = decide(requestLine, bodyLength, connection);
        Optional<Tier> floor = connection.floor();
        return floor.isEmpty() ? decided
                : new Resolution(decided.tier().atLeast(floor.get()), decided.score(), decided.source());
    }

    private Resolution decide(byte[] requestLine, long bodyLength, ConnectionInfo connection) {
        int javaScore = scorer.score(requestLine, bodyLength);
        if (verdicts != VerdictSource.NONE) {
            Optional<KernelVerdict> verdict = connection.tuple().flatMap(verdicts::lookup);
            if (verdict.isPresent() && verdict.get().belongsTo(Scorer.requestLineHash(requestLine), bodyLength)) {
                KernelVerdict v = verdict.get();
                if (v.score() != javaScore) {
                    metrics.disagreement();
                }
                // The kernel tiered the score under the thresholds of the moment the packet arrived;
                // serve it under the ones in force now (a PATCH or the feedback loop may have moved them).
                return new Resolution(thresholds.read().tierFor(v.score()), v.score(), RouteSource.KERNEL);
            }
            // No verdict (not seen by XDP, evicted) or the latest head on this keep-alive connection
            // is another request's: never apply it.
            metrics.verdictFallback(verdict.isPresent() ? "stale" : "missing");
        }
        return new Resolution(thresholds.read().tierFor(javaScore), javaScore, RouteSource.USER);
    }
}
