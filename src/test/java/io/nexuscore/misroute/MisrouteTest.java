package io.nexuscore.misroute;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** strict / banded / gross against thresholds 60/130 and a 20 % band (nano up to 72, small 48.8..156, large from 104.8). */
class MisrouteTest {

    static final Thresholds T = new Thresholds(60, 130);

    @ParameterizedTest(name = "assigned {0}, true score {1}: strict {3}, banded {4}, gross {5}")
    @CsvSource({
            // assigned, true score, observed, strict, banded, gross
            "nano,    0,   nano,  false, false, false",
            "nano,    60,  nano,  false, false, false",
            "nano,    61,  small, true,  false, false",   // a near miss is strict only
            "nano,    72,  small, true,  false, false",   // 60 * 1.2 = 72: still inside the band
            "nano,    73,  small, true,  true,  false",
            "nano,    200, large, true,  true,  true",
            "small,   49,  nano,  true,  false, false",   // 61 * 0.8 = 48.8
            "small,   48,  nano,  true,  true,  false",
            "small,   156, large, true,  false, false",   // 130 * 1.2 = 156
            "small,   157, large, true,  true,  false",
            "large,   255, large, false, false, false",   // the cap is no bound to overshoot
            "large,   105, small, true,  false, false",   // 131 * 0.8 = 104.8
            "large,   104, small, true,  true,  false",
            "large,   10,  nano,  true,  true,  true",
    })
    void judge(String assigned, int score, String observed, boolean strict, boolean banded, boolean gross) {
        assertEquals(new Misroute(strict, banded, gross),
                Misroute.judge(Tier.fromLabel(assigned), Tier.fromLabel(observed), score, T, 0.20));
    }

    @ParameterizedTest(name = "band {0}")
    @CsvSource({"0.0, true", "0.5, false"})
    void theBandIsConfigurable(double band, boolean banded) {
        assertEquals(banded, Misroute.judge(Tier.NANO, Tier.SMALL, 80, T, band).banded());
    }

    @ParameterizedTest(name = "no score: assigned {0}, observed {1}")
    @CsvSource({
            // assigned, observed, strict, gross
            "nano,  large, true,  true",
            "large, nano,  true,  true",
            "nano,  small, true,  false",
            "small, large, true,  false",
            "small, small, false, false",
    })
    void withoutAScoreOnlyStrictAndGrossAreJudged(String assigned, String observed, boolean strict, boolean gross) {
        Misroute m = Misroute.judge(Tier.fromLabel(assigned), Tier.fromLabel(observed), -1, T, 0.2);
        assertEquals(new Misroute(strict, false, gross), m);
    }
}
