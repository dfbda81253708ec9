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

    private static String readText(String json) throws Exception {
        try (JsonParser p = LoopJson.FACTORY.createParser(json.getBytes(StandardCharsets.UTF_8))) {
            p.nextToken();
            p.nextToken();
            p.nextToken();
            return p.getText();
        }
    }
}
