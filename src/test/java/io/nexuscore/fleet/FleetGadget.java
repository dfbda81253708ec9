package io.nexuscore.fleet;

import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.Serializable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What a stranger on the cluster port sends to get code run in a router: a Java-serialized object
 * whose {@code readObject} does something. Here it only records that it ran (a counter in this JVM,
 * a file for a router process), so a test can tell "refused before deserializing" from "ran".
 */
final class FleetGadget implements Serializable {

    private static final long serialVersionUID = 1L;
    static final AtomicInteger RAN = new AtomicInteger();

    /** A file the gadget writes when it runs (empty: none). */
    private final String marker;

    FleetGadget(String marker) {
        this.marker = marker;
    }

    private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
        in.defaultReadObject();
        RAN.incrementAndGet();
        if (!marker.isEmpty()) {
            Files.writeString(Path.of(marker), "deserialized in pid " + ProcessHandle.current().pid() + "\n",
                    java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        }
    }
}
