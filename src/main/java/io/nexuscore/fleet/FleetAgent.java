package io.nexuscore.fleet;

import io.nexuscore.config.AdaptiveConfig.Scope;
import io.nexuscore.events.EventSink;
import io.vertx.core.json.JsonObject;
import java.lang.System.Logger.Level;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Keeps this router's policy and the fleet's one document in step. One thread calls it
 * ({@link #join} once, then {@link #sync} on a timer and after a change made on this router):
 * <ul>
 *   <li>a change made here (REST API, bpftool on a pinned map) is written to the fleet as version N+1 with a
 *       compare-and-set; when another router got there first, this router's edit is laid on top of the
 *       newer document (field by field) and tried again, so no change is lost and all routers end on one version;</li>
 *   <li>a newer fleet document is applied to the local stores and announced on /events with its origin;</li>
 *   <li>in {@link Scope#FLEET} scope a step of the local kernel loop is proposed only against the version it
 *       was based on, and at most once per adaptive period: when another router already stepped the fleet,
 *       this step is dropped and the fleet's thresholds put back, so an overload seen by two routers steps once;</li>
 *   <li>after a partition the last writer wins ({@link PolicyDoc#LAST_WRITER}): a router holding a newer
 *       document than the map writes it back, one holding an older one adopts the map's.</li>
 * </ul>
 */
public final class FleetAgent {

    private static final System.Logger LOG = System.getLogger(FleetAgent.class.getName());
    /** Compare-and-set rounds before a sync gives up until the next one: only a storm of writers loses this many. */
    private static final int CAS_ATTEMPTS = 50;

    private final String node;
    private final SharedPolicy shared;
    private final LocalPolicy local;
    private final EventSink events;
    private final Scope scope;
    private final LongSupplier clock;
    private final Consumer<PolicyDoc> adoptedListener;
    private volatile PolicyDoc adopted;
    private volatile boolean reachable = true;

    /**
     * @param adoptedListener told of every document this router holds from now on (the fleet state
     *                        file, the /fleet view); called on the agent's thread
     */
    public FleetAgent(String node, SharedPolicy shared, LocalPolicy local, EventSink events, Scope scope,
                      LongSupplier clock, Consumer<PolicyDoc> adoptedListener) {
        this.node = node;
        this.shared = shared;
        this.local = local;
        this.events = events;
        this.scope = scope;
        this.clock = clock;
        this.adoptedListener = adoptedListener;
    }

    /** The document this router holds; null before {@link #join}. */
    public PolicyDoc adopted() {
        return adopted;
    }

    /** False while the last call to the fleet's map failed. */
    public boolean reachable() {
        return reachable;
    }

    /**
     * Before the router serves: takes the fleet's policy when there is one; when there is none (the
     * first router up) offers this router's, numbered after {@code savedVersion} (the version it last
     * held, from its fleet state file) so a fleet restarted whole does not go back in versions.
     *
     * @throws SharedPolicy.Unreachable when the map does not answer (the router then starts on its own)
     */
    public synchronized PolicyDoc join(long savedVersion) {
        LocalPolicy.State here = local.read();
        for (int attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
            Optional<PolicyDoc> fleet = shared.read();
            if (fleet.isPresent()) {
                local.apply(here.content().deltaTo(fleet.get().content()), here);
                hold(fleet.get(), "joined");
                return fleet.get();
            }
            PolicyDoc first = new PolicyDoc(savedVersion + 1, node, PolicyDoc.CAUSE_JOIN, clock.getAsLong(), 0,
                    here.content());
            if (shared.compareAndSet(Optional.empty(), first)) {
                hold(first, "proposed");
                return first;
            }
        }
        throw new IllegalStateException("the fleet's policy kept changing while joining");
    }

    /** One round: sends a local change, takes a newer fleet document, or reconciles after a partition. */
    public synchronized void sync() {
        if (adopted == null) {
            throw new IllegalStateException("sync before join");
        }
        try {
            syncOnce();
            if (!reachable) {
                LOG.log(Level.INFO, "fleet reachable again, policy version {0}", adopted.version());
            }
            reachable = true;
        } catch (SharedPolicy.Unreachable e) {
            if (reachable) {
                LOG.log(Level.WARNING, "fleet unreachable ({0}): serving with policy version {1} until it is back",
                        e.getMessage(), adopted.version());
            }
            reachable = false;
        }
    }

    private void syncOnce() {
        LocalPolicy.State here = local.read();
        PolicyDelta change = adopted.content().deltaTo(here.content());
        boolean adaptiveStep = here.thresholdsWriter() == LocalPolicy.Writer.KERNEL && change.thresholds().isPresent();
        if (adaptiveStep && scope == Scope.NODE) {
            change = change.withoutThresholds(); // this router's own loop moves this router's thresholds
            adaptiveStep = false;
        }
        Optional<PolicyDoc> read = shared.read();
        if (read.isEmpty()) {
            // The map lost the document (every router holding it left): ours is the fleet's now.
            PolicyDoc ours = change.isEmpty() ? adopted
                    : adopted.next(node, PolicyDoc.CAUSE_EXTERNAL, clock.getAsLong(), adopted.content().with(change));
            if (shared.compareAndSet(Optional.empty(), ours)) {
                hold(ours, "restored");
            }
            return;
        }
        PolicyDoc fleet = read.get();
        if (adaptiveStep && change.thresholdsOnly()) {
            proposeStep(fleet, change, here);
        } else if (!change.isEmpty()) {
            boolean external = change.thresholds().isPresent() && here.thresholdsWriter() == LocalPolicy.Writer.OTHER;
            propose(fleet, change, external ? PolicyDoc.CAUSE_EXTERNAL : PolicyDoc.CAUSE_API, here);
        } else if (!fleet.equals(adopted)) {
            if (fleet.newerThan(adopted)) {
                take(fleet, here);
            } else if (shared.compareAndSet(read, adopted)) {
                // Last writer wins: ours is newer (written while cut off); the fleet takes it.
                publish("reconciled", adopted);
            }
        }
    }

    /**
     * A step of the local kernel loop, proposed against the version it was based on. Dropped (the
     * fleet's thresholds put back) when the fleet moved since, or stepped less than a period ago.
     */
    private void proposeStep(PolicyDoc fleet, PolicyDelta step, LocalPolicy.State here) {
        long now = clock.getAsLong();
        // A step stamp in the future (another node's clock ahead, or a tool's write) counts as stale:
        // otherwise it would hold the fleet's loop still until that time.
        boolean gapPassed = fleet.adaptiveStepAtMs() > now || now - fleet.adaptiveStepAtMs() >= minStepGapMs(fleet);
        if (fleet.version() == adopted.version() && fleet.equals(adopted) && gapPassed) {
            PolicyDoc next = fleet.next(node, PolicyDoc.CAUSE_ADAPTIVE, now, fleet.content().with(step))
                    .withAdaptiveStepAt(now);
            if (shared.compareAndSet(Optional.of(fleet), next)) {
                hold(next, "proposed");
                return;
            }
            fleet = shared.read().orElse(fleet);
        }
        PolicyDoc current = fleet.newerThan(adopted) ? fleet : adopted;
        local.apply(here.content().deltaTo(current.content()), here);
        adopted = current;
        adoptedListener.accept(current);
        publish("step-dropped", current);
    }

    /** The fleet steps at most once per adaptive period (a tenth of slack for timer jitter). */
    private static long minStepGapMs(PolicyDoc fleet) {
        return fleet.content().adaptive().map(a -> a.periodMs() - a.periodMs() / 10L).orElse(0L);
    }

    /** An edit made here, laid on the fleet's newest document until the compare-and-set holds. */
    private void propose(PolicyDoc fleet, PolicyDelta change, String cause, LocalPolicy.State here) {
        PolicyContent mine = adopted.content().with(change);
        for (int attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
            PolicyContent merged = fleet.content().with(change);
            if (merged.equals(fleet.content())) {
                // The fleet holds this edit already (another router made the same one, or an earlier
                // round here wrote it and then could not apply the rest of the fleet's document):
                // take the fleet's document instead of writing a new version of the same content,
                // which a store that keeps refusing the rest would otherwise repeat at every sync.
                local.apply(mine.deltaTo(merged), here);
                hold(fleet, "adopted");
                return;
            }
            PolicyDoc next = fleet.next(node, cause, clock.getAsLong(), merged);
            if (shared.compareAndSet(Optional.of(fleet), next)) {
                local.apply(mine.deltaTo(merged), here); // other routers' edits of other fields
                hold(next, "proposed");
                return;
            }
            fleet = shared.read().orElseThrow(() -> new SharedPolicy.Unreachable("the fleet's policy vanished", null));
        }
        LOG.log(Level.WARNING, "fleet: {0} writers in a row beat this router's change; trying again next round",
                CAS_ATTEMPTS);
    }

    private void take(PolicyDoc fleet, LocalPolicy.State here) {
        local.apply(adopted.content().deltaTo(fleet.content()), here);
        hold(fleet, "adopted");
    }

    private void hold(PolicyDoc doc, String action) {
        adopted = doc;
        adoptedListener.accept(doc);
        publish(action, doc);
    }

    /** A {@code fleet} event on this router's /events: what it did with which version, and whose change it was. */
    private void publish(String action, PolicyDoc doc) {
        events.publish("fleet", new JsonObject()
                .put("node", node)
                .put("action", action)
                .put("version", doc.version())
                .put("origin", doc.origin())
                .put("cause", doc.cause())
                .put("at_ms", doc.atMs())
                .put("thresholds", PolicyDoc.thresholdsJson(doc.content().thresholds())));
    }
}
