package io.nexuscore.kernel.libbpf;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;

/**
 * Routes libbpf's log (verifier output included) to the System.Logger
 * {@code io.nexuscore.kernel.libbpf}: warnings at WARNING, info at DEBUG, debug at TRACE (FINE and
 * FINER in java.util.logging, the default backend). The
 * callback object is held in a static field: jnr-ffi callbacks that get collected crash the JVM.
 */
final class LibBpfLog {

    private static final Logger LOG = System.getLogger("io.nexuscore.kernel.libbpf");
    private static final int LIBBPF_WARN = 0;
    private static final int LIBBPF_INFO = 1;
    /** Verifier logs can be long; their end says what failed, so a cut keeps the last part. */
    private static final int BUFFER_SIZE = 1 << 20;
    private static final int MAX_LOGGED = 32 * 1024;

    private static final LibBpf.PrintFn CALLBACK = LibBpfLog::print;
    private static boolean installed;

    private LibBpfLog() {
    }

    static synchronized void install() {
        if (!installed) {
            LibBpf.get().libbpf_set_print(CALLBACK);
            installed = true;
        }
    }

    private static int print(int level, Pointer format, Pointer args) {
        Level logLevel = level == LIBBPF_WARN ? Level.WARNING : level == LIBBPF_INFO ? Level.DEBUG : Level.TRACE;
        if (!LOG.isLoggable(logLevel)) {
            return 0;
        }
        Pointer buffer = Memory.allocateDirect(LibBpf.runtime(), BUFFER_SIZE);
        int n = LibC.get().vsnprintf(buffer, BUFFER_SIZE, format, args);
        if (n > 0) {
            String text = buffer.getString(0, Math.min(n, BUFFER_SIZE - 1), java.nio.charset.StandardCharsets.UTF_8);
            if (text.length() > MAX_LOGGED) {
                text = "(" + (text.length() - MAX_LOGGED) + " characters cut) ..." + text.substring(text.length() - MAX_LOGGED);
            }
            LOG.log(logLevel, text.stripTrailing());
        }
        return 0;
    }
}
