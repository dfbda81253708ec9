package io.nexuscore.tiers.upstream;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.nexuscore.classify.Scorer;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.TierConfig;
import io.nexuscore.config.UpstreamConfig;
import io.nexuscore.events.EventSink;
import io.nexuscore.http.ByteBudget;
import io.nexuscore.tiers.StreamingBackend;
import io.nexuscore.tiers.TierBackend;
import io.nexuscore.tiers.TierFailure;
import io.nexuscore.tiers.TierFailure.Kind;
import io.nexuscore.tiers.TierReply;
import io.nexuscore.tiers.TierRequest;
import io.nexuscore.tiers.UpstreamStream;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * A tier served by a pool of OpenAI-compatible servers: every request becomes a POST to one
 * endpoint's {@code baseUrl + /chat/completions} over keep-alive connections (see
 * {@link UpstreamExchange} for the timeouts, retries and cancellation of one request, and
 * {@link EndpointPool} for balancing and passive health).
 *
 * Concurrency: the tier's {@code instances} are each endpoint's connections (requests in flight) and
 * its {@code queueCapacity} the requests waiting for one, shared out evenly between the data
 * plane's event loops (each loop has its own client: {@link LoopClients}); past that,
 * {@link Kind#QUEUE_FULL}; a request waiting longer than {@code maxQueueWaitMs} is {@link Kind#QUEUE_TIMEOUT}.
 *
 * The observed tier is the band the answer's total tokens fall in under the live thresholds: the
 * same scale as the scorer's token pass (about four bytes a token), measured after the fact.
 */
public final class UpstreamTierBackend implements TierBackend, StreamingBackend {

    private static final System.Logger LOG = System.getLogger(UpstreamTierBackend.class.getName());
    /** Event type for endpoint failures, ejections and re-admissions (with the endpoint, never to clients). */
    public static final String EVENT = "upstream";

    final Vertx vertx;
    final Tier tier;
    final UpstreamConfig upstream;
    final long maxQueueWaitMs;
    final LoopClients clients;
    /** Every exchange's whole-request and first-byte deadlines, swept together (no timer per request). */
    final DeadlineSweep deadlines;
    final EndpointPool pool;
    /**
     * The non-streamed answers' bytes this tier holds while they arrive. Each answer is bounded
     * ({@link UpstreamExchange#MAX_ANSWER_BYTES}), but an upstream can trickle one on every
     * connection of the tier at once; past this bound the next answer fails (502) instead.
     */
    final ByteBudget heldAnswers;
    private final String model;
    /** The tier's model as a JSON string: what a chat answer's model becomes. */
    private final byte[] modelValue;
    private final ChatRequestBody requestBody;
    private final Supplier<Thresholds> thresholds;
    private final EventSink events;
    private final Counter retries;
    private final Counter ejections;
    private final Counter readmissions;
    /** The Authorization header's value, built once (null without an apiKey). */
    private final String authorization;

    /**
     * @param thresholds the live thresholds; called on an event loop, so it must not block
     *                   (in kernel mode: a snapshot or an mmap-ed map, not a syscall)
     */
    public UpstreamTierBackend(Vertx vertx, TierConfig config, Supplier<Thresholds> thresholds) {
        this(vertx, config, thresholds, EventSink.DISCARD, new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
    }

    public UpstreamTierBackend(Vertx vertx, TierConfig config, Supplier<Thresholds> thresholds, EventSink events,
                               MeterRegistry registry) {
        this(vertx, config, thresholds, events, registry, 1);
    }

    /**
     * @param eventLoops the event loops requests arrive on: each gets its own client (see
     *                   {@link LoopClients}) holding its share of {@code instances} connections per
     *                   endpoint and of {@code queueCapacity} waiters (rounded up); with fewer
     *                   {@code instances} than loops, loops share clients
     */
    public UpstreamTierBackend(Vertx vertx, TierConfig config, Supplier<Thresholds> thresholds, EventSink events,
                               MeterRegistry registry, int eventLoops) {
        this(vertx, config, thresholds, events, registry, eventLoops, MAX_HELD_ANSWER_BYTES);
    }

    /** The most answer bytes a tier holds at once while they arrive: sixteen whole answers. */
    static final long MAX_HELD_ANSWER_BYTES = 16L * UpstreamExchange.MAX_ANSWER_BYTES;

    /** As above, with the bound on the answer bytes held at once ({@link #MAX_HELD_ANSWER_BYTES} in production). */
    UpstreamTierBackend(Vertx vertx, TierConfig config, Supplier<Thresholds> thresholds, EventSink events,
                        MeterRegistry registry, int eventLoops, long heldAnswerBytes) {
        this.vertx = vertx;
        this.heldAnswers = new ByteBudget(heldAnswerBytes);
        this.tier = config.tier();
        this.upstream = config.upstream().orElseThrow(() -> new IllegalArgumentException(
                "tiers." + config.tier().label() + " has no upstream configured"));
        this.model = config.model();
        this.modelValue = ChatRequestBody.jsonString(model);
        this.requestBody = new ChatRequestBody(upstream.model());
        this.authorization = upstream.apiKey().map(key -> "Bearer " + key).orElse(null);
        this.thresholds = thresholds;
        this.events = events;
        this.maxQueueWaitMs = config.maxQueueWaitMs();
        this.pool = new EndpointPool(upstream.baseUrls());
        if (eventLoops < 1) {
            throw new IllegalArgumentException("eventLoops must be at least 1, got " + eventLoops);
        }
        HttpClientOptions options = new HttpClientOptions()
                .setKeepAlive(true)
                .setTcpNoDelay(true)
                .setConnectTimeout((int) Math.min(upstream.connectTimeoutMs(), Integer.MAX_VALUE));
        // No more clients than connections, so every client holds at least one (a one-connection
        // tier keeps one pool and its exact limits).
        int slots = Math.min(eventLoops, config.instances());
        PoolOptions pool = new PoolOptions()
                .setHttp1MaxSize(shareOf(config.instances(), slots))
                .setMaxWaitQueueSize(shareOf(config.queueCapacity(), slots));
        this.clients = new LoopClients(() -> vertx.createHttpClient(options, pool), slots);
        this.deadlines = new DeadlineSweep(vertx, DeadlineSweep.periodFor(upstream.timeoutMs(), upstream.firstByteTimeoutMs()));
        String label = tier.label();
        retries = Counter.builder("nexus_upstream_retries")
                .description("Upstream attempts retried on another endpoint (connect error or 502/503, nothing sent to the client yet)")
                .tag("tier", label).register(registry);
        ejections = Counter.builder("nexus_upstream_ejections")
                .description("Upstream endpoints ejected after consecutive failures")
                .tag("tier", label).register(registry);
        readmissions = Counter.builder("nexus_upstream_readmissions")
                .description("Ejected upstream endpoints re-admitted after a successful probe")
                .tag("tier", label).register(registry);
        Gauge.builder("nexus_upstream_answer_bytes_held", heldAnswers, ByteBudget::held)
                .description("Bytes of non-streamed upstream answers the tier holds while they arrive")
                .tag("tier", label).register(registry);
    }

    /** How logs and events name the endpoint that answered. */
    private static String where(UpstreamEndpoint endpoint) {
        return endpoint == null ? "upstream" : "upstream " + endpoint.display();
    }

    /** One client's share of a tier-wide count, rounded up so every client gets at least one. */
    static int shareOf(int total, int clients) {
        return Math.max(1, (total + clients - 1) / clients);
    }

    @Override
    public Tier tier() {
        return tier;
    }

    /** The endpoints' health, in configuration order (for tests and the bench). */
    public List<String> endpointHealth() {
        return pool.endpoints().stream().map(e -> e.health().name().toLowerCase()).toList();
    }

    @Override
    public CompletableFuture<TierReply> submit(TierRequest request) {
        boolean speaks = speaksNatively(request);
        UpstreamExchange exchange = speaks
                ? new UpstreamExchange(this, nativeBody(request, false), false, nativePath(request))
                : new UpstreamExchange(this, requestBody.encode(request, false), false);
        CompletableFuture<TierReply> result = new CompletableFuture<>();
        result.whenComplete((r, e) -> {
            if (e instanceof CancellationException) {
                exchange.cancel();
            }
        });
        exchange.start()
                .compose(response -> exchange.readBody())
                .onComplete(ar -> {
                    if (ar.failed()) {
                        result.completeExceptionally(exchange.failure(ar.cause()));
                        return;
                    }
                    try {
                        result.complete(speaks ? nativeReply(ar.result(), exchange.endpoint())
                                : reply(ar.result(), exchange.endpoint(), request.chatBody() != null));
                    } catch (TierFailure f) {
                        reported(f, exchange.endpoint());
                        result.completeExceptionally(f);
                    } catch (RuntimeException e) {
                        // A bug reading an answer must still answer the client: the exchange has ended,
                        // so no deadline would ever complete this request.
                        UpstreamEndpoint endpoint = exchange.endpoint();
                        TierFailure f = new TierFailure(Kind.UPSTREAM, "tier " + tier.label() + ": the upstream's answer could not be read",
                                where(endpoint) + ": reading its answer failed: " + e, e);
                        reported(f, endpoint);
                        result.completeExceptionally(f);
                    }
                });
        return result;
    }

    @Override
    public Optional<StreamingBackend> streaming() {
        return Optional.of(this);
    }

    @Override
    public CompletableFuture<UpstreamStream> openStream(TierRequest request) {
        boolean speaks = speaksNatively(request);
        UpstreamExchange exchange = speaks
                ? new UpstreamExchange(this, nativeBody(request, true), true, nativePath(request))
                : new UpstreamExchange(this, requestBody.encode(request, true), true);
        CompletableFuture<UpstreamStream> result = new CompletableFuture<>();
        result.whenComplete((r, e) -> {
            if (e instanceof CancellationException) {
                exchange.cancel();
            }
        });
        exchange.start().onComplete(ar -> {
            if (ar.succeeded()) {
                result.complete(new UpstreamStream(ar.result().getHeader("Content-Type"), exchange.answer(), exchange::cancel,
                        speaks));
            } else {
                result.completeExceptionally(exchange.failure(ar.cause()));
            }
        });
        return result;
    }

    RequestOptions requestOptions(UpstreamEndpoint endpoint) {
        return requestOptions(endpoint, null);
    }

    /** @param path beside baseUrl ("/responses", "/messages"); null: /chat/completions */
    RequestOptions requestOptions(UpstreamEndpoint endpoint, String path) {
        RequestOptions options = new RequestOptions()
                .setMethod(HttpMethod.POST)
                .setAbsoluteURI(path == null ? endpoint.chatCompletionsUrl() : endpoint.url(path))
                .putHeader("Content-Type", "application/json")
                .putHeader("Accept", "application/json, text/event-stream");
        if (MESSAGES_PATH.equals(path)) {
            // Anthropic's API: its key header and its version header instead of a bearer token.
            options.putHeader("anthropic-version", ANTHROPIC_VERSION);
            upstream.apiKey().ifPresent(key -> options.putHeader("x-api-key", key));
        } else if (authorization != null) {
            options.putHeader("Authorization", authorization);
        }
        return options;
    }

    private static final String RESPONSES_PATH = "/responses";
    private static final String MESSAGES_PATH = "/messages";
    /** The Messages API version the router speaks (Anthropic's SDKs send the same). */
    static final String ANTHROPIC_VERSION = "2023-06-01";

    /** The request is of an API (Responses, Messages) this tier's servers speak themselves. */
    private boolean speaksNatively(TierRequest request) {
        return request.nativeApi() != null && request.nativeBody() != null
                && upstream.nativeApis().contains(request.nativeApi());
    }

    private static String nativePath(TierRequest request) {
        return UpstreamConfig.MESSAGES.equals(request.nativeApi()) ? MESSAGES_PATH : RESPONSES_PATH;
    }

    /** The client's own body, its model the upstream's and {@code stream} what the exchange reads. */
    private Buffer nativeBody(TierRequest request, boolean stream) {
        return new JsonObject(request.nativeBody()).put("model", upstream.model()).put("stream", stream).toBuffer();
    }

    /**
     * A Responses or Messages answer, passed on with its model the tier's; its usage ({@code input_tokens},
     * {@code output_tokens} in both APIs) is the tier's assessment, as a chat answer's is.
     */
    private TierReply nativeReply(Buffer body, UpstreamEndpoint endpoint) {
        JsonObject answer;
        try {
            answer = body.toJsonObject();
        } catch (RuntimeException e) {
            throw new TierFailure(Kind.UPSTREAM, "tier " + tier.label() + ": upstream answered malformed JSON",
                    where(endpoint) + " answered malformed JSON: " + e.getMessage(), e);
        }
        answer.put("model", model);
        String finish = answer.getValue("stop_reason") instanceof String s ? s
                : answer.getValue("status") instanceof String s ? s : null;
        TierReply.Answer passed = new TierReply.Answer(answer.toBuffer(), finish, true);
        if (!(answer.getValue("usage") instanceof JsonObject usage)) {
            return new TierReply("", tier, TierReply.UNKNOWN_SCORE, 0, 0, model, passed);
        }
        int prompt = usage.getValue("input_tokens") instanceof Number n ? n.intValue() : 0;
        int completion = usage.getValue("output_tokens") instanceof Number n ? n.intValue() : 0;
        int score = (int) Math.min(Scorer.MAX_SCORE, (long) prompt + completion);
        return new TierReply("", thresholds.get().tierFor(score), score, prompt, completion, model, passed);
    }

    /** Logs a failure in full and puts it on the event stream; the client only sees its client detail. */
    TierFailure reported(TierFailure failure, UpstreamEndpoint endpoint) {
        LOG.log(Level.WARNING, "tier {0}: {1}", tier.label(), failure.getMessage());
        events.publish(EVENT, new JsonObject()
                .put("tier", tier.label())
                .put("event", "failure")
                .put("endpoint", endpoint == null ? null : endpoint.display())
                .put("kind", failure.kind().label())
                .put("detail", failure.getMessage()));
        return failure;
    }

    void retried(UpstreamEndpoint from, String why) {
        retries.increment();
        LOG.log(Level.INFO, "tier {0}: retrying on another endpoint after {1}: {2}", tier.label(), from.display(), why);
        events.publish(EVENT, new JsonObject().put("tier", tier.label()).put("event", "retry")
                .put("endpoint", from.display()).put("detail", why));
    }

    void transitioned(UpstreamEndpoint endpoint, UpstreamEndpoint.Transition transition, String why) {
        if (transition == UpstreamEndpoint.Transition.NONE) {
            return;
        }
        boolean ejected = transition == UpstreamEndpoint.Transition.EJECTED;
        (ejected ? ejections : readmissions).increment();
        LOG.log(ejected ? Level.WARNING : Level.INFO, "tier {0}: endpoint {1} {2}{3}", tier.label(), endpoint.display(),
                ejected ? "ejected for " + upstream.ejectMs() + " ms" : "re-admitted", ejected ? " after: " + why : "");
        events.publish(EVENT, new JsonObject().put("tier", tier.label())
                .put("event", ejected ? "ejected" : "readmitted")
                .put("endpoint", endpoint.display())
                .put("detail", why));
    }

    /**
     * @param chat the client sent a chat request: its answer is the upstream's own, passed on with
     *             only the model replaced by the tier's (tool calls, finish reason and every other
     *             field as the model server wrote them); completions and tasks are rendered from its text
     */
    private TierReply reply(Buffer body, UpstreamEndpoint endpoint, boolean chat) {
        String where = where(endpoint);
        UpstreamAnswer answer;
        try {
            answer = UpstreamAnswer.parse(body, !chat);
        } catch (UpstreamAnswer.Malformed e) {
            throw new TierFailure(Kind.UPSTREAM, "tier " + tier.label() + ": upstream answered malformed JSON",
                    where + " answered malformed JSON: " + e.getMessage(), e);
        }
        if (!answer.hasChoice()) {
            throw new TierFailure(Kind.UPSTREAM, "tier " + tier.label() + ": upstream answered without choices",
                    where + " answered without choices", null);
        }
        Buffer passed = chat ? answer.withModel(body, modelValue) : null;
        TierReply.Answer asIs = passed == null ? null : new TierReply.Answer(passed, answer.finishReason());
        String text = chat && asIs == null ? reparsedText(body, where) : answer.text();
        if (answer.usage().isEmpty()) {
            // No usage, no assessment: report the tier itself rather than invent a misroute.
            return new TierReply(text, tier, TierReply.UNKNOWN_SCORE, 0, 0, model, asIs);
        }
        int prompt = answer.usage().get().promptTokens();
        int completion = answer.usage().get().completionTokens();
        int score = (int) Math.min(Scorer.MAX_SCORE, (long) prompt + completion);
        return new TierReply(text, thresholds.get().tierFor(score), score, prompt, completion, model, asIs);
    }

    /** The text of an answer that cannot go on as it is (it names its model twice): rendered from it instead. */
    private String reparsedText(Buffer body, String where) {
        try {
            return UpstreamAnswer.parse(body, true).text();
        } catch (UpstreamAnswer.Malformed e) {
            throw new IllegalStateException(where + ": an answer that parsed once failed the second time", e);
        }
    }

    @Override
    public void close() {
        clients.close();
    }
}
