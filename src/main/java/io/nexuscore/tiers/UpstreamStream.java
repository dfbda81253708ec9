package io.nexuscore.tiers;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.streams.ReadStream;

/**
 * An upstream's streaming answer, head received, body not yet consumed.
 *
 * @param contentType the upstream's Content-Type (text/event-stream for OpenAI servers)
 * @param body        the event stream, paused: the consumer resumes it by piping it somewhere
 * @param cancel      abandons the exchange (the client went away): frees the upstream connection
 */
public record UpstreamStream(String contentType, ReadStream<Buffer> body, Runnable cancel) {
}
