package io.nexuscore.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Heartbeat entries come from a map anyone on the cluster's port can write: a bad one is skipped, never fatal. */
class FleetMembersTest {

    @Test
    void aHeartbeatEntryIsAMember() {
        assertEquals("n1", FleetService.member("{\"node\":\"n1\",\"mode\":\"kernel\"}").orElseThrow().getString("node"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"not json", "[1,2]", "{}", "{\"node\":7}", "{\"node\":null}", ""})
    void anEntryThatIsNotAHeartbeatIsSkipped(String text) {
        assertTrue(FleetService.member(text).isEmpty(), text);
    }
}
