package io.nexuscore.classify;

/**
 * A verdict the XDP program stored for a connection's latest request head. Mirrors
 * {@code struct routing_decision} in nexus_shared.h.
 */
public record KernelVerdict(int score, Tier tier, long bodyLength, int requestLineHash) {

    /**
     * True when this verdict was computed from the request being served: on a keep-alive connection
     * the map holds only the latest head, which may belong to another request.
     */
    public boolean belongsTo(int servedRequestLineHash, long servedBodyLength) {
        return requestLineHash == servedRequestLineHash && bodyLength == servedBodyLength;
    }
}
