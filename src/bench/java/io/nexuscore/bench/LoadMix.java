package io.nexuscore.bench;

import io.nexuscore.classify.Tier;
import java.util.Locale;

/**
 * Request bodies that land in a known tier under the default thresholds (nano_max 60, small_max 130)
 * and that the reference guests see as the same tier (nano up to 16 prompt tokens, small up to 128):
 * POST /v1/tasks/echo (no keyword bonus), so the score is body bytes / 4.
 * <ul>
 *   <li>nano: ~100 bytes, 10 long words: score ~25</li>
 *   <li>small: ~400 bytes, 64 words: score ~95</li>
 *   <li>large: ~1300 bytes, 260 words: score 255</li>
 * </ul>
 */
final class LoadMix {

    static final String PATH = "/v1/tasks/echo";

    private LoadMix() {
    }

    static String body(Tier tier, int simulateMs) {
        String prompt = switch (tier) {
            case NANO -> words(10, "summarily");
            case SMALL -> words(64, "tier");
            case LARGE -> words(260, "big");
        };
        String extra = simulateMs > 0 ? String.format(Locale.ROOT, ",\"simulate_ms\":%d", simulateMs) : "";
        return "{\"prompt\":\"" + prompt + "\"" + extra + "}";
    }

    private static String words(int count, String word) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < count; i++) {
            if (i > 0) {
                sb.append(' ');
            }
            sb.append(word);
        }
        return sb.toString();
    }
}
