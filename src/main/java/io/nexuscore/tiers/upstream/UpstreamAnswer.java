package io.nexuscore.tiers.upstream;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.nexuscore.http.LoopJson;
import io.nexuscore.tiers.ChatFields;
import io.vertx.core.buffer.Buffer;
import java.io.IOException;
import java.util.Optional;

/**
 * The parts of an OpenAI chat (or completion) answer the router uses, read in one streaming pass:
 * the first choice's text ({@code message.content}, or {@code text} for completions) and the
 * usage's {@code prompt_tokens} and {@code completion_tokens}. Everything else is skipped unread
 * instead of being built into a JSON tree (the tree cost more than any other step of the upstream
 * path in the event loops' profile).
 *
 * <p>Reads like the tree it replaces: a missing {@code content}/{@code text} is "", missing token
 * counts are 0, fractions are truncated, counts past int's range are Integer.MAX_VALUE (the tree
 * wrapped them), a repeated key's last value wins; a negative count, any other type where
 * these fields stand, or anything that is not one JSON object, is {@link Malformed}.
 *
 * <p>It also notes where the top-level {@code model} value stands, so a chat answer can go to the
 * client as the upstream wrote it (tool calls, finish reason, logprobs, fields this does not know)
 * with only that value replaced: {@link #withModel}.
 *
 * @param text         the first choice's text; "" when the parse was asked not to read it
 * @param finishReason the first choice's {@code finish_reason} when it is a string, else null
 * @param usage        empty when the answer carries no {@code usage} object
 * @param model        where the model value stands; null when the answer names its model more than once
 */
record UpstreamAnswer(String text, String finishReason, boolean hasChoice, Optional<Usage> usage, ModelSlot model) {

    /** What the router reads of choices[0]. */
    private record Choice(String text, String finishReason) {
        static final Choice NONE = new Choice("", null);
    }

    record Usage(int promptTokens, int completionTokens) {
    }

    /**
     * Bytes [from, to) of the answer hold its top-level model value; when it names none, from == to
     * is just inside its opening brace, where a model field goes in.
     */
    record ModelSlot(int from, int to, boolean present) {
    }

    private static final byte[] MODEL_KEY = "\"model\":".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    /**
     * {@code body} (the bytes this parsed) with its model value replaced by {@code modelValue} (a JSON
     * value, e.g. {@code "nexus-small"} with its quotes), or put in when it has none; every other
     * byte as it came. Null when the answer names its model twice: which one a client reads is not
     * this router's to guess, so such an answer is not passed on as it is.
     */
    Buffer withModel(Buffer body, byte[] modelValue) {
        if (model == null) {
            return null;
        }
        Buffer out = Buffer.buffer(body.length() + modelValue.length + MODEL_KEY.length + 1)
                .appendBuffer(body, 0, model.from());
        if (model.present()) {
            out.appendBytes(modelValue);
        } else {
            out.appendBytes(MODEL_KEY).appendBytes(modelValue).appendByte((byte) ',');
        }
        return out.appendBuffer(body, model.to(), body.length() - model.to());
    }

    /** The answer is not the JSON this reads. */
    static final class Malformed extends Exception {
        Malformed(String message) {
            super(message);
        }
    }

    private static final JsonFactory JSON = LoopJson.FACTORY;

    static UpstreamAnswer parse(Buffer body) throws Malformed {
        return parse(body, true);
    }

