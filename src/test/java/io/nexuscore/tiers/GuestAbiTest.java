package io.nexuscore.tiers;

import static io.nexuscore.tiers.TestTiers.MB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.classify.Tier;
import io.nexuscore.config.TierConfig.Engine;
import io.nexuscore.tiers.wasm.CoreInstance;
import io.nexuscore.tiers.wasm.GuestAbi;
import io.nexuscore.tiers.wasm.GuestTrap;
import io.nexuscore.tiers.wasm.WasmEngine;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.function.Supplier;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/** The host treats the guest's answer as untrusted, and tells memory traps from other traps. */
class GuestAbiTest {

    /** A fake guest whose return area is whatever the test says: 1 page of memory, 64 KiB. */
    static final class LyingGuest implements CoreInstance {
        final byte[] memory = new byte[65_536];
        final int retptr;

        LyingGuest(int retptr, int textPtr, int textLen, int tier) {
            this(retptr, textPtr, textLen, tier, 1);
        }

        LyingGuest(int retptr, int textPtr, int textLen, int tier, int score) {
            this.retptr = retptr;
            if (retptr >= 0 && retptr + 24 <= memory.length) {
                ByteBuffer.wrap(memory).order(ByteOrder.LITTLE_ENDIAN)
                        .putInt(retptr, textPtr).putInt(retptr + 4, textLen).putInt(retptr + 8, 1).putInt(retptr + 12, 1)
                        .putInt(retptr + 16, score).put(retptr + 20, (byte) tier);
            }
        }

        @Override
        public int id() {
            return 7;
        }

        @Override
        public long call(Export export, long... args) {
            return switch (export) {
                case REALLOC -> 1024;
                case HANDLE -> Integer.toUnsignedLong(retptr);
                case POST_HANDLE -> 0;
            };
        }

        @Override
        public void write(int address, byte[] bytes) {
            System.arraycopy(bytes, 0, memory, address, bytes.length);
        }

        @Override
        public byte[] read(int address, int length) {
            byte[] out = new byte[length];
            System.arraycopy(memory, address, out, 0, length);
            return out;
        }

        @Override
        public void restore(byte[] image) {
            System.arraycopy(image, 0, memory, 0, image.length);
        }

        @Override
        public int memoryPages() {
            return 1;
        }

        @Override
        public int maxMemoryPages() {
            return 1;
        }

        @Override
        public <T> T withDeadline(long deadlineMs, Supplier<T> body) {
            return body.get();
        }

        @Override
        public void close() {
        }
    }

    @ParameterizedTest(name = "retptr {0}, text ({1}, {2}), tier {3}, score {4}")
    @CsvSource({
            "2, 100, 4, 0, 1",           // misaligned return area
            "65532, 100, 4, 0, 1",       // return area runs off the end of memory
            "65520, 100, 4, 0, 1",       // return area (24 bytes) runs off the end of memory
            "-4, 100, 4, 0, 1",          // return area at 4 GiB - 4
            "256, 65000, 1000, 0, 1",    // text runs off the end of memory
            "256, -16, 32, 0, 1",        // text pointer wraps
            "256, 100, -1, 0, 1",        // text length 4 GiB - 1
            "256, 100, 4, 3, 1",         // not a tier
            "256, 100, 4, 0, 256",       // score above 255
            "256, 100, 4, 0, -1",        // score 4 GiB - 1
    })
    void aGuestThatBreaksTheAbiIsAGuestTrap(int retptr, int textPtr, int textLen, int tier, int score) {
        GuestTrap trap = assertThrows(GuestTrap.class, () -> GuestAbi.call(new LyingGuest(retptr, textPtr, textLen, tier, score),
                TestTiers.request("hi")));
        assertEquals(GuestTrap.Kind.TRAP, trap.kind());
        assertTrue(trap.getMessage().contains("broke the ABI"), trap.getMessage());
    }

    @ParameterizedTest(name = "a well-formed answer is lifted")
    @CsvSource({"256, 100, 4, 2"})
    void aWellFormedAnswerIsLifted(int retptr, int textPtr, int textLen, int tier) {
        LyingGuest guest = new LyingGuest(retptr, textPtr, textLen, tier, 200);
        System.arraycopy("okay".getBytes(), 0, guest.memory, textPtr, 4);
        GuestAbi.GuestAnswer answer = GuestAbi.call(guest, TestTiers.request("hi"));
        assertEquals("okay", answer.text());
        assertEquals(Tier.LARGE, answer.observedTier());
        assertEquals(200, answer.observedScore());
    }

    /** A trap that is not a failed memory.grow (here: the guest rejects a bad alignment) is TRAP, not MEMORY_LIMIT. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Engine.class)
    void otherTrapsAreNotMemoryLimits(Engine kind) {
        try (WasmEngine engine = TestTiers.engine(kind);
             CoreInstance instance = engine.compile("nano", TestTiers.guest(Tier.NANO)).instantiate(1, (int) (16 * MB / 65_536))) {
            GuestTrap trap = assertThrows(GuestTrap.class, () -> instance.withDeadline(1000,
                    () -> instance.call(CoreInstance.Export.REALLOC, 0, 0, 3, 16)));
            assertEquals(GuestTrap.Kind.TRAP, trap.kind(), trap.getMessage());
        }
    }
}
