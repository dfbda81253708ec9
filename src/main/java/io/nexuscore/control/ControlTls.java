package io.nexuscore.control;

import io.nexuscore.config.ControlConfig;
import io.nexuscore.config.PrivateFile;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.PemKeyCertOptions;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * HTTPS on the control listener ({@code control.tls}): the bearer token must not cross a network in
 * clear. HTTP/1.1 only, as on the plain listener (no ALPN h2), so the strict framing decoder still
 * takes the default decoder's place.
 */
final class ControlTls {

    private ControlTls() {
    }

    /** The private key must be root's own 0600 file, not a symlink: a key others can read is no key. */
    static void checkKey(ControlConfig.Tls tls) {
        try {
            PrivateFile.check(tls.keyFile());
        } catch (IOException e) {
            throw new UncheckedIOException("control.tls.keyFile: " + e.getMessage(), e);
        }
    }

    static void apply(ControlConfig.Tls tls, HttpServerOptions options) {
        options.setSsl(true).setUseAlpn(false)
                .setKeyCertOptions(new PemKeyCertOptions().setCertPath(tls.certFile().toString())
                        .setKeyPath(tls.keyFile().toString()));
    }
}
