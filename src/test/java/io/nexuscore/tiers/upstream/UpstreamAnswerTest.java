package io.nexuscore.tiers.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.buffer.Buffer;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class UpstreamAnswerTest {

    private static UpstreamAnswer parse(String json) throws UpstreamAnswer.Malformed {
        return UpstreamAnswer.parse(Buffer.buffer(json));
    }

    /** Answers as OpenAI-compatible servers write them, fields in any order, extras skipped unread. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
        // json | text | has choice | prompt tokens (-1: no usage) | completion tokens
        "`{\"id\":\"x\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"hi\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":2,\"total_tokens\":9}}` | hi | true | 7 | 2",
        "`{\"usage\":{\"completion_tokens\":3,\"prompt_tokens\":11},\"choices\":[{\"message\":{\"content\":\"a \\\"q\\\" \\u00e9\"}}]}` | `a \"q\" é` | true | 11 | 3",
        "`{\"choices\":[{\"text\":\"completion text\",\"logprobs\":{\"a\":[1,2,{\"b\":null}]}}]}` | completion text | true | -1 | 0",
        "`{\"choices\":[{\"message\":{\"role\":\"assistant\"}}],\"usage\":{\"prompt_tokens\":1.9}}` | `` | true | 1 | 0",
        "`{\"choices\":[{\"message\":{\"content\":\"first\"}},{\"message\":{\"content\":\"second\"}}]}` | first | true | -1 | 0",
        "`{\"choices\":[{\"message\":null,\"text\":\"fallback\"}],\"usage\":null}` | fallback | true | -1 | 0",
        "`{\"choices\":[{\"message\":{\"content\":null,\"tool_calls\":[{\"id\":\"t\"}]}}]}` | `` | true | -1 | 0",
        "`{\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1}}` | `` | false | 1 | 1",
        "`{\"object\":\"chat.completion\"}` | `` | false | -1 | 0",
        "`{\"choices\":null}` | `` | false | -1 | 0",
        "`{\"usage\":{\"prompt_tokens\":1},\"usage\":{\"prompt_tokens\":5}}` | `` | false | 5 | 0",
        // Past int's range: the largest count, never wrapped (4294967357 would wrap to 61, a nano score).
        "`{\"choices\":[{\"text\":\"t\"}],\"usage\":{\"prompt_tokens\":4294967357,\"completion_tokens\":1e400}}` | t | true | 2147483647 | 2147483647",
        "`{\"choices\":[{\"text\":\"t\"}],\"usage\":{\"prompt_tokens\":99999999999999999999999999}}` | t | true | 2147483647 | 0",
    })
    void readsTheFirstChoicesTextAndTheUsage(String json, String text, boolean hasChoice, int prompt, int completion)
            throws Exception {
        UpstreamAnswer answer = parse(json);
        assertEquals(text, answer.text());
        assertEquals(hasChoice, answer.hasChoice());
        assertEquals(prompt < 0 ? Optional.empty() : Optional.of(new UpstreamAnswer.Usage(prompt, completion)), answer.usage());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
        "`` | missing",
        "`not json` | Unrecognized token",
        "`[{\"choices\":[]}]` | the answer is an array",
        "`{\"choices\":[{\"message\":{\"content\":\"cut` | end-of-input",
        "`{\"choices\":{\"message\":{}}}` | choices is an object",
        "`{\"choices\":[1]}` | choices[0] is a number",
        "`{\"choices\":[{\"message\":\"hi\"}]}` | choices[0].message is a string",
        "`{\"choices\":[{\"message\":{\"content\":42}}]}` | choices[0].message.content is a number",
        "`{\"choices\":[{\"text\":[\"a\"]}]}` | choices[0].text is an array",
        "`{\"usage\":\"lots\"}` | usage is a string",
        "`{\"usage\":{\"prompt_tokens\":\"7\"}}` | usage.prompt_tokens is a string",
        "`{\"usage\":{\"completion_tokens\":-3}}` | usage.completion_tokens is -3",
        "`{\"usage\":{\"prompt_tokens\":-1e400}}` | usage.prompt_tokens is -1e400",
        "`{\"choices\":[]} {}` | trailing content",
    })
    void anythingElseIsMalformedSayingWhere(String json, String detail) {
        UpstreamAnswer.Malformed e = assertThrows(UpstreamAnswer.Malformed.class, () -> parse(json));
        assertTrue(e.getMessage().contains(detail), e.getMessage());
    }

    /**
     * JSON between systems is UTF-8 (RFC 8259 §8.1). Jackson detects UTF-16 and UTF-32 and reads them
     * as characters, without byte offsets: the model's splice would have cut the answer at -1.
     */
    @ParameterizedTest
    @CsvSource({"UTF-16LE", "UTF-16BE", "UTF-32LE", "UTF-32BE"})
    void anAnswerInAnotherEncodingThanUtf8IsMalformed(String charset) {
        String json = "{\"model\":\"up\",\"choices\":[{\"message\":{\"content\":\"hi\"}}]}";
        Buffer body = Buffer.buffer(json.getBytes(java.nio.charset.Charset.forName(charset)));
        UpstreamAnswer.Malformed e = assertThrows(UpstreamAnswer.Malformed.class, () -> UpstreamAnswer.parse(body, false));
        assertTrue(e.getMessage().contains("UTF-8"), e.getMessage());
    }

    /**
     * A chat answer goes on as the upstream wrote it with only its model value replaced, whatever
     * that value is and wherever it stands (multi-byte text before it included), or put in when
     * there is none; an answer naming its model twice is not passed on (null).
     */
    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
        "`{\"id\":\"é😀\",\"model\":\"up\",\"choices\":[{\"message\":{\"content\":\"x\"}}]}` | `{\"id\":\"é😀\",\"model\":\"nexus-small\",\"choices\":[{\"message\":{\"content\":\"x\"}}]}`",
        "`{\"choices\":[{\"message\":{\"content\":null,\"tool_calls\":[{\"id\":\"t\"}]},\"finish_reason\":\"tool_calls\"}], \"model\" : \"a\\\"b\" }` | `{\"choices\":[{\"message\":{\"content\":null,\"tool_calls\":[{\"id\":\"t\"}]},\"finish_reason\":\"tool_calls\"}], \"model\" : \"nexus-small\" }`",
        "`{\"model\":{\"name\":\"x\",\"v\":[1]},\"choices\":[{\"text\":\"t\"}]}` | `{\"model\":\"nexus-small\",\"choices\":[{\"text\":\"t\"}]}`",
        "`{\"model\":42,\"choices\":[{\"text\":\"t\"}]}` | `{\"model\":\"nexus-small\",\"choices\":[{\"text\":\"t\"}]}`",
        "`{\"model\":null,\"choices\":[{\"text\":\"t\"}]}` | `{\"model\":\"nexus-small\",\"choices\":[{\"text\":\"t\"}]}`",
        "` {\"choices\":[{\"text\":\"t\"}]}` | ` {\"model\":\"nexus-small\",\"choices\":[{\"text\":\"t\"}]}`",
        "`{\"model\":\"a\",\"choices\":[{\"text\":\"t\"}],\"model\":\"b\"}` | ``",
    })
    void aChatAnswerKeepsEveryByteButItsModel(String json, String expected) throws Exception {
        Buffer body = Buffer.buffer(json);
        byte[] model = "\"nexus-small\"".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        Buffer passed = UpstreamAnswer.parse(body, false).withModel(body, model);
        assertEquals(expected.isEmpty() ? null : expected, passed == null ? null : passed.toString());
        assertEquals("", UpstreamAnswer.parse(body, false).text(), "the text is not read when the answer goes on as it is");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
        "`{\"choices\":[{\"message\":{\"content\":null},\"finish_reason\":\"tool_calls\"},{\"finish_reason\":\"stop\"}]}` | tool_calls",
        "`{\"choices\":[{\"finish_reason\":\"length\",\"text\":\"t\"}]}` | length",
        "`{\"choices\":[{\"text\":\"t\",\"finish_reason\":null}]}` | ",
        "`{\"choices\":[{\"text\":\"t\",\"finish_reason\":{\"odd\":[1]}}],\"model\":\"m\"}` | ",
    })
    void readsTheFirstChoicesFinishReasonWhenItIsAString(String json, String reason) throws Exception {
        assertEquals(reason, parse(json).finishReason());
    }
}
