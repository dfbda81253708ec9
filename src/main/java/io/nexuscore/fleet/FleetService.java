package io.nexuscore.fleet;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.nexuscore.config.AdaptiveConfig;
import io.nexuscore.config.AtomicFile;
import io.nexuscore.config.ClusterConfig;
import io.nexuscore.events.EventSink;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.AsyncMap;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * This router's membership in a fleet: the {@link FleetAgent} on a thread of its own (a sync every
 * {@code cluster.syncMs}, and at once when the policy entry changes), a signed heartbeat into the
 * members map, the cached view GET /fleet serves (built from the heartbeats that verify), and the
 * fleet state file that keeps the last version across a restart of the whole fleet. Nothing goes
 * over Vert.x's event bus (its TCP transport authenticates no one): the nudge to sync is Hazelcast's
 * own entry event on the policy map, without the value, so it carries nothing to trust.
 */
public final class FleetService implements FleetStatus, AutoCloseable {

    private static final System.Logger LOG = System.getLogger(FleetService.class.getName());
    static final String MEMBERS_MAP = "nexuscore.fleet.members";
    /** The longest the fleet thread waits for the cluster before it calls it unreachable. */
    static final Duration CALL_TIMEOUT = Duration.ofSeconds(2);
    static final Duration HEARTBEAT = Duration.ofSeconds(1);
    /** A member whose heartbeat is this old has left the members map. */
    static final Duration MEMBER_TTL = Duration.ofSeconds(5);
    /** Heartbeat entries read per round at most: a stranger who fills the map costs bounded reads. */
    static final int MAX_MEMBERS_READ = 256;

    private final Vertx vertx;
    private final ClusterConfig config;
    private final String mode;
    private final FleetAgent agent;
    private final Path fleetFile;
    private final ScheduledExecutorService thread;
    private final AsyncMap<Object, Object> members;
    private final FleetKeys keys;
    private final FleetRejections rejections;
    /** Stops the policy map's change events (null without Hazelcast: tests on a local Vert.x). */
    private final Runnable stopChangeEvents;
    private volatile JsonObject view;
    private final AtomicBoolean syncQueued = new AtomicBoolean();
    /** The last sync failure logged; null after a sync that worked. Fleet thread only. */
    private final RepeatedFailureLog syncFailures = new RepeatedFailureLog(LOG, "fleet sync");
    private final RepeatedFailureLog heartbeatFailures = new RepeatedFailureLog(LOG, "fleet heartbeat");
    private long savedVersion;

