package io.nexuscore.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.transport.Transport;
import org.junit.jupiter.api.Test;

class IoTransportTest {

    /** auto takes the first engine the machine allows, in the order io_uring, epoll, NIO. */
    @Test
    void autoPrefersIoUringThenEpoll() {
        Transport expected = Transport.IO_URING.available() ? Transport.IO_URING
                : Transport.EPOLL.available() ? Transport.EPOLL : Transport.NIO;
        Transport chosen = IoTransport.AUTO.select();
        assertEquals(expected, chosen);
        if (chosen == Transport.IO_URING) {
            assertNull(IoTransport.AUTO.fallbackReason(chosen));
        } else {
            assertTrue(IoTransport.AUTO.fallbackReason(chosen).startsWith("io_uring unavailable: "));
        }
        assertNull(IoTransport.EPOLL.fallbackReason(Transport.EPOLL), "only auto falls back");
    }

    @Test
    void aNamedEngineIsThatEngineOrARefusalWithItsReason() {
        for (IoTransport named : new IoTransport[] {IoTransport.IO_URING, IoTransport.EPOLL}) {
            if (named.available()) {
                assertEquals(named.name().toLowerCase(java.util.Locale.ROOT), IoTransport.nameOf(named.select()));
            } else {
                IllegalStateException e = assertThrows(IllegalStateException.class, named::select);
                assertTrue(e.getMessage().contains("is unavailable on this machine"), e.getMessage());
            }
        }
        assertEquals(Transport.NIO, IoTransport.NIO.select());
    }
}
