package io.nexuscore.dataplane;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.nexuscore.http.LoopJson;
import io.nexuscore.tiers.ChatFields;
import io.nexuscore.tiers.TierRequest;
import io.vertx.core.buffer.Buffer;
import java.io.IOException;

/**
 * The common, well-formed inference request read in one streaming pass, without the JSON tree
 * {@link InferenceRequest#parseTree} builds (the tree was the largest step of the data plane's own
 * work on the event loop: ~6 % of its samples on the Wasm path).
 *
 * <p>It only ever accepts: anything off the common path (malformed JSON, a field of an unexpected
 * type or out of range, a repeated field the request reads, content parts, a test hook on a router
 * without them, trailing content) makes {@link #parse} return null, and the tree parse then decides
 * with its exact errors. So the two agree by construction on every input the fast path declines,
 * and {@code InferenceRequestTest} holds them equal on those it accepts. Same read limits as the
 * tree's (Vert.x's, {@link LoopJson#REQUESTS}), the same string decoding, over the body's bytes in place.
 */
final class StreamingRequestParser {

    private StreamingRequestParser() {
    }

    /** Thrown inside the pass to decline the request to the tree parse. */
    private static final class Declined extends Exception {
        static final Declined INSTANCE = new Declined();

        private Declined() {
            super(null, null, false, false);
        }
    }

    /**
     * A request the pass took, and for a chat where its fields an upstream tier rewrites stand
     * (found on the way, so forwarding needs no second pass over the body); null for other endpoints.
     */
    record Parsed(InferenceRequest request, ChatFields chatFields) {
    }

    /** The request, or null when the tree parse must decide. */
    static Parsed parse(Endpoint endpoint, Buffer body, boolean testHooks) {
        return parse(endpoint, body, testHooks, null);
    }

    /**
     * The request, or null when the tree parse must decide; {@code fields}, when given, meets every
     * top-level field on the way and is {@link RequestGuard.Fields#complete completed} when the
     * request is taken, so the guard needs no pass of its own.
     */
    static Parsed parse(Endpoint endpoint, Buffer body, boolean testHooks, RequestGuard.Fields fields) {
        Endpoint.Kind kind = endpoint.kind();
        if (body.length() == 0 || kind == Endpoint.Kind.MODELS || kind == Endpoint.Kind.EMBEDDINGS || kind.translated()) {
            return null;
        }
        try (JsonParser p = LoopJson.parser(LoopJson.REQUESTS, body)) {
            return read(p, endpoint, testHooks, fields);
        } catch (Declined | IOException | RuntimeException e) {
            return null; // malformed or unusual: the tree parse names what is wrong
        }
    }

