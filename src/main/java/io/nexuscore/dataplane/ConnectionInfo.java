package io.nexuscore.dataplane;

import io.nexuscore.classify.FourTuple;
import io.nexuscore.classify.Tier;
import java.util.Optional;

/**
 * What the data plane knows about a connection from its accept: fixed for the connection's life.
 *
 * @param tuple the 4-tuple kernel verdicts are keyed by (empty for IPv6 or unix sockets)
 * @param floor the tenant tier floor from SO_MARK (empty without native transport or without a mark)
 */
public record ConnectionInfo(Optional<FourTuple> tuple, Optional<Tier> floor) {

    public static final ConnectionInfo UNKNOWN = new ConnectionInfo(Optional.empty(), Optional.empty());
}
