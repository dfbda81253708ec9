package io.nexuscore.dataplane;

import io.nexuscore.classify.FourTuple;
import io.nexuscore.classify.Tier;
import java.util.Optional;

/**
 * What the data plane knows about a connection: its 4-tuple and SO_MARK are fixed from its accept;
 * its tenant floor is looked up again for every request.
 *
 * @param tuple     the 4-tuple kernel verdicts are keyed by (empty for unix sockets)
 * @param floor     the tenant tier floor that applies to the request being served
 * @param markFloor the tenant floor the TC chain put in SO_MARK on the SYN (empty without native
 *                  transport, without a mark, or with a SYN cookie)
 */
public record ConnectionInfo(Optional<FourTuple> tuple, Optional<Tier> floor, Optional<Tier> markFloor) {

    public static final ConnectionInfo UNKNOWN = new ConnectionInfo(Optional.empty(), Optional.empty(), Optional.empty());

    public ConnectionInfo(Optional<FourTuple> tuple, Optional<Tier> floor) {
        this(tuple, floor, floor);
    }

    ConnectionInfo withFloor(Optional<Tier> now) {
        return now.equals(floor) ? this : new ConnectionInfo(tuple, now, markFloor);
    }
}