    private static Parsed read(JsonParser p, Endpoint endpoint, boolean testHooks, RequestGuard.Fields fields)
            throws IOException, Declined {
        expect(p.nextToken() == JsonToken.START_OBJECT);
        int inside = ChatFields.byteOffset(p, p.currentTokenLocation()) + 1;
        ChatFields.Span modelAt = null;
        ChatFields.Span streamAt = null;
        ChatFields.Span optionsAt = null;
        boolean chat = endpoint.kind() == Endpoint.Kind.CHAT;
        String prompt = null;
        long maxTokens = 0;
        long simulateMs = 0;
        long simulateAlloc = 0;
        boolean simulateSpin = false;
        boolean stream = false;
        boolean includeUsage = false;
        String model = null;
        int seen = 0; // one bit per field read: a repeated one declines (the tree keeps the last)
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken value = p.nextToken();
            if (fields != null) {
                fields.field(field, p, value); // a bad count throws: declined, the guard's own pass names it
            }
            switch (field) {
                case "messages" -> {
                    if (chat) {
                        seen = once(seen, 1);
                        prompt = messages(p, value);
                    } else {
                        p.skipChildren();
                    }
                }
                case "prompt" -> {
                    if (!chat) {
                        seen = once(seen, 2);
                        expect(value == JsonToken.VALUE_STRING);
                        prompt = p.getText();
                    } else {
                        p.skipChildren();
                    }
                }
                case "max_tokens" -> {
                    seen = once(seen, 4);
                    maxTokens = integer(p, value, Integer.MAX_VALUE);
                }
                case "simulate_ms" -> {
                    expect(testHooks);
                    seen = once(seen, 8);
                    simulateMs = integer(p, value, Integer.MAX_VALUE);
                }
                case "simulate_alloc_bytes" -> {
                    expect(testHooks);
                    seen = once(seen, 16);
                    simulateAlloc = integer(p, value, Long.MAX_VALUE);
                }
                case "simulate_spin" -> {
                    expect(testHooks);
                    seen = once(seen, 32);
                    simulateSpin = bool(value);
                }
                case "stream" -> {
                    seen = once(seen, 64);
                    stream = bool(value);
                    streamAt = ChatFields.valueSpan(p, value);
                }
                case "stream_options" -> {
                    seen = once(seen, 128);
                    int from = ChatFields.byteOffset(p, p.currentTokenLocation());
                    includeUsage = streamOptions(p, value);
                    optionsAt = new ChatFields.Span(from, ChatFields.byteOffset(p, p.currentLocation()));
                }
                case "model" -> {
                    seen = once(seen, 256);
                    modelAt = ChatFields.valueSpan(p, value);
                    model = value == JsonToken.VALUE_STRING ? p.getText() : null;
                }
                default -> p.skipChildren();
            }
        }
        expect(p.currentToken() == JsonToken.END_OBJECT && p.nextToken() == null);
        expect(prompt != null); // messages or prompt missing: the tree names which
        if (fields != null) {
            fields.complete();
        }
        InferenceRequest request = new InferenceRequest(
                new TierRequest(endpoint.task(), prompt, (int) maxTokens,
                        new TierRequest.Simulation((int) simulateMs, simulateAlloc, simulateSpin)),
                stream, includeUsage, model);
        return new Parsed(request, chat ? new ChatFields(inside, modelAt, streamAt, optionsAt) : null);
    }

    /** Chat messages flattened as the tree does: each a {role: string, content: string or null}, joined by "\n". */
    private static String messages(JsonParser p, JsonToken value) throws IOException, Declined {
        expect(value == JsonToken.START_ARRAY);
        String first = null; // the common single message: its content is the prompt, not copied into a builder
        StringBuilder prompt = null;
        int count = 0;
        JsonToken token;
        while ((token = p.nextToken()) != JsonToken.END_ARRAY) {
            expect(token == JsonToken.START_OBJECT);
            boolean role = false;
            String content = null;
            boolean contentSeen = false;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken v = p.nextToken();
                if (field.equals("role")) {
                    expect(!role && v == JsonToken.VALUE_STRING);
                    role = true;
                } else if (field.equals("content")) {
                    expect(!contentSeen && (v == JsonToken.VALUE_STRING || v == JsonToken.VALUE_NULL));
                    contentSeen = true;
                    content = v == JsonToken.VALUE_STRING ? p.getText() : null;
                } else {
                    p.skipChildren();
                }
            }
            expect(role);
            String text = content != null ? content : "";
            if (count++ == 0) {
                first = text;
            } else {
                if (prompt == null) {
                    prompt = new StringBuilder(first);
                }
                prompt.append('\n').append(text);
            }
        }
        expect(count > 0);
        return prompt != null ? prompt.toString() : first;
    }

    /** An integer in 0..max, or null (0); fractions and big integers decline (the tree judges them). */
    private static long integer(JsonParser p, JsonToken value, long max) throws IOException, Declined {
        if (value == JsonToken.VALUE_NULL) {
            return 0;
        }
        expect(value == JsonToken.VALUE_NUMBER_INT && p.getNumberType() != JsonParser.NumberType.BIG_INTEGER);
        long n = p.getLongValue();
        expect(n >= 0 && n <= max);
        return n;
    }

    private static boolean bool(JsonToken value) throws Declined {
        if (value == JsonToken.VALUE_NULL) {
            return false;
        }
        expect(value == JsonToken.VALUE_TRUE || value == JsonToken.VALUE_FALSE);
        return value == JsonToken.VALUE_TRUE;
    }

    private static boolean streamOptions(JsonParser p, JsonToken value) throws IOException, Declined {
        if (value == JsonToken.VALUE_NULL) {
            return false;
        }
        expect(value == JsonToken.START_OBJECT);
        boolean include = false;
        boolean seen = false;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken v = p.nextToken();
            if (field.equals("include_usage")) {
                expect(!seen);
                seen = true;
                include = bool(v);
            } else {
                p.skipChildren();
            }
        }
        return include;
    }

    private static int once(int seen, int bit) throws Declined {
        expect((seen & bit) == 0);
        return seen | bit;
    }

    private static void expect(boolean holds) throws Declined {
        if (!holds) {
            throw Declined.INSTANCE;
        }
    }
}
