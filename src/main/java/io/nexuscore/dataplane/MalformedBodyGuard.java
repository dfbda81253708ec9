package io.nexuscore.dataplane;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;
import io.nexuscore.http.StrictFramingDecoder;
import java.util.function.Consumer;

/**
 * Turns a request body Netty could not decode (a chunk size that is not hex, a chunk line past the
 * decoder's limit: chunked framing is the only body framing that can fail) into a callback to the
 * body reader of the request in flight, so the client gets a 400 naming the fault.
 *
 * <p>Why: Vert.x answers such a body by closing the connection without a response, which leaves the
 * client (and whoever debugs it) guessing. It sits right after Vert.x's decoder ({@code
 * httpDecoder}) and lets every other message through. A failed body that arrives while no reader
 * watches belongs to a pipelined request queued behind the one in flight: it is kept (not passed
 * on: Vert.x would close the connection at once, before that request's turn), and the next reader
 * to watch is told as it starts. Should that request be one whose body the data plane does not
 * read, it is answered as usual and the connection, its framing lost and its decoder discarding
 * input, is closed by the header timeout.
 *
 * <p>One per connection; every method runs on the connection's event loop.
 */
final class MalformedBodyGuard extends ChannelInboundHandlerAdapter {

    private static final String NAME = "nexuscore.bodyGuard";
    private static final AttributeKey<MalformedBodyGuard> GUARD = AttributeKey.valueOf(NAME);

    private Consumer<Throwable> reader;
    /** The decoder's cause for a failed body that came while no reader watched. */
    private Throwable unclaimed;

    /** Puts a guard after the connection's HTTP/1.x decoder (no decoder: nothing to guard). */
    static void install(Channel channel) {
        if (channel == null || channel.pipeline().get(StrictFramingDecoder.DECODER) == null) {
            return;
        }
        MalformedBodyGuard guard = new MalformedBodyGuard();
        channel.pipeline().addAfter(StrictFramingDecoder.DECODER, NAME, guard);
        channel.attr(GUARD).set(guard);
    }

    /** The connection's guard, or null when it has none. */
    static MalformedBodyGuard of(Channel channel) {
        return channel == null ? null : channel.attr(GUARD).get();
    }

    /** The request now reading its body: told the decoder's cause if the body cannot be decoded. */
    void watch(Consumer<Throwable> bodyReader) {
        Throwable cause = unclaimed;
        if (cause != null) {
            unclaimed = null;
            bodyReader.accept(cause);
            return;
        }
        reader = bodyReader;
    }

    void unwatch() {
        reader = null;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        // A head that failed (FullHttpRequest is content too) is Vert.x's: its invalid-request handler answers it.
        if (!(msg instanceof HttpContent content) || msg instanceof HttpMessage || !content.decoderResult().isFailure()) {
            ctx.fireChannelRead(msg);
            return;
        }
        Consumer<Throwable> watching = reader;
        Throwable cause = content.decoderResult().cause();
        // Not passed on: Vert.x would close the connection before the 400 went out. The decoder
        // discards whatever follows on this connection, and the reader's answer closes it.
        ReferenceCountUtil.release(msg);
        if (watching == null) {
            unclaimed = cause;
            return;
        }
        reader = null;
        watching.accept(cause);
    }
}
