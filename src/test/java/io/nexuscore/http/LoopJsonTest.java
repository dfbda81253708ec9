package io.nexuscore.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.util.BufferRecycler;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class LoopJsonTest {

    @Test
    void eachThreadKeepsOneRecyclerAcrossParses() throws Exception {
        BufferRecycler first = LoopJson.FACTORY._getRecyclerPool().acquireAndLinkPooled();
        assertEquals("words", readText("{\"a\":\"words\"}"));
        assertSame(first, LoopJson.FACTORY._getRecyclerPool().acquireAndLinkPooled());
        BufferRecycler other = CompletableFuture.supplyAsync(() -> LoopJson.FACTORY._getRecyclerPool().acquireAndLinkPooled()).get();
        assertNotSame(first, other);
    }

    @Test
    void aParserNestedInAnotherOnTheSameThreadReadsItsOwnText() throws Exception {
        try (JsonParser outer = LoopJson.FACTORY.createParser("{\"a\":\"outer text\"}".getBytes(StandardCharsets.UTF_8))) {
            outer.nextToken();
            outer.nextToken();
            assertEquals(JsonToken.VALUE_STRING, outer.nextToken());
            assertEquals("inner text", readText("{\"b\":\"inner text\"}"));
            assertEquals("outer text", outer.getText());
        }
    }

    /** The request parse reads with Vert.x's own limits, so it declines what a Vert.x JsonObject refuses. */
    @Test
    void theRequestFactoryHasVertxsReadLimits() throws Exception {
        try (JsonParser vertx = io.vertx.core.json.jackson.JacksonCodec.createParser(io.vertx.core.buffer.Buffer.buffer("{}"));
             JsonParser ours = LoopJson.parser(LoopJson.REQUESTS, io.vertx.core.buffer.Buffer.buffer("{}"))) {
            var a = vertx.streamReadConstraints();
            var b = ours.streamReadConstraints();
            assertEquals(a.getMaxNestingDepth(), b.getMaxNestingDepth());
            assertEquals(a.getMaxDocumentLength(), b.getMaxDocumentLength());
            assertEquals(a.getMaxNumberLength(), b.getMaxNumberLength());
            assertEquals(a.getMaxStringLength(), b.getMaxStringLength());
            assertEquals(a.getMaxNameLength(), b.getMaxNameLength());
            assertEquals(a.getMaxTokenCount(), b.getMaxTokenCount());
        }
    }

    /** Over a buffer's bytes in place (a slice of a larger array): offsets count from the buffer's first byte. */
    @Test
    void aBuffersBytesAreReadInPlaceWithOffsetsFromItsStart() throws Exception {
        io.vertx.core.buffer.Buffer whole = io.vertx.core.buffer.Buffer.buffer("XXXXX{\"model\":\"m\"}");
        io.vertx.core.buffer.Buffer body = whole.slice(5, whole.length());
        try (JsonParser p = LoopJson.parser(LoopJson.FACTORY, body)) {
            assertEquals(JsonToken.START_OBJECT, p.nextToken());
            assertEquals(0, p.currentTokenLocation().getByteOffset());
            p.nextToken();
            assertEquals(JsonToken.VALUE_STRING, p.nextToken());
            assertEquals(9, p.currentTokenLocation().getByteOffset());
            assertEquals("m", p.getText());
        }
    }

    private static String readText(String json) throws Exception {
        try (JsonParser p = LoopJson.FACTORY.createParser(json.getBytes(StandardCharsets.UTF_8))) {
            p.nextToken();
            p.nextToken();
            p.nextToken();
            return p.getText();
        }
    }
}
