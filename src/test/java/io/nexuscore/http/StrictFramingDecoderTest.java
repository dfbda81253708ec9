package io.nexuscore.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.util.ReferenceCountUtil;
import io.vertx.core.http.HttpServerOptions;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The decoder itself, fed raw bytes: which framings pass, which are refused and with what status. */
class StrictFramingDecoderTest {

    /** Every request head the decoder emits for one connection's input, and the body bytes. */
    private record Decoded(List<HttpRequest> heads, String body) {
    }

    private static Decoded decode(String input) {
        EmbeddedChannel channel = new EmbeddedChannel(new StrictFramingDecoder(new HttpServerOptions()));
        channel.writeInbound(Unpooled.copiedBuffer(input, StandardCharsets.ISO_8859_1));
        List<HttpRequest> heads = new ArrayList<>();
        StringBuilder body = new StringBuilder();
        for (Object message; (message = channel.readInbound()) != null; ) {
            if (message instanceof HttpRequest head) {
                heads.add(head);
            }
            if (message instanceof HttpContent content) {
                body.append(content.content().toString(StandardCharsets.ISO_8859_1));
            }
            ReferenceCountUtil.release(message);
        }
        channel.finishAndReleaseAll();
        return new Decoded(heads, body.toString());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "Transfer-Encoding: chunked",
            "Transfer-Encoding:  Chunked ",
            "Transfer-Encoding: CHUNKED",
    })
    void chunkedAloneIsReadAsChunked(String header) {
        Decoded decoded = decode("POST /v1/chat/completions HTTP/1.1\r\n" + header + "\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
        assertEquals(1, decoded.heads().size());
        assertTrue(decoded.heads().get(0).decoderResult().isSuccess(), decoded.heads().get(0).decoderResult().toString());
        assertEquals("hello", decoded.body());
    }

    /**
     * The classic smuggling shapes: each fails at its head, and the request written after it never
     * comes out as a request of its own (Netty alone read "gzip" as no body and decoded it).
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "Transfer-Encoding: gzip                                        | 400 | chunked is not the last",
            "Transfer-Encoding: chunked, gzip                               | 400 | chunked is not the last",
            "Transfer-Encoding: gzip, chunked                               | 501 | transfer coding 'gzip' is not supported",
            "Transfer-Encoding: gzip;q=1, chunked                           | 501 | transfer coding 'gzip' is not supported",
            "Transfer-Encoding: chunked\\r\\nTransfer-Encoding: chunked     | 400 | chunked applied more than once",
            "Transfer-Encoding: chunked,                                    | 400 | an empty transfer coding",
            "Transfer-Encoding:                                             | 400 | an empty transfer coding",
            "Content-Length: 5\\r\\nTransfer-Encoding: chunked              | 400 | both Content-Length and Transfer-Encoding",
            "Transfer-Encoding: chunked\\r\\nContent-Length: 5              | 400 | both Content-Length and Transfer-Encoding",
    })
    void ambiguousFramingIsRefusedAtTheHead(String headers, int status, String reason) {
        assertRefused("POST / HTTP/1.1\r\n" + headers.strip().replace("\\r\\n", "\r\n") + "\r\n\r\n", status, reason);
    }

    @Test
    void transferEncodingInAnHttp10RequestIsRefused() {
        assertRefused("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "HTTP/1.0");
    }

    private static void assertRefused(String head, int status, String reason) {
        Decoded decoded = decode(head + "0\r\n\r\nGET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n");
        assertEquals(1, decoded.heads().size(), "nothing after a refused head is decoded: " + decoded.heads());
        StrictFramingDecoder.RefusedFraming refused = assertInstanceOf(StrictFramingDecoder.RefusedFraming.class,
                decoded.heads().get(0).decoderResult().cause());
        assertEquals(status, refused.status());
        assertTrue(refused.getMessage().contains(reason), refused.getMessage());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "Content-Length: 5",
            "X-Transfer-Encoding: gzip\\r\\nContent-Length: 5",
    })
    void contentLengthFramingIsUntouched(String headers) {
        Decoded decoded = decode("POST / HTTP/1.1\r\n" + headers.replace("\\r\\n", "\r\n")
                + "\r\n\r\nhelloGET /v1/models HTTP/1.1\r\n\r\n");
        assertEquals(2, decoded.heads().size(), "a request pipelined behind is still read");
        assertTrue(decoded.heads().stream().allMatch(h -> h.decoderResult().isSuccess()));
        assertEquals("hello", decoded.body());
    }

    @Test
    void aClientsCodingIsQuotedPrintableAndShort() {
        Decoded decoded = decode("POST / HTTP/1.1\r\nTransfer-Encoding: " + "\u00ff\"x".repeat(30) + ", chunked\r\n\r\n");
        StrictFramingDecoder.RefusedFraming refused = assertInstanceOf(StrictFramingDecoder.RefusedFraming.class,
                decoded.heads().get(0).decoderResult().cause());
        assertEquals(501, refused.status());
        String quoted = refused.getMessage().substring(refused.getMessage().indexOf('\'') + 1);
        quoted = quoted.substring(0, quoted.indexOf('\''));
        assertEquals("?\"x".repeat(11).substring(0, 32), quoted);
    }
}
