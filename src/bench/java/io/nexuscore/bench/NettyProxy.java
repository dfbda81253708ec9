package io.nexuscore.bench;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.concurrent.FastThreadLocal;
import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * The floor one layer below Vert.x: a Netty proxy hop (server codec and aggregator, a keep-alive
 * client per event loop with the client codec and aggregator, the upstream's body passed through)
 * and nothing else. It answers one question for issue 14: what a data plane written on Netty's
 * codecs, below Vert.x's HTTP server and client, would start from on this machine, beside the
 * Vert.x proxy and nginx in the same run.
 *
 * Usage: NettyProxy PORT UPSTREAM_PORT [THREADS]; {@code -Dnexus.transport=epoll|io_uring} (default
 * io_uring when the kernel has it).
 */
public final class NettyProxy {

    private static final int MAX_BODY = 1 << 20;

    /** Idle upstream connections of one event loop; touched only on that loop. */
    private static final FastThreadLocal<ArrayDeque<Channel>> IDLE = new FastThreadLocal<>() {
        @Override
        protected ArrayDeque<Channel> initialValue() {
            return new ArrayDeque<>();
        }
    };

    private final int upstreamPort;
    private final Class<? extends Channel> clientChannel;

    private NettyProxy(int upstreamPort, Class<? extends Channel> clientChannel) {
        this.upstreamPort = upstreamPort;
        this.clientChannel = clientChannel;
    }

    /** The native transport's classes are on the runtime classpath only (as for the router), so by name. */
    @SuppressWarnings("unchecked")
    private static <T> Class<? extends T> nativeClass(String name, Class<T> type) throws ReflectiveOperationException {
        return (Class<? extends T>) Class.forName(name).asSubclass(type);
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        int upstreamPort = Integer.parseInt(args[1]);
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : Runtime.getRuntime().availableProcessors();
        String wanted = System.getProperty("nexus.transport", "auto");
        boolean uring = !wanted.equals("epoll")
                && (boolean) Class.forName("io.netty.channel.uring.IoUring").getMethod("isAvailable").invoke(null);
        String prefix = uring ? "io.netty.channel.uring.IoUring" : "io.netty.channel.epoll.Epoll";
        IoHandlerFactory io = (IoHandlerFactory) Class.forName(prefix + "IoHandler").getMethod("newFactory").invoke(null);
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(threads, io);
        NettyProxy proxy = new NettyProxy(upstreamPort, nativeClass(prefix + "SocketChannel", Channel.class));
        Class<? extends ServerChannel> serverChannel = nativeClass(prefix + "ServerSocketChannel", ServerChannel.class);
        new ServerBootstrap().group(group).channel(serverChannel)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(MAX_BODY), proxy.new Inbound());
                    }
                })
                .bind("127.0.0.1", port).sync();
        System.out.println("netty proxy on 127.0.0.1:" + port + " to " + upstreamPort + " (" + threads
                + " event loops, transport " + (uring ? "io_uring" : "epoll") + ")");
    }

    /** The client side of one request: forwards it on an idle or new upstream connection of this loop. */
    private final class Inbound extends SimpleChannelInboundHandler<FullHttpRequest> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
            FullHttpRequest forward = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST,
                    "/v1/chat/completions", request.content().retain());
            forward.headers().set(HttpHeaderNames.HOST, "127.0.0.1")
                    .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                    .setInt(HttpHeaderNames.CONTENT_LENGTH, forward.content().readableBytes());
            Channel client = ctx.channel();
            withUpstream(ctx.channel().eventLoop(), upstream -> {
                if (upstream == null) {
                    forward.release();
                    answer(client, new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.BAD_GATEWAY));
                    return;
                }
                upstream.pipeline().get(Outbound.class).waiting = client;
                upstream.writeAndFlush(forward);
            });
        }
    }

    /** The upstream side of one connection: hands each answer to the waiting client and goes idle. */
    private static final class Outbound extends SimpleChannelInboundHandler<FullHttpResponse> {
        Channel waiting;

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse response) {
            Channel client = waiting;
            waiting = null;
            IDLE.get().push(ctx.channel());
            DefaultFullHttpResponse out = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, response.status(),
                    response.content().retain());
            if (client != null) {
                answer(client, out);
            } else {
                out.release();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            IDLE.get().remove(ctx.channel());
            if (waiting != null) {
                answer(waiting, new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.BAD_GATEWAY));
                waiting = null;
            }
        }
    }

    private static void answer(Channel client, FullHttpResponse response) {
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
        if (response.status().code() >= 500) {
            client.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
        } else {
            client.writeAndFlush(response);
        }
    }

    private void withUpstream(EventLoop loop, Consumer<Channel> use) {
        Channel idle = IDLE.get().poll();
        if (idle != null && idle.isActive()) {
            use.accept(idle);
            return;
        }
        new Bootstrap().group(loop).channel(clientChannel)
                .option(ChannelOption.TCP_NODELAY, true)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpClientCodec(), new HttpObjectAggregator(MAX_BODY), new Outbound());
                    }
                })
                .connect("127.0.0.1", upstreamPort)
                .addListener((ChannelFutureListener) f -> use.accept(f.isSuccess() ? f.channel() : null));
    }
}