    private FleetService(Vertx vertx, ClusterConfig config, String mode, AdaptiveConfig.Scope scope, LocalPolicy local,
                         EventSink events, Path fleetFile, FleetKeys keys, MeterRegistry registry) {
        this.vertx = vertx;
        this.config = config;
        this.mode = mode;
        this.fleetFile = fleetFile;
        this.savedVersion = loadVersion(fleetFile);
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "nexus-fleet");
            t.setDaemon(true);
            return t;
        });
        this.keys = keys;
        this.rejections = new FleetRejections(registry);
        SharedPolicy shared = SharedMapPolicy.open(vertx, CALL_TIMEOUT, keys, rejections);
        this.members = SharedMapPolicy.await(vertx.sharedData().getClusterWideMap(MEMBERS_MAP), CALL_TIMEOUT,
                "opening " + MEMBERS_MAP);
        this.agent = new FleetAgent(config.node(), shared, local, events, scope, System::currentTimeMillis, this::held);
        this.stopChangeEvents = onPolicyChange(vertx, this::queueSync);
        this.view = new JsonObject().put("node", config.node()).put("cluster", config.name())
                .put("reachable", false).put("members", new JsonArray());
    }

    /**
     * Joins the fleet's policy before the router serves: the fleet's document is applied to the local
     * stores. When the fleet's map does not answer, the router starts on its state file and takes the
     * fleet's policy as soon as it does.
     *
     * @param stateFile the control plane's state file; the fleet's version is kept beside it
     * @param keys      the fleet's secrets ({@code cluster.secretFile}): what this router writes is signed,
     *                  what it reads is verified before it is decoded
     */
    public static FleetService start(Vertx vertx, ClusterConfig config, AdaptiveConfig.Scope scope, LocalPolicy local,
                                     EventSink events, String mode, Path stateFile, MeterRegistry registry,
                                     FleetKeys keys) {
        FleetService service = new FleetService(vertx, config, mode, scope, local, events,
                stateFile.toAbsolutePath().resolveSibling("fleet.json"), keys, registry);
        try {
            PolicyDoc doc = service.agent.join(service.savedVersion);
            LOG.log(Level.INFO, "fleet {0}: node {1} joined at policy version {2} (from {3}), {4} member(s)",
                    config.name(), config.node(), doc.version(), doc.origin(), service.clusterSize());
        } catch (SharedPolicy.Unreachable e) {
            LOG.log(Level.WARNING, "fleet {0}: the policy map did not answer ({1}); serving on the state file until it does",
                    config.name(), e.getMessage());
        } catch (RuntimeException e) {
            // The fleet's document decoded but this router's stores refused it (e.g. more tenants than
            // its tenant map holds): serve on the state file and try again at every sync, never fail the start.
            LOG.log(Level.WARNING, "fleet " + config.name() + ": could not take the fleet's policy (" + e
                    + "); serving on the state file and trying again every " + config.syncMs() + " ms", e);
        }
        service.heartbeat();
        service.thread.scheduleWithFixedDelay(service::syncQuietly, config.syncMs(), config.syncMs(), TimeUnit.MILLISECONDS);
        service.thread.scheduleWithFixedDelay(service::heartbeat, HEARTBEAT.toMillis(), HEARTBEAT.toMillis(),
                TimeUnit.MILLISECONDS);
        Gauge.builder("nexus_fleet_policy_version", service, s -> s.agent.adopted() == null ? 0 : s.agent.adopted().version())
                .description("Version of the fleet policy this router holds").register(registry);
        Gauge.builder("nexus_fleet_reachable", service, s -> s.agent.reachable() ? 1 : 0)
                .description("1 while the fleet's policy map answers this router").register(registry);
        Gauge.builder("nexus_fleet_members", service, s -> s.view.getJsonArray("members").size())
                .description("Routers with a live heartbeat in the fleet, this one included").register(registry);
        return service;
    }

    @Override
    public Optional<JsonObject> view() {
        return Optional.of(view);
    }

    @Override
    public void changedHere() {
        queueSync();
    }

    /**
     * One sync on the fleet's thread, unless one is queued already: a burst of changes (local ones, or
     * writes to the policy entry, which anyone on the cluster's port can make) costs one queued sync.
     */
    private void queueSync() {
        if (!syncQueued.compareAndSet(false, true)) {
            return;
        }
        try {
            thread.execute(() -> {
                syncQueued.set(false); // a change arriving during this sync queues the next one
                syncQuietly();
            });
        } catch (java.util.concurrent.RejectedExecutionException closing) {
            syncQueued.set(false); // shutting down: the change is in the state file
        }
    }

    private void syncQuietly() {
        try {
            if (agent.adopted() == null) {
                agent.join(savedVersion);
            } else {
                agent.sync();
            }
            syncFailures.succeeded();
        } catch (SharedPolicy.Unreachable e) {
            // logged once by the agent; the router serves with the policy it holds
        } catch (RuntimeException e) {
            syncFailures.failed(e);
        }
    }

    /**
     * Calls {@code nudge} whenever the policy entry is written, by anyone: another router's write is
     * taken at once instead of at the next period. The event carries no value (nothing of a stranger's
     * is read here); a stranger's flood of writes costs one queued sync at a time ({@link #queueSync}).
     */
    private static Runnable onPolicyChange(Vertx vertx, Runnable nudge) {
        if (!(((io.vertx.core.internal.VertxInternal) vertx).clusterManager()
                instanceof io.vertx.spi.cluster.hazelcast.HazelcastClusterManager hazelcast)) {
            return () -> { };
        }
        com.hazelcast.map.IMap<Object, Object> map = hazelcast.getHazelcastInstance().getMap(SharedMapPolicy.MAP);
        java.util.UUID id = map.addEntryListener(new PolicyWritten(nudge), SharedMapPolicy.KEY, false);
        return () -> map.removeEntryListener(id);
    }

    private record PolicyWritten(Runnable nudge) implements com.hazelcast.map.listener.EntryAddedListener<Object, Object>,
            com.hazelcast.map.listener.EntryUpdatedListener<Object, Object> {
        @Override
        public void entryAdded(com.hazelcast.core.EntryEvent<Object, Object> event) {
            nudge.run();
        }

        @Override
        public void entryUpdated(com.hazelcast.core.EntryEvent<Object, Object> event) {
            nudge.run();
        }
    }

    /** Every document this router holds: saved when its version is new. */
    private void held(PolicyDoc doc) {
        if (doc.version() != savedVersion) {
            saveVersion(doc);
        }
    }

    /** Writes this router's heartbeat and refreshes the view; never throws (it runs on a fixed delay). */
    private void heartbeat() {
        try {
            heartbeatOnce();
            heartbeatFailures.succeeded();
        } catch (RuntimeException e) {
            heartbeatFailures.failed(e);
        }
    }

    private void heartbeatOnce() {
        PolicyDoc doc = agent.adopted();
        long now = System.currentTimeMillis();
        JsonObject self = new JsonObject()
                .put("node", config.node())
                .put("address", config.host() + ":" + config.port())
                .put("mode", mode)
                .put("policy_version", doc == null ? null : doc.version())
                .put("last_heartbeat", Instant.ofEpochMilli(now).toString());
        List<JsonObject> list = new ArrayList<>();
        boolean reachable;
        try {
            SharedMapPolicy.await(members.put(config.node(), keys.seal(MEMBERS_MAP, config.node(), self.encode()),
                    MEMBER_TTL.toMillis()), CALL_TIMEOUT, "heartbeat");
            // Entry by entry: a value the deserialization filter refuses costs that entry, not the view.
            Set<Object> nodes = SharedMapPolicy.awaitRead(members.keys(), CALL_TIMEOUT, "reading " + MEMBERS_MAP,
                    rejections, MEMBERS_MAP);
            for (Object node : nodes.stream().limit(MAX_MEMBERS_READ).toList()) {
                Optional<JsonObject> member;
                try {
                    Object value = node instanceof String key ? SharedMapPolicy.awaitRead(members.get(key),
                            CALL_TIMEOUT, "reading " + MEMBERS_MAP, rejections, MEMBERS_MAP) : node;
                    if (value == null) {
                        continue; // expired since the keys were read
                    }
                    member = verifiedMember(node, value);
                } catch (SharedPolicy.Unreachable e) {
                    if (!SharedMapPolicy.refusedByFilter(e)) {
                        throw e;
                    }
                    member = Optional.empty(); // counted by awaitRead
                }
                member.ifPresent(list::add);
            }
            reachable = agent.reachable();
        } catch (SharedPolicy.Unreachable e) {
            list.add(self); // cut off: only itself to show, flagged below
            reachable = false;
        }
        list.sort(Comparator.comparing(m -> m.getString("node")));
        list.forEach(m -> m.put("self", config.node().equals(m.getString("node"))));
        view = new JsonObject()
                .put("node", config.node())
                .put("cluster", config.name())
                .put("reachable", reachable)
                .put("cluster_members", clusterSize())
                .put("policy", doc == null ? null : new JsonObject().put("version", doc.version())
                        .put("origin", doc.origin()).put("cause", doc.cause())
                        .put("at", Instant.ofEpochMilli(doc.atMs()).toString())
                        .put("thresholds", PolicyDoc.thresholdsJson(doc.content().thresholds())))
                .put("members", new JsonArray(new ArrayList<>(list)));
    }

    private int clusterSize() {
        return ((io.vertx.core.internal.VertxInternal) vertx).clusterManager().getNodes().size();
    }

    /**
     * A member's heartbeat entry once its envelope verifies, or empty (counted, logged once) when it
     * does not: the members map is writable by anyone on the cluster's port, and one bad entry must
     * neither show on GET /fleet nor stop the heartbeat (a scheduled task that throws never runs again).
     */
    private Optional<JsonObject> verifiedMember(Object key, Object value) {
        if (!(key instanceof String node) || !(value instanceof String text)) {
            Object odd = key instanceof String ? value : key;
            String type = odd == null ? "null" : odd.getClass().getName();
            rejections.refused(MEMBERS_MAP, FleetKeys.Reason.NOT_TEXT, "a " + type + ", not text",
                    type + '\0' + java.util.Objects.hashCode(odd));
            return Optional.empty();
        }
        try {
            Optional<JsonObject> entry = member(keys.open(MEMBERS_MAP, node, text));
            if (entry.isEmpty() || !node.equals(entry.get().getString("node"))) {
                rejections.refused(MEMBERS_MAP, FleetKeys.Reason.MALFORMED, "a signed entry that is not a heartbeat", text);
                return Optional.empty();
            }
            return entry;
        } catch (FleetKeys.Refused e) {
            rejections.refused(MEMBERS_MAP, e.reason(), e.getMessage(), text);
            return Optional.empty();
        }
    }

    /** A heartbeat entry's body, or empty when it is not one. */
    static Optional<JsonObject> member(String text) {
        try {
            JsonObject entry = new JsonObject(text);
            return entry.getValue("node") instanceof String ? Optional.of(entry) : Optional.empty();
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    private static long loadVersion(Path file) {
        if (!Files.exists(file)) {
            return 0;
        }
        try {
            long version = new JsonObject(Files.readString(file)).getLong("version", 0L);
            if (version < 0 || version >= PolicyDoc.MAX_VERSION - 1) {
                throw new IllegalArgumentException("version " + version + " is outside 0.." + (PolicyDoc.MAX_VERSION - 2));
            }
            return version;
        } catch (IOException | RuntimeException e) {
            LOG.log(Level.WARNING, "ignoring unreadable fleet state file {0}: {1}", file, e.getMessage());
            return 0;
        }
    }

    private void saveVersion(PolicyDoc doc) {
        try {
            AtomicFile.write(fleetFile, new JsonObject().put("version", doc.version()).put("origin", doc.origin())
                    .encodePrettily().getBytes(StandardCharsets.UTF_8), false);
            savedVersion = doc.version();
        } catch (IOException e) {
            LOG.log(Level.WARNING, "cannot save the fleet version to {0}: {1}", fleetFile, e.getMessage());
        }
    }

    /** Stops syncing and takes this router's heartbeat out; Vert.x's close then leaves the cluster. */
    @Override
    public void close() {
        try {
            stopChangeEvents.run();
        } catch (RuntimeException e) {
            // leaving anyway: the listener goes with the member
        }
        thread.shutdownNow();
        try {
            thread.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            SharedMapPolicy.await(members.remove(config.node()), CALL_TIMEOUT, "leaving " + MEMBERS_MAP);
        } catch (SharedPolicy.Unreachable e) {
            // the entry expires by itself
        }
    }
}
