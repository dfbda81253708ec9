package io.nexuscore.tenants.limits;

import io.vertx.core.json.JsonObject;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Supplier;

/**
 * How many routers a tenant's limits are split over: the fleet's live members (their heartbeats in
 * the members map), each router enforcing ceil(limit / members). While the cluster does not answer,
 * the last count stands: the other members keep their shares too, so a cut-off router holding its
 * last share keeps the fleet's total where it was (the safe local share). A router alone is one member.
 */
public final class FleetShare {

    /** A router outside any fleet: its share is the whole limit. */
    public static final FleetShare ALONE = new FleetShare(OptionalInt::empty);

    private final Supplier<OptionalInt> liveMembers;
    private volatile int last = 1;

    /** @param liveMembers the live members when the cluster answers, empty when it does not */
    public FleetShare(Supplier<OptionalInt> liveMembers) {
        this.liveMembers = liveMembers;
    }

    /**
     * The share over a fleet's cached view (GET /fleet's document: {@code reachable} and the
     * {@code members} whose heartbeats verify): the member count while the cluster answers.
     */
    public static FleetShare ofView(Supplier<Optional<JsonObject>> view) {
        return new FleetShare(() -> view.get()
                .filter(v -> Boolean.TRUE.equals(v.getBoolean("reachable")) && v.getJsonArray("members") != null)
                .map(v -> OptionalInt.of(v.getJsonArray("members").size()))
                .orElse(OptionalInt.empty()));
    }

    /** The members to split over now: the live count, or the last one seen while the cluster is unreachable. */
    public int members() {
        OptionalInt now = liveMembers.get();
        if (now.isPresent() && now.getAsInt() >= 1) {
            last = now.getAsInt();
        }
        return last;
    }

    /** This router's part of {@code limits}. */
    public TenantLimits of(TenantLimits limits) {
        return limits.share(members());
    }
}
