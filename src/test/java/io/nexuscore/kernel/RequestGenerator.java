package io.nexuscore.kernel;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Random;

/**
 * Random HTTP request heads for parity tests and benchmarks: keywords in random case and place
 * (request line or headers), long lines, Content-Length present/absent/odd, LF-only heads,
 * truncation, occasional garbage. Payloads stay under 3000 bytes (one XDP test-run frame).
 */
public final class RequestGenerator {

    private static final String[] METHODS = {"GET", "POST", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "get", "PROPFINDX"};
    private static final String[] WORDS = {"sum", "ref", "gen", "ana", "summarize", "Reference", "GENERATE", "analysis",
        "v1", "chat", "completions", "tasks", "su", "re", "ge", "an", "x", "models", "SuM", "aNa"};

    private final Random random;

    public RequestGenerator(Random random) {
        this.random = random;
    }

    public byte[] next() {
        if (random.nextInt(50) == 0) {
            byte[] garbage = new byte[random.nextInt(40)];
            random.nextBytes(garbage);
            return garbage;
        }
        String eol = random.nextInt(10) == 0 ? "\n" : "\r\n";
        StringBuilder head = new StringBuilder();
        head.append(METHODS[random.nextInt(METHODS.length)]).append(' ').append(path()).append(" HTTP/1.1").append(eol);
        head.append("Host: router").append(eol);
        if (random.nextBoolean()) {
            head.append("User-Agent: ").append(words(4)).append(eol);
        }
        int body = random.nextInt(10) == 0 ? random.nextInt(2000) : random.nextInt(600);
        switch (random.nextInt(6)) {
            case 0 -> head.append("Content-Length: ").append(body).append(eol);
            case 1 -> head.append("content-LENGTH:").append(random.nextBoolean() ? "  " : "\t").append(body).append(eol);
            case 2 -> head.append("Content-Length: ").append(random.nextInt(1000000)).append(eol);
            case 3 -> head.append("Content-Length: none").append(eol);
            default -> { }
        }
        if (random.nextInt(4) == 0) {
            head.append("X-Pad: ").append("p".repeat(random.nextInt(900))).append(eol);
        }
        head.append("Accept: */*").append(eol).append(eol);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(head.toString().getBytes(StandardCharsets.ISO_8859_1));
        out.writeBytes(random.nextInt(3) == 0 ? "b".repeat(body).getBytes(StandardCharsets.ISO_8859_1) : jsonBody(body));
        byte[] payload = out.toByteArray();
        if (random.nextInt(8) == 0) {
            payload = java.util.Arrays.copyOf(payload, random.nextInt(payload.length) + 1); // truncated segment
        }
        return payload.length > 2900 ? java.util.Arrays.copyOf(payload, 2900) : payload;
    }

    private static final String[] OPENINGS = {"{\"prompt\":\"", "{\"prompt\": \"", "{\"prompt\" :\t\"",
        "{\"model\":\"m\",\"max_tokens\":16,\"messages\":[{\"role\":\"user\",\"content\":\"",
        "{\"messages\":[{\"role\":\"system\",\"content\": \"", "{\"messages\":[{\"content\":[{\"type\":\"text\",\"text\":\"",
        "{\"prompt\":null,\"x\":\"", "{\"prompt\"", "{\"content\"::\"", "{\"promptx\":\"",
        // a system prompt, content parts or null before the question: every string key is scanned
        "{\"messages\":[{\"role\":\"system\",\"content\":\"Be brief, sum up.\"},{\"role\":\"user\",\"content\":\"",
        "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]},{\"role\":\"user\",\"content\":\"",
        "{\"messages\":[{\"role\":\"system\",\"content\":null},{\"content\":\"\u00e9\"},{\"content\":\"a\"},{\"content\":\"b\"},"
            + "{\"content\":\"c\"},{\"content\":\"d\"},{\"content\":\"e\"},{\"content\":\"f\"},{\"role\":\"user\",\"content\":\""};
    private static final String[] PIECES = {"the ", "Summarize ", "refine", "GENERAL ", "banana", "42", "3.14 ", ", ",
        "!", "\\n", "\\\"", "\\\\", "\\u00e9", "\\u2019s ", "\u00e9t\u00e9 ", "\u4e2d\u6587", "  ", "\t", "x_y", "{}[]",
        // scripts with their own block weights, raw and escaped (upper-case hex too), a pair, a bad escape
        "\u03b1\u03b2\u03b3 ", "\\u03B1\\u03b2", "\u0939\u093f\u0928\u094d\u0926\u0940 ", "\\u0939\\u093F",
        "\u0d15\u0d47\u0d30\u0d33\u0d02", "\u0565\u0580", "\u05e9\u05dc", "\ud83d\ude00", "\\ud83d\\ude00",
        "\\u0zz9", "\u0e44\u0e17\u0e22", "\u1ea1i "};

    /** A JSON body (UTF-8) of about {@code length} bytes: a prompt string in one of many shapes. */
    private byte[] jsonBody(int length) {
        StringBuilder b = new StringBuilder(OPENINGS[random.nextInt(OPENINGS.length)]);
        while (b.length() < length) {
            b.append(PIECES[random.nextInt(PIECES.length)]);
        }
        switch (random.nextInt(4)) {
            case 0 -> b.append("\"}");
            case 1 -> b.append("\"}]}");
            case 2 -> b.append("\"},{\"role\":\"user\",\"content\":\"").append("more words ".repeat(random.nextInt(20)))
                    .append("\"}],\"model\":\"gpt\"}");
            default -> { } // unterminated: the segment ends inside the string
        }
        return b.toString().getBytes(StandardCharsets.UTF_8);
    }

    private String path() {
        StringBuilder path = new StringBuilder();
        int segments = random.nextInt(10) == 0 ? 40 + random.nextInt(40) : 1 + random.nextInt(5);
        for (int i = 0; i < segments; i++) {
            path.append('/').append(WORDS[random.nextInt(WORDS.length)]);
        }
        return path.toString();
    }

    private String words(int n) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < n; i++) {
            s.append(WORDS[random.nextInt(WORDS.length)]).append(' ');
        }
        return s.toString().trim();
    }
}
