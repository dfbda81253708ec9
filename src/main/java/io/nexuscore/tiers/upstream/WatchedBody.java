package io.nexuscore.tiers.upstream;

import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.streams.ReadStream;

/** An answer's body as its consumer reads it, each chunk noted by the {@link IdleWatchdog} first. */
final class WatchedBody implements ReadStream<Buffer> {

    private final ReadStream<Buffer> body;
    private final IdleWatchdog watchdog;

    WatchedBody(ReadStream<Buffer> body, IdleWatchdog watchdog) {
        this.body = body;
        this.watchdog = watchdog;
    }

    @Override
    public ReadStream<Buffer> handler(Handler<Buffer> handler) {
        body.handler(handler == null ? null : chunk -> {
            watchdog.touch();
            handler.handle(chunk);
        });
        return this;
    }

    @Override
    public ReadStream<Buffer> exceptionHandler(Handler<Throwable> handler) {
        body.exceptionHandler(handler);
        return this;
    }

    @Override
    public ReadStream<Buffer> endHandler(Handler<Void> endHandler) {
        body.endHandler(endHandler);
        return this;
    }

    @Override
    public ReadStream<Buffer> pause() {
        body.pause();
        return this;
    }

    @Override
    public ReadStream<Buffer> resume() {
        body.resume();
        return this;
    }

    @Override
    public ReadStream<Buffer> fetch(long amount) {
        body.fetch(amount);
        return this;
    }
}
