package io.nexuscore.telemetry;

import io.opentelemetry.api.common.AttributeKey;
import java.util.List;

/**
 * The attribute keys of an inference span. {@code gen_ai.*}, {@code error.type}, {@code server.*},
 * {@code client.address} and {@code http.response.status_code} are the semantic conventions' own
 * names; the router's facts live under {@code nexuscore.*}, outside the conventions' namespaces.
 */
public final class SpanAttributes {

    public static final AttributeKey<String> OPERATION_NAME = AttributeKey.stringKey("gen_ai.operation.name");
    public static final AttributeKey<String> PROVIDER_NAME = AttributeKey.stringKey("gen_ai.provider.name");
    public static final AttributeKey<String> REQUEST_MODEL = AttributeKey.stringKey("gen_ai.request.model");
    public static final AttributeKey<Long> REQUEST_MAX_TOKENS = AttributeKey.longKey("gen_ai.request.max_tokens");
    public static final AttributeKey<String> RESPONSE_MODEL = AttributeKey.stringKey("gen_ai.response.model");
    public static final AttributeKey<List<String>> RESPONSE_FINISH_REASONS =
            AttributeKey.stringArrayKey("gen_ai.response.finish_reasons");
    public static final AttributeKey<Long> USAGE_INPUT_TOKENS = AttributeKey.longKey("gen_ai.usage.input_tokens");
    public static final AttributeKey<Long> USAGE_OUTPUT_TOKENS = AttributeKey.longKey("gen_ai.usage.output_tokens");
    public static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");
    public static final AttributeKey<String> SERVER_ADDRESS = AttributeKey.stringKey("server.address");
    public static final AttributeKey<Long> SERVER_PORT = AttributeKey.longKey("server.port");
    public static final AttributeKey<String> CLIENT_ADDRESS = AttributeKey.stringKey("client.address");
    public static final AttributeKey<Long> HTTP_STATUS = AttributeKey.longKey("http.response.status_code");

    /** The tier that answered's own assessment of the request, as X-NX-Tier. */
    public static final AttributeKey<String> TIER = AttributeKey.stringKey("nexuscore.tier");
    /** The tier the router assigned, as X-NX-Assigned-Tier. */
    public static final AttributeKey<String> ASSIGNED_TIER = AttributeKey.stringKey("nexuscore.assigned_tier");
    /** The complexity score behind the assignment, as X-NX-Score. */
    public static final AttributeKey<Long> SCORE = AttributeKey.longKey("nexuscore.score");
    /** Who decided: kernel verdict or Java scorer, as X-NX-Route-Source. */
    public static final AttributeKey<String> ROUTE_SOURCE = AttributeKey.stringKey("nexuscore.route_source");
    /** "none" or the misroute kinds, as X-NX-Misroute. */
    public static final AttributeKey<String> MISROUTE = AttributeKey.stringKey("nexuscore.misroute");
    /** The assigned tier when its fallback served the request, as X-NX-Fallback-From. */
    public static final AttributeKey<String> FALLBACK_FROM = AttributeKey.stringKey("nexuscore.fallback_from");
    public static final AttributeKey<String> TENANT = AttributeKey.stringKey("nexuscore.tenant");
    /** The task of /v1/tasks/{task} ("chat" and "completion" for the OpenAI routes). */
    public static final AttributeKey<String> TASK = AttributeKey.stringKey("nexuscore.task");
    /** The client asked for server-sent events. */
    public static final AttributeKey<Boolean> STREAM = AttributeKey.booleanKey("nexuscore.stream");

    /** gen_ai.operation.name values. */
    public static final String CHAT = "chat";
    public static final String TEXT_COMPLETION = "text_completion";
    public static final String EMBEDDINGS = "embeddings";
    /** gen_ai.provider.name: the router answers as a provider of its own (its tiers are its models). */
    public static final String PROVIDER = "nexuscore";

    private SpanAttributes() {
    }
}
