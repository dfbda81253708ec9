package io.nexuscore.dataplane;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nexuscore.classify.Tier;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

class TenantFloorMarkTest {

    @ParameterizedTest
    @EnumSource(Tier.class)
    void everyTierRoundTrips(Tier tier) {
        assertEquals(Optional.of(tier), TenantFloorMark.decode(TenantFloorMark.encode(tier)));
    }

    @Test
    void encodingIsMagicPlusWirePlusOne() {
        assertEquals(0x4e58_0001, TenantFloorMark.encode(Tier.NANO));
        assertEquals(0x4e58_0003, TenantFloorMark.encode(Tier.LARGE));
    }

    /** Unmarked sockets, marks other software set, and out-of-range values carry no floor. */
    @ParameterizedTest
    @ValueSource(ints = {0, 1, 0x1234, 0x4e58_0000, 0x4e58_0004, 0x4e59_0001, 0xffff_ffff})
    void foreignOrEmptyMarksCarryNoFloor(int mark) {
        assertEquals(Optional.empty(), TenantFloorMark.decode(mark));
    }
}
