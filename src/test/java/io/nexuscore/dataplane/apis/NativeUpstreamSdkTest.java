package io.nexuscore.dataplane.apis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.testing.LocalOpenAiServer;
import io.nexuscore.testing.Sdks;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Upstream tiers whose servers speak the Responses and Messages APIs themselves ({@code upstream.apis}):
 * the official SDKs' requests reach them as the clients wrote them (only the model changed, the key
 * in each API's own header), and their answers and events come back untranslated, plain and streamed.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class NativeUpstreamSdkTest {

    private Vertx vertx;
    private LocalOpenAiServer upstream;
    private SdkRouters router;

    @BeforeAll
    void start() {
        Sdks.requireInstalled();
        vertx = Vertx.vertx();
        upstream = LocalOpenAiServer.start(vertx).await();
        router = SdkRouters.upstream(upstream, new JsonObject().put("apis", new JsonArray().add("responses").add("messages"))
                .put("apiKey", "sk-upstream-key"), new JsonObject());
    }

    @AfterAll
    void stop() {
        try {
            if (router != null) {
                router.close();
            }
        } finally {
            vertx.close().await();
        }
    }

    private static final String PYTHON = """
            import json, openai, anthropic
            o = openai.OpenAI()
            r = o.responses.create(model="nexus", instructions="Be brief", input="Say hello")
            with o.responses.stream(model="nexus", instructions="Be brief", input="Say hello") as s:
                deltas = [e.delta for e in s if e.type == "response.output_text.delta"]
                f = s.get_final_response()
            a = anthropic.Anthropic()
            m = a.messages.create(model="claude", max_tokens=50, system="Be brief", messages=[{"role": "user", "content": "Hi"}])
            with a.messages.stream(model="claude", max_tokens=50, system="Be brief", messages=[{"role": "user", "content": "Hi"}]) as ms:
                mdeltas = list(ms.text_stream)
                mf = ms.get_final_message()
            print(json.dumps({"r": r.output_text, "rModel": r.model, "rIn": r.usage.input_tokens, "f": f.output_text,
                              "deltas": deltas, "m": m.content[0].text, "mModel": m.model, "mIn": m.usage.input_tokens,
                              "mf": mf.content[0].text, "mdeltas": mdeltas}))
            """;

    @Test
    void theSdksTalkToAnUpstreamThatSpeaksTheirApi() {
        Sdks.Result result = Sdks.python(PYTHON, router.env());
        assertTrue(result.ok(), result.describe());
        JsonObject seen = ChatSdkTest.lastJsonLine(result.stdout());
        assertEquals("natively served by nano", seen.getString("r"), seen.encode());
        assertEquals("natively served by nano", seen.getString("f"), seen.encode());
        assertEquals(new JsonArray().add("natively ").add("served by nano"), seen.getJsonArray("deltas"),
                "the upstream's own deltas, passed through: " + seen);
        assertEquals("nexus-nano", seen.getString("rModel"), "the tier's model, as for chat: " + seen);
        assertEquals("natively served by nano", seen.getString("m"), seen.encode());
        assertEquals("natively served by nano", seen.getString("mf"), seen.encode());
        assertEquals(new JsonArray().add("natively ").add("served by nano"), seen.getJsonArray("mdeltas"), seen.encode());
        assertEquals("nexus-nano", seen.getString("mModel"), seen.encode());

        List<JsonObject> bodies = upstream.bodies();
        JsonObject responses = bodies.stream().filter(b -> "responses".equals(b.getString("_path"))).findFirst().orElseThrow();
        assertEquals("Be brief", responses.getString("instructions"), "sent as the client wrote it: " + responses);
        assertEquals("Say hello", responses.getString("input"));
        assertEquals("upstream-nano", responses.getString("model"));
        assertEquals("Bearer sk-upstream-key", responses.getString("_key"));
        assertEquals(responses.encode().replace(",\"_path\":\"responses\",\"_key\":\"Bearer sk-upstream-key\"", "")
                .length() / 4, seen.getInteger("rIn"), "the upstream's usage reached the client");
        JsonObject messages = bodies.stream().filter(b -> "messages".equals(b.getString("_path"))).findFirst().orElseThrow();
        assertEquals("Be brief", messages.getString("system"), messages.encode());
        assertEquals(50, messages.getInteger("max_tokens"));
        assertEquals("sk-upstream-key", messages.getString("_key"), "Anthropic's key header: " + messages);
        assertTrue(bodies.stream().noneMatch(b -> b.containsKey("messages") && !b.containsKey("_path")),
                "nothing was translated to a chat: " + bodies);
    }
}
