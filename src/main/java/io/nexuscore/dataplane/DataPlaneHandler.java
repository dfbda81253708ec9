package io.nexuscore.dataplane;

import io.nexuscore.classify.Tier;
import io.nexuscore.config.DataPlaneConfig;
import io.nexuscore.http.Problems;
import io.nexuscore.http.TlsOnPlainPort;
import io.nexuscore.tiers.TierBackend;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonObject;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The per-request pipeline, shared by every acceptor instance (it holds no per-connection state),
 * built once from its {@link DataPlaneDependencies}. A request goes through four steps, a class each:
 * {@link RequestAdmission} (the head: Host, Origin, tenant, endpoint, declared size),
 * {@link BodyReading} (the body within its limits), {@link TierDispatch} (parse, resolve the tier,
 * dispatch, fall back, answer) and, for a stream a backend opened, {@link StreamRelay}; a request a
 * tier saw ends in {@link RequestAccounting}, one refused before in {@link Refusals}.
 *
 * Threading: everything runs on the request's event loop, tier resolution included when the kernel's
 * verdict is in its mmap'ed slot; only a resolution that needs a syscall (slot miss in kernel mode)
 * hops to a worker pool and comes back. Tier backends never block.
 */
public final class DataPlaneHandler {

    public static final String HEADER_TIER = "X-NX-Tier";
    public static final String HEADER_ASSIGNED_TIER = "X-NX-Assigned-Tier";
    public static final String HEADER_SCORE = "X-NX-Score";
    public static final String HEADER_ROUTE_SOURCE = "X-NX-Route-Source";
    /** Set when the assigned tier could not take the request and its fallback tier served it: the assigned tier. */
    public static final String HEADER_FALLBACK_FROM = "X-NX-Fallback-From";
    /** The tier's own count of the prompt's tokens (cl100k_base in the Wasm guests). */
    public static final String HEADER_TOKENS = "X-NX-Tokens";
    /** How wrong the assignment was: "none", or the kinds that apply, e.g. "strict,banded". */
    public static final String HEADER_MISROUTE = "X-NX-Misroute";
    /** Status recorded (never sent) when the client left before its answer was ready, as nginx logs it. */
    static final int CLIENT_CLOSED = 499;

    private final DataPlaneMetrics metrics;
    private final ConnectionInspector connections;
    private final HeadTimeouts headTimeouts;
    private final Refusals refusals;
    private final RequestAdmission admission;

    public DataPlaneHandler(DataPlaneDependencies dependencies) {
        DataPlaneConfig config = dependencies.config();
        this.metrics = dependencies.metrics();
        InferenceSpans spans = new InferenceSpans(dependencies.tracing());
        Optional<EmbeddingsRoute> embeddings = dependencies.targets().embeddings().map(e -> new EmbeddingsRoute(
                e.upstream(), e.upstreamModel(), e.listedModel(), e.registry(), dependencies.events(), metrics, spans));
        this.connections = new ConnectionInspector(dependencies.floors());
        this.headTimeouts = new HeadTimeouts(config.headerTimeoutMs());
        this.refusals = new Refusals(metrics, spans);

        Map<Tier, TierBackend> backends = new EnumMap<>(dependencies.backends());
        Set<Tier> guestTiers = EnumSet.noneOf(Tier.class);
        for (Tier tier : Tier.values()) {
            Objects.requireNonNull(backends.get(tier), () -> "no backend for tier " + tier.label());
            if (backends.get(tier).poolState().isPresent()) {
                guestTiers.add(tier);
            }
        }
        Map<Tier, String> models = dependencies.models();
        Map<Tier, String> tierModels = models.isEmpty() ? new EnumMap<>(Tier.class) : new EnumMap<>(models);
        Map<Tier, Tier> fallbacks = dependencies.fallbacks().isEmpty() ? Map.of() : new EnumMap<>(dependencies.fallbacks());

        RequestAccounting accounting = new RequestAccounting(metrics, spans, guestTiers,
                dependencies.latencyRecorder(), dependencies.events());
        StreamRelay relay = new StreamRelay(tierModels, config.misrouteBand(), metrics, accounting);
        TierDispatch dispatch = new TierDispatch(config.testHooks(), new RequestGuard(config.requestLimits()),
                connections, dependencies.resolver(), dependencies.resolverPool(), backends, fallbacks, embeddings,
                config.misrouteBand(), metrics, refusals, relay, accounting, dependencies.limits());
        BodyReading bodies = new BodyReading(config, metrics, refusals, dispatch);
        this.admission = new RequestAdmission(config, dependencies.keys(), headTimeouts,
                modelList(models, dependencies.targets()), embeddings.isPresent(), refusals, bodies);
    }

    /** {@code GET /v1/models}'s answer: each tier's model, then the targets' own, each name once. */
    private static Buffer modelList(Map<Tier, String> models, ApiTargets targets) {
        LinkedHashMap<String, JsonObject> listed = new LinkedHashMap<>();
        models.forEach((tier, model) -> listed.putIfAbsent(model, new JsonObject().put("id", model).put("object", "model")
                .put("created", 0).put("owned_by", "nexuscore").put("tier", tier.label())));
        // Names that several tiers (or a tier and its upstream) share are listed once.
        targets.moreModels().forEach(m -> listed.putIfAbsent(m.getString("id"), m));
        return OpenAiResponses.models(listed.values()).toBuffer();
    }

    /** Connection accepted: read its connection-level facts (SO_MARK) once; start the head timeout. */
    public void accepted(HttpConnection connection) {
        connections.accepted(connection);
        headTimeouts.accepted(connection);
        MalformedBodyGuard.install(ConnectionInspector.channelOf(connection));
        TlsOnPlainPort.install(connection, () -> metrics.httpError(TlsOnPlainPort.refusal().slug()));
    }

    /** A request Netty could not decode: answer in problem+json, count it, close the connection. */
    public void invalid(HttpServerRequest request) {
        refusals.rejectAndClose(request, Problems.undecodable(request.decoderResult().cause()));
    }

    public void handle(HttpServerRequest request) {
        admission.admit(request);
    }
}
