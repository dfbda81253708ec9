package io.nexuscore.classify;

/**
 * A verdict the XDP program stored for a connection's latest request head. Mirrors
 * {@code struct routing_decision} in nexus_shared.h: score, tier, and a 32-bit check mixing the
 * request-line hash with the body length, by which the data plane verifies the verdict.
 * {@code blind}: the head's segment held no prompt string (VERDICT_F_BLIND), so the estimate came
 * from the body length alone and the data plane, which has the body, scores the request itself.
 * {@code limitFlags}: XDP's tenant-limit decision (VERDICT_F_COUNTED, VERDICT_F_OVER_*; 0 when the
 * source has no kernel-counted limits); docs/tenant-limits.md.
 */
public record KernelVerdict(int score, Tier tier, int check, boolean blind, int limitFlags) {


    /** A verdict without a tenant-limit decision. */
    public KernelVerdict(int score, Tier tier, int check, boolean blind) {
        this(score, tier, check, blind, 0);
    }

    /** A verdict whose estimate saw the prompt string. */
    public KernelVerdict(int score, Tier tier, int check) {
        this(score, tier, check, false);
    }

    /** The verdict the kernel stores for a head with this request-line hash and body length. */
    public KernelVerdict(int score, Tier tier, long bodyLength, int requestLineHash) {
        this(score, tier, check(requestLineHash, bodyLength));
    }

    /**
     * routing_decision.check: the request-line hash and the body length mixed by
     * {@link Scorer#lineMix} (verdict_check() in verdict_store.bpf.h).
     */
    public static int check(int requestLineHash, long bodyLength) {
        return (int) Scorer.lineMix(Scorer.lineMix(Scorer.LINE_HASH_SEED, requestLineHash & 0xffffffffL), bodyLength);
    }

    /**
     * True when this verdict was computed from the request being served: on a keep-alive connection
     * the map holds only the latest head, which may belong to another request. (A different request
     * passes only on a 32-bit check collision.)
     */
    public boolean belongsTo(int servedRequestLineHash, long servedBodyLength) {
        return check == check(servedRequestLineHash, servedBodyLength);
    }
}
