package io.nexuscore.tenants.limits;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * OpenAI's rate-limit headers, as its API sends them on every answer: {@code x-ratelimit-limit-requests},
 * {@code x-ratelimit-remaining-requests}, {@code x-ratelimit-reset-requests} and the same three for
 * {@code -tokens}; resets in OpenAI's duration format (Go's {@code time.Duration} text: {@code "1s"},
 * {@code "6m0s"}, {@code "59.8s"}, {@code "20ms"}). The SDKs retry on the 429's {@code Retry-After};
 * these are for clients that pace themselves (and the SDKs' raw-response accessors).
 */
public final class RateLimitHeaders {

    public static final String LIMIT_REQUESTS = "x-ratelimit-limit-requests";
    public static final String REMAINING_REQUESTS = "x-ratelimit-remaining-requests";
    public static final String RESET_REQUESTS = "x-ratelimit-reset-requests";
    public static final String LIMIT_TOKENS = "x-ratelimit-limit-tokens";
    public static final String REMAINING_TOKENS = "x-ratelimit-remaining-tokens";
    public static final String RESET_TOKENS = "x-ratelimit-reset-tokens";

    private RateLimitHeaders() {
    }

    /** The headers for {@code state}: the requests ones when a request limit is set, the tokens ones likewise. */
    public static Map<String, String> of(LimitCounter.RateState state) {
        Map<String, String> headers = new LinkedHashMap<>();
        if (state.requestLimit() > 0) {
            headers.put(LIMIT_REQUESTS, Long.toString(state.requestLimit()));
            headers.put(REMAINING_REQUESTS, Long.toString(state.requestsRemaining()));
            headers.put(RESET_REQUESTS, duration(state.requestsResetNanos()));
        }
        if (state.tokenLimit() > 0) {
            headers.put(LIMIT_TOKENS, Long.toString(state.tokenLimit()));
            headers.put(REMAINING_TOKENS, Long.toString(state.tokensRemaining()));
            headers.put(RESET_TOKENS, duration(state.tokensResetNanos()));
        }
        return headers;
    }

    /**
     * A duration as OpenAI writes it (Go's format, to the millisecond): under a second in whole
     * milliseconds ({@code "20ms"}, {@code "0s"} for none), else hours and minutes when present and
     * seconds with up to three decimals, trailing zeros dropped ({@code "1s"}, {@code "59.8s"},
     * {@code "6m0s"}, {@code "1h0m0s"}).
     */
    public static String duration(long nanos) {
        long millis = (nanos + 999_999) / 1_000_000; // up: a reset never reads earlier than it is
        if (millis <= 0) {
            return "0s";
        }
        if (millis < 1000) {
            return millis + "ms";
        }
        StringBuilder out = new StringBuilder();
        long hours = millis / 3_600_000;
        long minutes = millis / 60_000 % 60;
        if (hours > 0) {
            out.append(hours).append('h');
        }
        if (hours > 0 || minutes > 0) {
            out.append(minutes).append('m');
        }
        long secondMillis = millis % 60_000;
        out.append(secondMillis / 1000);
        long fraction = secondMillis % 1000;
        if (fraction != 0) {
            // Three digits, trailing zeros dropped: 800 -> ".8", 50 -> ".05", 5 -> ".005".
            out.append('.').append(fraction / 100);
            if (fraction % 100 != 0) {
                out.append(fraction / 10 % 10);
                if (fraction % 10 != 0) {
                    out.append(fraction % 10);
                }
            }
        }
        return out.append('s').toString();
    }
}
