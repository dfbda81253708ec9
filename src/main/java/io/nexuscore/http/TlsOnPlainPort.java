package io.nexuscore.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.impl.HttpServerConnection;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Answers a TLS handshake on a plain-HTTP listener at once: a 400 problem in plain HTTP (which a
 * TLS client reports as "wrong version number", the well-known sign of a plain-HTTP port) and the
 * connection closed.
 *
 * <p>Why: a ClientHello is binary; Netty's decoder skips its leading control bytes and waits for a
 * line end that may never come, so an {@code https://} client (or a load balancer's TLS health
 * check) hung until the header timeout and then saw a closed connection, with nothing in the log.
 *
 * <p>It looks at the connection's first byte only (a TLS record of type handshake, 0x16, is never the
 * start of an HTTP request) and then leaves the pipeline. Installed before the HTTP decoder, at
 * accept (both listeners run with h2c off, so that is before the first read).
 */
public final class TlsOnPlainPort extends ChannelInboundHandlerAdapter {

    private static final String NAME = "nexuscore.tlsOnPlainPort";
    private static final byte TLS_HANDSHAKE_RECORD = 0x16;
    private static final Problem REFUSAL = Problems.malformedHttp(400, "this port speaks plain HTTP/1.1, and a TLS "
            + "handshake came: use http://, or terminate TLS in front of the router");

    private static final System.Logger LOG = System.getLogger(TlsOnPlainPort.class.getName());
    /** One log line a minute at most: a scanner's flood of handshakes must not flood the log. */
    private static final long LOG_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);
    private static final AtomicLong UNLOGGED = new AtomicLong();
    private static final AtomicLong NEXT_LOG_NANOS = new AtomicLong(System.nanoTime());

    private final Runnable refused;

    private TlsOnPlainPort(Runnable refused) {
        this.refused = refused;
    }

    /** Watches a server connection's first byte; {@code refused} runs (on its event loop) for a TLS handshake. */
    public static void install(HttpConnection connection, Runnable refused) {
        if (connection instanceof HttpServerConnection server
                && server.channelHandlerContext().pipeline().get(StrictFramingDecoder.DECODER) != null) {
            server.channelHandlerContext().pipeline().addBefore(StrictFramingDecoder.DECODER, NAME,
                    new TlsOnPlainPort(refused));
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf bytes) || !bytes.isReadable()) {
            ctx.fireChannelRead(msg);
            return;
        }
        ctx.pipeline().remove(this);
        if (bytes.getByte(bytes.readerIndex()) != TLS_HANDSHAKE_RECORD) {
            ctx.fireChannelRead(msg);
            return;
        }
        ReferenceCountUtil.release(msg);
        refused.run();
        log(ctx);
        byte[] body = REFUSAL.toJson(null).toBuffer().getBytes();
        byte[] head = ("HTTP/1.1 400 Bad Request\r\nContent-Type: " + Problem.CONTENT_TYPE + "\r\nContent-Length: "
                + body.length + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        ctx.writeAndFlush(Unpooled.wrappedBuffer(head, body)).addListener(ChannelFutureListener.CLOSE);
    }

    private static void log(ChannelHandlerContext ctx) {
        long unlogged = UNLOGGED.incrementAndGet();
        long due = NEXT_LOG_NANOS.get();
        long now = System.nanoTime();
        if (now - due >= 0 && NEXT_LOG_NANOS.compareAndSet(due, now + LOG_EVERY_NANOS)) {
            UNLOGGED.addAndGet(-unlogged);
            LOG.log(Level.WARNING, "TLS handshake on plain-HTTP listener {0} from {1}: answered 400 and closed "
                    + "({2} such connection(s) since the last line; use http://, or terminate TLS in front of "
                    + "the router)",
                    ctx.channel().localAddress(), ctx.channel().remoteAddress(), unlogged);
        }
    }

    /** The problem a TLS handshake is answered with (its slug is the metric label). */
    public static Problem refusal() {
        return REFUSAL;
    }
}
