package io.nexuscore.dataplane;

import io.nexuscore.classify.KernelVerdict;
import io.nexuscore.classify.PromptEstimate;
import io.nexuscore.classify.ReadCost;
import io.nexuscore.classify.Scorer;
import io.nexuscore.classify.ThresholdStore;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import io.nexuscore.classify.VerdictSource;
import io.nexuscore.tiers.AssessmentPolicy;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Decides a request's tier: the kernel's verdict for the connection when it verifiably belongs to
 * this request, else the Java scorer; then the connection's tenant floor.
 *
 * In kernel mode {@link #resolveWithoutSyscall} answers on the event loop from the verdict slot
 * when it can; otherwise {@link #blocking()} tells the caller to run {@link #resolve} (a map lookup
 * syscall) off the event loop. Thresholds are read per request, as {@link io.nexuscore.classify.LiveThresholds} says.
 */
public final class TierResolver {

    private final Scorer scorer;
    private final ThresholdStore thresholds;
    private final Supplier<Thresholds> onLoop;
    private final VerdictSource verdicts;
    private final ReadCost reads;
    private final DataPlaneMetrics metrics;

    /**
     * @param reads what reading {@code verdicts} and {@code thresholds} costs (syscalls in kernel mode)
     */
    public TierResolver(Scorer scorer, ThresholdStore thresholds, VerdictSource verdicts, ReadCost reads,
                        DataPlaneMetrics metrics) {
        this(scorer, thresholds, thresholds::read, verdicts, reads, metrics);
    }

    /**
     * @param onLoop the thresholds as event-loop code may read them (never a syscall: in kernel mode
     *               the {@link io.nexuscore.classify.LiveThresholds#snapshot()}); the slot path
     *               reports these as the ones in force
     * @param reads  what reading {@code verdicts} and {@code thresholds} costs (syscalls in kernel mode)
     */
    public TierResolver(Scorer scorer, ThresholdStore thresholds, Supplier<Thresholds> onLoop, VerdictSource verdicts,
                        ReadCost reads, DataPlaneMetrics metrics) {
        this.scorer = scorer;
        this.thresholds = thresholds;
        this.onLoop = onLoop;
        this.verdicts = verdicts;
        this.reads = reads;
        this.metrics = metrics;
    }

    public boolean blocking() {
        return reads.blocking();
    }

    /** The scorer's keyword policy, which the tiers apply in their own assessment too. */
    public AssessmentPolicy policy(Resolution resolution) {
        return new AssessmentPolicy(resolution.thresholds(), scorer.weights(), AssessmentPolicy.KEYWORD_SCAN_BYTES);
    }

    public Resolution resolve(byte[] requestLine, long bodyLength, PromptEstimate estimate, ConnectionInfo connection) {
        return withFloor(decide(requestLine, bodyLength, estimate, connection), connection);
    }

    /**
     * The resolution when it needs no syscall, so the caller can stay on its event loop: always in
     * user space; in kernel mode when the connection's mmap'ed verdict slot holds this request's
     * verdict (the common case). Empty: call {@link #resolve} off the loop.
     */
    public Optional<Resolution> resolveWithoutSyscall(byte[] requestLine, long bodyLength, PromptEstimate estimate,
                                                      ConnectionInfo connection) {
        if (!reads.blocking()) {
            return Optional.of(resolve(requestLine, bodyLength, estimate, connection));
        }
        if (verdicts == VerdictSource.NONE) {
            return Optional.empty(); // the Java scorer's thresholds are a syscall away
        }
        Optional<KernelVerdict> verdict = connection.tuple().flatMap(verdicts::lookupInMemory);
        if (verdict.isEmpty() || !verdict.get().belongsTo(Scorer.requestLineHash(requestLine), bodyLength)) {
            return Optional.empty();
        }
        // The snapshot, not the store: a store read is a bpf(2) syscall in kernel mode.
        return Optional.of(withFloor(kernelDecision(verdict.get(), scorer.score(requestLine, estimate), estimate,
                onLoop.get()), connection));
    }

    /**
     * XDP's tenant-limit decision for this request (its verdict's VERDICT_F_COUNTED / OVER_* bits), 0
     * when XDP did not count it or the verdict is another request's. The mmap'ed slot first; when the
     * slot holds another connection (a collision), the fallback map, a syscall on the caller's thread:
     * rare, and a request XDP counted must not be counted again. Called only for sources whose
     * tenant XDP counts ({@code LimitGate.countedInKernel}).
     */
    public int kernelLimitFlags(byte[] requestLine, long bodyLength, ConnectionInfo connection) {
        if (verdicts == VerdictSource.NONE || connection.tuple().isEmpty()) {
            return 0;
        }
        Optional<KernelVerdict> verdict = connection.tuple().flatMap(verdicts::lookupInMemory)
                .or(() -> connection.tuple().flatMap(verdicts::lookup));
        int hash = Scorer.requestLineHash(requestLine);
        return verdict.filter(v -> v.belongsTo(hash, bodyLength)).map(KernelVerdict::limitFlags).orElse(0);
    }

    /**
     * Bodies at most this many bytes longer than the prompt's UTF-8 hold nothing but the prompt and
     * its envelope (model, roles, options). Longer ones are decided again from the prompt: most
     * carry tools or schemas; the rest (many messages, escapes like {@code \u00e9}) get the same
     * scan over the prompt's own text, which is what the guests count.
     */
    static final int ENVELOPE_SLACK = 256;

    /**
     * The decision again from the parsed prompt alone, when the bytes the scan counted were not the
     * prompt: the body holds much more than the prompt ({@code tools}, {@code functions}, a
     * {@code response_format} schema, ...; the kernel and its Java twin count those bytes as prompt,
     * where the guests, the routing truth, count the messages' contents only), or the scan found no
     * prompt string at all (a completion's prompt given as a list of strings), so the estimate came
     * from the body's length alone. Only a changed tier replaces {@code decided}
     * (route source {@code user}, counted as {@code nexus_verdict_fallbacks_total{reason}} with
     * {@code non_prompt_body} or {@code unscanned_prompt}); the tenant floor still holds. A request
     * whose body is its prompt keeps its decision after a length comparison.
     */
    public Resolution withParsedPrompt(Resolution decided, byte[] requestLine, String prompt, PromptEstimate scanned,
                                       long bodyLength, ConnectionInfo connection) {
        if (prompt == null || prompt.isEmpty()) {
            return decided;
        }
        String reason = holdsMoreThan(prompt, bodyLength) ? "non_prompt_body" : scanned.blind() ? "unscanned_prompt" : null;
        if (reason == null) {
            return decided;
        }
        PromptEstimate own = PromptEstimate.ofPrompt(prompt);
        int score = scorer.score(requestLine, own);
        Tier tier = decided.thresholds().tierFor(score);
        Optional<Tier> floor = connection.floor();
        if (floor.isPresent()) {
            tier = tier.atLeast(floor.get());
        }
        if (tier == decided.tier()) {
            return decided;
        }
        metrics.verdictFallback(reason);
        return new Resolution(tier, score, RouteSource.USER, decided.thresholds(), own.estimateQ4());
    }

    /** True when the body is more than {@link #ENVELOPE_SLACK} bytes longer than the prompt's UTF-8. */
    private static boolean holdsMoreThan(String prompt, long bodyLength) {
        // A prompt's UTF-8 takes at least a byte a char: most requests stop at the first comparison.
        return bodyLength > (long) prompt.length() + ENVELOPE_SLACK
                && bodyLength > PromptEstimate.utf8Length(prompt) + ENVELOPE_SLACK;
    }

    private static Resolution withFloor(Resolution decided, ConnectionInfo connection) {
        Optional<Tier> floor = connection.floor();
        return floor.isEmpty() ? decided
                : new Resolution(decided.tier().atLeast(floor.get()), decided.score(), decided.source(),
                        decided.thresholds(), decided.estimateQ4());
    }

    private Resolution kernelDecision(KernelVerdict verdict, int javaScore, PromptEstimate estimate, Thresholds inForce) {
        if (verdict.blind()) {
            // The kernel saw no prompt string (the body came in a later segment): the Java twin has
            // the body and scores what the kernel would have scored had it been in the head's segment.
            metrics.verdictFallback("blind");
            return new Resolution(inForce.tierFor(javaScore), javaScore, RouteSource.USER, inForce, estimate.estimateQ4());
        }
        if (verdict.score() != javaScore) {
            metrics.disagreement();
        }
        // The kernel tiered the score under the thresholds of the moment its packet arrived; serve it
        // under the ones in force now (a PATCH or the feedback loop may have moved them since).
        return new Resolution(inForce.tierFor(verdict.score()), verdict.score(), RouteSource.KERNEL, inForce,
                estimate.estimateQ4());
    }

    private Resolution decide(byte[] requestLine, long bodyLength, PromptEstimate estimate, ConnectionInfo connection) {
        int javaScore = scorer.score(requestLine, estimate);
        // The kernel decided with the thresholds in its map; read now, they are the ones in force
        // unless a change raced this request.
        Thresholds inForce = thresholds.read();
        if (verdicts != VerdictSource.NONE) {
            Optional<KernelVerdict> verdict = connection.tuple().flatMap(verdicts::lookup);
            if (verdict.isPresent() && verdict.get().belongsTo(Scorer.requestLineHash(requestLine), bodyLength)) {
                return kernelDecision(verdict.get(), javaScore, estimate, inForce);
            }
            // No verdict (not seen by XDP, evicted) or the latest head on this keep-alive connection
            // is another request's: never apply it.
            metrics.verdictFallback(verdict.isPresent() ? "stale" : "missing");
        }
        return new Resolution(inForce.tierFor(javaScore), javaScore, RouteSource.USER, inForce, estimate.estimateQ4());
    }
}
