package io.nexuscore.config;

import java.net.URI;
import java.util.Map;
import java.util.Set;

/**
 * Where and how finished spans leave the router: OTLP over HTTP with protobuf bodies, batched.
 *
 * @param enabled            trace inference requests and export the spans; off: no span is made
 * @param endpoint           the collector's base URL; spans are POSTed to {@link #tracesUrl()}
 * @param protocol           the OTLP transport; only {@code http/protobuf} ships in the jar
 * @param compression        {@code none} or {@code gzip}
 * @param timeoutMs          one export's deadline (connect, send, answer)
 * @param scheduleDelayMs    how long a finished span may wait before its batch is sent
 * @param maxQueueSize       finished spans held for export; past it new ones are dropped (counted by
 *                           the SDK), never blocking a request
 * @param maxExportBatchSize spans per export request, at most {@code maxQueueSize}
 * @param headers            extra request headers, e.g. a collector's API key
 */
public record OtlpConfig(boolean enabled, URI endpoint, String protocol, String compression, long timeoutMs,
                         long scheduleDelayMs, int maxQueueSize, int maxExportBatchSize, Map<String, String> headers) {

    public static final String HTTP_PROTOBUF = "http/protobuf";
    /** The OTLP/HTTP path of the traces signal, appended to the endpoint as OTEL_EXPORTER_OTLP_ENDPOINT does. */
    public static final String TRACES_PATH = "/v1/traces";
    public static final OtlpConfig DEFAULT = new OtlpConfig(false, URI.create("http://127.0.0.1:4318"), HTTP_PROTOBUF,
            "none", 10_000, 5_000, 2_048, 512, Map.of());

    public OtlpConfig {
        headers = Map.copyOf(headers);
        if (!"http".equals(endpoint.getScheme()) && !"https".equals(endpoint.getScheme()) || endpoint.getHost() == null
                || endpoint.getRawQuery() != null || endpoint.getRawFragment() != null) {
            throw new ConfigException("telemetry.otlp.endpoint must be an http(s) URL with a host and no query, got "
                    + endpoint);
        }
        if (endpoint.getPath() != null && stripSlash(endpoint.getPath()).endsWith(TRACES_PATH)) {
            throw new ConfigException("telemetry.otlp.endpoint is the collector's base URL (spans go to <endpoint>"
                    + TRACES_PATH + "), got " + endpoint);
        }
        if (!HTTP_PROTOBUF.equals(protocol)) {
            throw new ConfigException("telemetry.otlp.protocol must be " + HTTP_PROTOBUF
                    + " (the only OTLP transport in this build; gRPC and JSON are not shipped), got " + protocol);
        }
        if (!"none".equals(compression) && !"gzip".equals(compression)) {
            throw new ConfigException("telemetry.otlp.compression must be none or gzip, got " + compression);
        }
        if (maxExportBatchSize > maxQueueSize) {
            throw new ConfigException("telemetry.otlp.maxExportBatchSize (" + maxExportBatchSize
                    + ") must not exceed telemetry.otlp.maxQueueSize (" + maxQueueSize + ")");
        }
        headers.forEach((name, value) -> {
            if (name.isEmpty() || !name.chars().allMatch(c -> c > 32 && c < 127 && c != ':')) {
                throw new ConfigException("telemetry.otlp.headers: \"" + name + "\" is not a valid header name");
            }
            if (!value.chars().allMatch(c -> c >= 32 && c != 127 || c == '\t')) {
                throw new ConfigException("telemetry.otlp.headers." + name + " holds a control character");
            }
        });
    }

    /** The URL spans are POSTed to: the endpoint's path with {@value #TRACES_PATH} appended. */
    public String tracesUrl() {
        String base = endpoint.toString();
        return stripSlash(base) + TRACES_PATH;
    }

    static OtlpConfig from(Json json) {
        json.allowOnly(Set.of("enabled", "endpoint", "protocol", "compression", "timeoutMs", "scheduleDelayMs",
                "maxQueueSize", "maxExportBatchSize", "headers"));
        String endpoint = json.string("endpoint", DEFAULT.endpoint().toString());
        URI uri;
        try {
            uri = URI.create(endpoint);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(json.field("endpoint") + " is not a URL: " + endpoint, e);
        }
        return new OtlpConfig(
                json.bool("enabled", DEFAULT.enabled()),
                uri,
                json.string("protocol", DEFAULT.protocol()),
                json.string("compression", DEFAULT.compression()),
                json.number("timeoutMs", DEFAULT.timeoutMs(), 1, 600_000),
                json.number("scheduleDelayMs", DEFAULT.scheduleDelayMs(), 1, 600_000),
                json.integer("maxQueueSize", DEFAULT.maxQueueSize(), 1, 1_000_000),
                json.integer("maxExportBatchSize", DEFAULT.maxExportBatchSize(), 1, 1_000_000),
                json.stringMap("headers", DEFAULT.headers()));
    }

    private static String stripSlash(String s) {
        return s.endsWith("/") ? s.substring(0, s.length() - 1) : s;
    }
}