    /**
     * @param readText false when the caller passes the answer on as it is and never reads the text:
     *                 the content is then checked for its type and skipped, not decoded into a String
     */
    static UpstreamAnswer parse(Buffer body, boolean readText) throws Malformed {
        try (JsonParser p = LoopJson.parser(JSON, body)) {
            expect(p.nextToken(), JsonToken.START_OBJECT, "the answer");
            int inside = ChatFields.byteOffset(p, p.currentTokenLocation()) + 1;
            ModelSlot model = new ModelSlot(inside, inside, false);
            Choice choice = Choice.NONE;
            boolean hasChoice = false;
            Usage usage = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken value = p.nextToken();
                switch (field) {
                    case "model" -> {
                        ChatFields.Span at = ChatFields.valueSpan(p, value);
                        model = model == null || model.present() ? null : new ModelSlot(at.from(), at.to(), true);
                    }
                    case "choices" -> {
                        if (value == JsonToken.VALUE_NULL) {
                            hasChoice = false;
                            break;
                        }
                        expect(value, JsonToken.START_ARRAY, "choices");
                        hasChoice = false;
                        choice = Choice.NONE;
                        JsonToken first = p.nextToken();
                        if (first != JsonToken.END_ARRAY) {
                            expect(first, JsonToken.START_OBJECT, "choices[0]");
                            hasChoice = true;
                            choice = choice(p, readText);
                            while (p.nextToken() != JsonToken.END_ARRAY) {
                                p.skipChildren(); // later choices: the router answers with the first
                            }
                        }
                    }
                    case "usage" -> usage = value == JsonToken.VALUE_NULL ? null : usage(p, value);
                    default -> p.skipChildren();
                }
            }
            expect(p.currentToken(), JsonToken.END_OBJECT, "the answer");
            if (p.nextToken() != null) {
                throw new Malformed("trailing content after the answer's object");
            }
            return new UpstreamAnswer(choice.text(), choice.finishReason(), hasChoice, Optional.ofNullable(usage), model);
        } catch (IOException e) { // JsonParseException and truncated input
            throw new Malformed(e.getMessage() != null ? e.getMessage() : e.toString());
        }
    }

    /**
     * Inside choices[0]: message.content if there is a message, else text; and finish_reason.
     * Leaves the parser on its END_OBJECT.
     */
    private static Choice choice(JsonParser p, boolean readText) throws IOException, Malformed {
        String content = null;
        boolean hasMessage = false;
        String text = "";
        String finishReason = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken value = p.nextToken();
            switch (field) {
                case "message" -> {
                    if (value == JsonToken.VALUE_NULL) {
                        hasMessage = false;
                        break;
                    }
                    expect(value, JsonToken.START_OBJECT, "choices[0].message");
                    hasMessage = true;
                    content = "";
                    while (p.nextToken() == JsonToken.FIELD_NAME) {
                        String name = p.currentName();
                        JsonToken v = p.nextToken();
                        if (name.equals("content")) {
                            content = string(p, v, "choices[0].message.content", readText);
                        } else {
                            p.skipChildren();
                        }
                    }
                }
                case "text" -> text = string(p, value, "choices[0].text", readText);
                case "finish_reason" -> {
                    finishReason = value == JsonToken.VALUE_STRING ? p.getText() : null;
                    p.skipChildren();
                }
                default -> p.skipChildren();
            }
        }
        return new Choice(hasMessage ? content : text, finishReason);
    }

    private static Usage usage(JsonParser p, JsonToken value) throws IOException, Malformed {
        expect(value, JsonToken.START_OBJECT, "usage");
        int prompt = 0;
        int completion = 0;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken v = p.nextToken();
            switch (field) {
                case "prompt_tokens" -> prompt = integer(p, v, "usage.prompt_tokens");
                case "completion_tokens" -> completion = integer(p, v, "usage.completion_tokens");
                default -> p.skipChildren();
            }
        }
        return new Usage(prompt, completion);
    }

    private static String string(JsonParser p, JsonToken value, String where, boolean read)
            throws IOException, Malformed {
        if (value == JsonToken.VALUE_NULL) {
            return "";
        }
        expect(value, JsonToken.VALUE_STRING, where);
        return read ? p.getText() : "";
    }

    /**
     * A token count: a negative one is malformed; one past int's range (a hostile or broken upstream)
     * counts as Integer.MAX_VALUE, never wrapped into a small or negative number.
     */
    private static int integer(JsonParser p, JsonToken value, String where) throws IOException, Malformed {
        if (value == JsonToken.VALUE_NULL) {
            return 0;
        }
        if (value != JsonToken.VALUE_NUMBER_INT && value != JsonToken.VALUE_NUMBER_FLOAT) {
            throw new Malformed(where + " is " + describe(value) + ", expected a number");
        }
        double count = p.getDoubleValue(); // big integers and 1e400 included (the latter as infinity)
        if (!(count >= 0)) {
            throw new Malformed(where + " is " + p.getText() + ", expected a count of at least 0");
        }
        return count >= Integer.MAX_VALUE ? Integer.MAX_VALUE : (int) count;
    }

    private static void expect(JsonToken actual, JsonToken wanted, String where) throws Malformed {
        if (actual != wanted) {
            throw new Malformed(where + " is " + describe(actual) + ", expected " + describe(wanted));
        }
    }

    private static String describe(JsonToken token) {
        if (token == null) {
            return "missing";
        }
        return switch (token) {
            case START_OBJECT, END_OBJECT -> "an object";
            case START_ARRAY, END_ARRAY -> "an array";
            case VALUE_STRING -> "a string";
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "a number";
            case VALUE_TRUE, VALUE_FALSE -> "a boolean";
            case VALUE_NULL -> "null";
            default -> token.name();
        };
    }
}
